// Command peers times memgate's index against peer vector indexes
// (hnswlib-node, usearch, LanceDB; npm, pinned in node/) on the same vector
// files and the same queries, and writes a Markdown table: top-k latency
// p50 and p99, recall@k against float64 ground truth, build time and peak
// RSS of each tool.
//
// Each tool runs in its own process: memgate as this binary with -serve,
// the others as node/peer.mjs. The processes are built one after the other
// (so build times do not share the CPU), then timed in interleaved rounds:
// each round runs every query once on every tool, in a rotating order, so
// machine noise falls on all tools alike.
//
//	cd bench && go run ./peers -n 10000,100000 -tools memgate,hnswlib,usearch-hnsw,usearch-exact,lancedb
//
// See README.md for the setup (npm ci in node/) and the vector
// distribution.
package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	var (
		sizes   = flag.String("n", "10000,100000", "partition sizes, comma-separated")
		dim     = flag.Int("dim", 384, "vector dimension")
		dist    = flag.String("dist", "topics", "vector distribution: topics or lowrank (see README.md)")
		nq      = flag.Int("queries", 200, "queries")
		k       = flag.Int("k", 10, "top k")
		rounds  = flag.Int("rounds", 5, "interleaved rounds of all queries")
		toolsF  = flag.String("tools", "memgate,memgate-exact,hnswlib,usearch-hnsw,usearch-exact,lancedb", "tools, comma-separated")
		dir     = flag.String("dir", filepath.Join(os.TempDir(), "memgate-peers"), "directory for the vector files")
		nodeDir = flag.String("node", "peers/node", "directory of peer.mjs and its node_modules")
		out     = flag.String("out", "", "also write the table to this file")
		serve   = flag.String("serve", "", "internal: serve this tool (memgate or memgate-exact) on stdin/stdout")
		vecs    = flag.String("vectors", "", "internal: vector file for -serve")
		qs      = flag.String("queryfile", "", "internal: query file for -serve")
	)
	flag.Parse()
	if *serve != "" {
		if err := serveMemgate(*serve, *vecs, *qs, *dim, *k); err != nil {
			log.Fatal(err)
		}
		return
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		log.Fatal(err)
	}
	var b strings.Builder
	load, _ := os.ReadFile("/proc/loadavg")
	desc, ok := distributions[*dist]
	if !ok {
		log.Fatalf("-dist: unknown distribution %q", *dist)
	}
	fmt.Fprintf(&b, "%d queries, k=%d, %d interleaved rounds; vectors: %s; load average before: %s\n\n",
		*nq, *k, *rounds, desc, strings.TrimSpace(string(load)))
	fmt.Fprintf(&b, "| partition (%s) | tool | p50 | p99 | memgate p50 ÷ tool p50 | recall@%d | build | peak RSS |\n|---|---|---|---|---|---|---|---|\n", *dist, *k)
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			log.Fatalf("-n: %v", err)
		}
		rows, err := runSize(*dist, n, *dim, *nq, *k, *rounds, strings.Split(*toolsF, ","), *dir, *nodeDir)
		if err != nil {
			log.Fatal(err)
		}
		b.WriteString(rows)
	}
	load, _ = os.ReadFile("/proc/loadavg")
	fmt.Fprintf(&b, "\nload average after: %s\n", strings.TrimSpace(string(load)))
	fmt.Print(b.String())
	if *out != "" {
		if err := os.WriteFile(*out, []byte(b.String()), 0o644); err != nil {
			log.Fatal(err)
		}
	}
}

// distributions describes the vector distributions.
var distributions = map[string]string{
	"topics":  "synthetic `topics`: 200 topic directions N(0,I); each vector and query a random topic plus N(0, 1.2²·I) noise, seed 42 (index's BenchmarkSearch)",
	"lowrank": "synthetic `lowrank`: x = A·z + N(0, 2²·I), z ~ N(0, I₆₄), A a fixed 384×64 N(0,1) matrix, seed 42 (a continuum of intrinsic dimension 64)",
}

