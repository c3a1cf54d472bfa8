// Command indexmem measures the memory of one index partition: it builds a
// partition of -n random vectors (and, with -terms, analyzed terms) in a
// process that holds nothing else, and reports the peak RSS (VmHWM) and the
// RSS after a GC, each minus the process's idle RSS, per memory and against
// the partition's own estimate (Partition.Bytes).
//
//	cd bench && go run ./indexmem -n 100000
//	cd bench && go run ./indexmem -n 1000000 -mode load
//	cd bench && go run ./indexmem -n 100000 -mode load -dist lowrank
//
// -mode upsert builds the partition one Upsert at a time (the write path);
// -mode load builds it through an Index and a streaming loader (the path a
// cold partition takes). Vectors are generated into one reused buffer, so
// the harness itself holds about nothing.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/index"
)

func main() {
	n := flag.Int("n", 100000, "memories")
	dim := flag.Int("dim", 384, "dimensions")
	terms := flag.Int("terms", 0, "analyzed terms per memory (0: vectors only)")
	mode := flag.String("mode", "upsert", "upsert | load")
	asJSON := flag.Bool("json", false, "print JSON")
	dist := flag.String("dist", "gaussian", "vectors: gaussian (isotropic) or lowrank (x = A·z + N(0, 2²·I), z in 64 dimensions, as bench/peers -dist lowrank: the partition learns its projected first pass)")
	project := flag.Bool("project", true, "let the partition learn its projected first pass (false: ProjectMinRows -1)")
	flag.Parse()
	cfg := index.Config{}
	if !*project {
		cfg.ProjectMinRows = -1
	}
	if *dist != "gaussian" && *dist != "lowrank" {
		fail(fmt.Errorf("-dist %q: want gaussian or lowrank", *dist))
	}

	runtime.GC()
	idle := status("VmRSS")

	r := rand.New(rand.NewPCG(1, uint64(*n)))
	vec := make([]float32, *dim)
	var tbuf []string
	vocab := make([]string, 20000)
	for i := range vocab {
		vocab[i] = "w" + strconv.Itoa(i)
	}
	zipf := rand.NewZipf(r, 1.1, 2, uint64(len(vocab)-1))
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const latent = 64
	var a, z []float64
	if *dist == "lowrank" {
		a = make([]float64, *dim*latent)
		for i := range a {
			a[i] = r.NormFloat64()
		}
		z = make([]float64, latent)
	}
	entry := func(i int) index.Entry {
		if a != nil {
			for l := range z {
				z[l] = r.NormFloat64()
			}
			for j := range vec {
				var s float64
				for l, x := range z {
					s += a[j*latent+l] * x
				}
				vec[j] = float32(s + 2*r.NormFloat64())
			}
		} else {
			for j := range vec {
				vec[j] = float32(r.NormFloat64())
			}
		}
		tbuf = tbuf[:0]
		for range *terms {
			tbuf = append(tbuf, vocab[zipf.Uint64()])
		}
		t := created.Add(time.Duration(i) * time.Second)
		return index.Entry{
			ID: memgate.NewID(t), Vector: vec, Terms: tbuf,
			Kind: memgate.KindMessage, Source: memgate.SourceUser, Status: memgate.StatusActive,
			CreatedAt: t.UnixMicro(),
		}
	}

	start := time.Now()
	var bytes int64
	var search func() error
	switch *mode {
	case "upsert":
		p := index.NewPartition(cfg)
		for i := range *n {
			if err := p.Upsert(entry(i)); err != nil {
				fail(err)
			}
		}
		p.Settle() // background training, if any
		bytes = p.Bytes()
		search = func() error {
			_, err := p.Search(index.Query{Vector: vec, K: 10, Filter: index.Filter{Now: time.Now()}})
			return err
		}
	case "load":
		load := func(ctx context.Context, tenant, principal string, l *index.Load) (int64, error) {
			var e index.Entry // reused: Add copies what it keeps
			l.Expect(*n)
			for i := range *n {
				e = entry(i)
				if err := l.Add(&e); err != nil {
					return 0, err
				}
			}
			return 1, nil
		}
		cfg.MaxBytes = 64 << 30
		x, err := index.New(cfg, load)
		if err != nil {
			fail(err)
		}
		search = func() error {
			_, err := x.Search(context.Background(), "t", "p", index.Query{Vector: vec, K: 10, Filter: index.Filter{Now: time.Now()}})
			return err
		}
		if err := search(); err != nil {
			fail(err)
		}
		x.Settle() // background training, if any, counted
		bytes = x.Stats().Bytes
	default:
		fail(fmt.Errorf("-mode %q: want upsert or load", *mode))
	}
	build := time.Since(start)
	if err := search(); err != nil {
		fail(err)
	}
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	peak, rss := status("VmHWM")-idle, status("VmRSS")-idle
	res := map[string]any{
		"mode": *mode, "n": *n, "dim": *dim, "terms": *terms, "dist": *dist,
		"build_s":            build.Seconds(),
		"idle_rss_mib":       mib(idle),
		"peak_rss_mib":       mib(peak),
		"rss_after_gc_mib":   mib(rss),
		"heap_inuse_mib":     mib(int64(ms.HeapInuse)),
		"estimate_mib":       mib(bytes),
		"peak_per_memory_b":  peak / int64(*n),
		"rss_per_memory_b":   rss / int64(*n),
		"estimate_per_mem_b": bytes / int64(*n),
		"float32_per_mem_b":  4 * *dim,
		"peak_over_float32":  float64(peak) / float64(int64(*n)*int64(4**dim)),
		"estimate_over_peak": float64(bytes) / float64(peak),
	}
	runtime.KeepAlive(search)
	if *asJSON {
		json.NewEncoder(os.Stdout).Encode(res)
		return
	}
	fmt.Printf("mode %s, %s, %d memories × %d dims, %d terms each: build %.2f s\n", *mode, *dist, *n, *dim, *terms, build.Seconds())
	fmt.Printf("idle RSS %.1f MiB; peak RSS − idle %.1f MiB (%d B/memory, %.2f× float32); RSS after GC − idle %.1f MiB (%d B/memory)\n",
		mib(idle), mib(peak), peak/int64(*n), res["peak_over_float32"], mib(rss), rss/int64(*n))
	fmt.Printf("heap in use %.1f MiB; estimate %.1f MiB (%d B/memory, %.2f of peak)\n",
		mib(int64(ms.HeapInuse)), mib(bytes), bytes/int64(*n), res["estimate_over_peak"])
}

// status returns a field of /proc/self/status, in bytes.
func status(field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		fail(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				fail(err)
			}
			return kb << 10
		}
	}
	fail(fmt.Errorf("no %s in /proc/self/status", field))
	return 0
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

func fail(err error) {
	fmt.Fprintln(os.Stderr, "indexmem:", err)
	os.Exit(1)
}
