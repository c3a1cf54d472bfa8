package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/index"
)

// serveMemgate is the memgate tool process: it builds one index partition
// over the vector file, as the service holds it, and answers "run" lines
// like node/peer.mjs. "memgate" is the index with its default settings,
// "memgate-exact" the index held to the exact scan at every size (the
// full int8 scan: no inverted file, no projected first pass).
func serveMemgate(name, vpath, qpath string, dim, k int) error {
	data, err := readF32(vpath)
	if err != nil {
		return err
	}
	queries, err := readF32(qpath)
	if err != nil {
		return err
	}
	cfg := index.Config{}
	switch name {
	case "memgate":
	case "memgate-exact":
		cfg = exactConfig(cfg)
	default:
		return fmt.Errorf("unknown memgate tool %q", name)
	}
	n, nq := len(data)/dim, len(queries)/dim
	created := time.Now().UnixMicro()
	start := time.Now()
	p := index.NewPartition(cfg)
	for i := range n {
		e := index.Entry{ID: strconv.Itoa(i), Vector: data[i*dim : (i+1)*dim : (i+1)*dim], Status: memgate.StatusActive, CreatedAt: created}
		if err := p.Upsert(e); err != nil {
			return err
		}
	}
	p.Settle() // the inverted file, trained in the background
	// The first search finishes anything the partition builds lazily.
	if _, err := p.Search(index.Query{Vector: queries[:dim], K: k, Filter: index.Filter{Now: time.Now()}}); err != nil {
		return err
	}
	build := time.Since(start)
	w := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(w)
	res, err := p.Search(index.Query{Vector: queries[:dim], K: k, Filter: index.Filter{Now: time.Now()}})
	if err != nil {
		return err
	}
	if err := enc.Encode(map[string]any{"ready": true, "build_ms": float64(build.Microseconds()) / 1000, "approximate": res.Approximate, "projected": p.Stats().Projection}); err != nil {
		return err
	}
	w.Flush()
	sc := bufio.NewScanner(os.Stdin)
	now := time.Now()
	for sc.Scan() {
		if sc.Text() != "run" {
			break
		}
		lat := make([]int64, nq)
		ids := make([][]int, nq)
		for qi := range nq {
			q := index.Query{Vector: queries[qi*dim : (qi+1)*dim], K: k, Filter: index.Filter{Now: now}}
			t := time.Now()
			res, err := p.Search(q)
			lat[qi] = int64(time.Since(t))
			if err != nil {
				return err
			}
			for _, c := range res.Candidates {
				if c.VectorRank > 0 {
					id, _ := strconv.Atoi(c.ID)
					ids[qi] = append(ids[qi], id)
				}
			}
		}
		if err := enc.Encode(map[string]any{"lat_ns": lat, "ids": ids}); err != nil {
			return err
		}
		w.Flush()
	}
	return sc.Err()
}

// exactConfig holds a partition to the exact scan: no inverted file and no
// projected first pass.
func exactConfig(cfg index.Config) index.Config {
	cfg.ApproxMinRows = -1
	cfg.ProjectMinRows = -1
	return cfg
}