// generate returns n vectors and nq queries of the distribution.
func generate(dist string, n, nq, dim int) (data, queries []float32) {
	r := rand.New(rand.NewPCG(42, uint64(dim)))
	var draw func(out []float32)
	if dist == "lowrank" {
		const latent = 64
		a := make([]float64, dim*latent)
		for i := range a {
			a[i] = r.NormFloat64()
		}
		z := make([]float64, latent)
		draw = func(out []float32) {
			for i := range z {
				z[i] = r.NormFloat64()
			}
			for j := range out {
				var s float64
				for i, x := range z {
					s += a[j*latent+i] * x
				}
				out[j] = float32(s + 2*r.NormFloat64())
			}
		}
	} else {
		topics := make([]float32, 200*dim)
		for i := range topics {
			topics[i] = float32(r.NormFloat64())
		}
		draw = func(out []float32) {
			t := r.IntN(200)
			for j := range out {
				out[j] = topics[t*dim+j] + float32(1.2*r.NormFloat64())
			}
		}
	}
	// The queries first, then the vectors, from the one generator.
	queries = make([]float32, nq*dim)
	for i := range nq {
		draw(queries[i*dim : (i+1)*dim])
	}
	data = make([]float32, n*dim)
	for i := range n {
		draw(data[i*dim : (i+1)*dim])
	}
	return data, queries
}

func writeF32(path string, v []float32) error {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return os.WriteFile(path, b, 0o644)
}

func readF32(path string) ([]float32, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}

// truth is the exact top k of every query by float64 cosine, ties by row.
func truth(data, queries []float32, dim, k int) [][]int {
	n, nq := len(data)/dim, len(queries)/dim
	norms := make([]float64, n)
	for i := range n {
		norms[i] = math.Sqrt(dot(data[i*dim:(i+1)*dim], data[i*dim:(i+1)*dim]))
	}
	out := make([][]int, nq)
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			type sc struct {
				row int
				cos float64
			}
			for qi := range next {
				q := queries[qi*dim : (qi+1)*dim]
				top := make([]sc, 0, k+1)
				for i := range n {
					c := dot(q, data[i*dim:(i+1)*dim]) / norms[i]
					if len(top) == k && c <= top[k-1].cos {
						continue
					}
					j, _ := slices.BinarySearchFunc(top, c, func(e sc, c float64) int {
						if e.cos > c {
							return -1
						}
						return 1
					})
					top = slices.Insert(top, j, sc{i, c})
					if len(top) > k {
						top = top[:k]
					}
				}
				ids := make([]int, len(top))
				for i, s := range top {
					ids[i] = s.row
				}
				out[qi] = ids
			}
		})
	}
	for qi := range nq {
		next <- qi
	}
	close(next)
	wg.Wait()
	return out
}

func dot(a, b []float32) float64 {
	var s float64
	for i, x := range a {
		s += float64(x) * float64(b[i])
	}
	return s
}

// tool is one running tool process.
type tool struct {
	name    string
	cmd     *exec.Cmd
	in      io.WriteCloser
	out     *bufio.Reader
	buildMs float64
	lat     []time.Duration
	recall  float64
	runs    int
	err     error
}

type readyMsg struct {
	Ready       bool    `json:"ready"`
	BuildMs     float64 `json:"build_ms"`
	Approximate bool    `json:"approximate"`
	Projected   int     `json:"projected"`
}

type runMsg struct {
	LatNs []int64 `json:"lat_ns"`
	IDs   [][]int `json:"ids"`
}

func runSize(dist string, n, dim, nq, k, rounds int, names []string, dir, nodeDir string) (string, error) {
	vpath := filepath.Join(dir, fmt.Sprintf("vectors-%s-%d-%d.f32", dist, n, dim))
	qpath := filepath.Join(dir, fmt.Sprintf("queries-%s-%d-%d-%d.f32", dist, n, nq, dim))
	data, queries := generate(dist, n, nq, dim)
	if err := writeF32(vpath, data); err != nil {
		return "", err
	}
	if err := writeF32(qpath, queries); err != nil {
		return "", err
	}
	log.Printf("n=%d: ground truth", n)
	gt := truth(data, queries, dim, k)
	data = nil

	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	var tools []*tool
	defer func() {
		for _, t := range tools {
			t.in.Close()
			t.cmd.Process.Kill()
			t.cmd.Wait()
		}
	}()
	for _, name := range names {
		name = strings.TrimSpace(name)
		var cmd *exec.Cmd
		if strings.HasPrefix(name, "memgate") {
			cmd = exec.Command(self, "-serve", name, "-vectors", vpath, "-queryfile", qpath, "-dim", strconv.Itoa(dim), "-k", strconv.Itoa(k))
		} else {
			cmd = exec.Command("node", filepath.Join(nodeDir, "peer.mjs"), name, vpath, qpath, strconv.Itoa(dim), strconv.Itoa(k))
		}
		cmd.Stderr = os.Stderr
		in, err := cmd.StdinPipe()
		if err != nil {
			return "", err
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			return "", err
		}
		log.Printf("n=%d: building %s", n, name)
		if err := cmd.Start(); err != nil {
			return "", err
		}
		t := &tool{name: name, cmd: cmd, in: in, out: bufio.NewReaderSize(stdout, 1<<20)}
		tools = append(tools, t)
		var rd readyMsg
		if err := t.read(&rd); err != nil {
			t.err = fmt.Errorf("build: %w", err)
			continue
		}
		t.buildMs = rd.BuildMs
		if rd.Approximate {
			t.name += " (approximate)"
		} else if rd.Projected > 0 {
			t.name += fmt.Sprintf(" (projected, d %d)", rd.Projected)
		}
		log.Printf("n=%d: %s built in %.1f s", n, name, rd.BuildMs/1000)
	}
	for round := range rounds {
		for i := range tools {
			t := tools[(i+round)%len(tools)]
			if t.err != nil {
				continue
			}
			if _, err := io.WriteString(t.in, "run\n"); err != nil {
				t.err = err
				continue
			}
			var m runMsg
			if err := t.read(&m); err != nil {
				t.err = err
				continue
			}
			for qi, ns := range m.LatNs {
				t.lat = append(t.lat, time.Duration(ns))
				t.recall += recall(m.IDs[qi], gt[qi], k)
			}
			t.runs += len(m.LatNs)
		}
		log.Printf("n=%d: round %d done", n, round+1)
	}
	var memP50 time.Duration
	var b strings.Builder
	for _, t := range tools {
		rss := peakRSS(t.cmd.Process.Pid)
		if t.err != nil {
			fmt.Fprintf(&b, "| %s | %s | failed: %v | | | | | |\n", size(n, dim), t.name, t.err)
			continue
		}
		slices.Sort(t.lat)
		p50, p99 := t.lat[len(t.lat)/2], t.lat[len(t.lat)*99/100]
		if t.name == tools[0].name {
			memP50 = p50
		}
		ratio := ""
		if memP50 > 0 && t != tools[0] {
			ratio = fmt.Sprintf("%.2f×", float64(memP50)/float64(p50))
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %.4f | %.1f s | %d MiB |\n",
			size(n, dim), t.name, ms(p50), ms(p99), ratio, t.recall/float64(t.runs), t.buildMs/1000, rss>>20)
	}
	return b.String(), nil
}

func (t *tool) read(v any) error {
	line, err := t.out.ReadBytes('\n')
	if err != nil {
		return err
	}
	return json.Unmarshal(line, v)
}

func recall(got, want []int, k int) float64 {
	hit := 0
	for _, g := range got {
		if slices.Contains(want, g) {
			hit++
		}
	}
	return float64(hit) / float64(min(k, len(want)))
}

// peakRSS is the process's VmHWM, in bytes.
func peakRSS(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func size(n, dim int) string {
	switch {
	case n >= 1000000 && n%1000000 == 0:
		return fmt.Sprintf("%dM × %d", n/1000000, dim)
	case n >= 1000 && n%1000 == 0:
		return fmt.Sprintf("%dk × %d", n/1000, dim)
	}
	return fmt.Sprintf("%d × %d", n, dim)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.3f ms", float64(d.Microseconds())/1000) }
