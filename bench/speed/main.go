// Command speed measures memgate's recall and ingest speed on deterministic
// synthetic data, and times chromem-go's exact search on the same vectors in
// the same run, so the two are compared on one machine under one load.
//
// Every phase runs in its own child process, so each reports its own peak
// RSS. Results go to standard output as a table and, with -json, as JSON.
//
//	cd bench && go run ./speed                      # the full run (a few minutes)
//	cd bench && go run ./speed -sizes 1000 -quick   # a smoke run
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	chromem "github.com/philippgille/chromem-go"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/embedder/builtin"
	"github.com/memgate/memgate/engine"
	"github.com/memgate/memgate/index"
	"github.com/memgate/memgate/internal/zipfcorpus"
	"github.com/memgate/memgate/sqlite"
)

const dim = 384

// Result is one phase's measurement.
type Result struct {
	Phase   string  `json:"phase"`
	Size    int     `json:"size"`
	Ops     int     `json:"ops"`
	P50us   float64 `json:"p50_us,omitempty"`
	P99us   float64 `json:"p99_us,omitempty"`
	PerSec  float64 `json:"per_sec,omitempty"`
	BuildMs float64 `json:"build_ms,omitempty"`
	RSSMiB  float64 `json:"peak_rss_mib"`
	Note    string  `json:"note,omitempty"`
}

func main() {
	var (
		phase   = flag.String("phase", "", "run one phase in this process (used by the parent)")
		size    = flag.Int("size", 0, "partition size for -phase")
		sizes   = flag.String("sizes", "1000,10000,100000", "partition sizes for index search")
		queries = flag.Int("queries", 200, "timed queries per search phase")
		e2e     = flag.Int("e2e-size", 10000, "partition size for the end-to-end recall phase")
		ingest  = flag.Int("ingest", 20000, "memories for the batch ingest phase (one at a time: a tenth)")
		quick   = flag.Bool("quick", false, "fewer queries and smaller end-to-end and ingest phases")
		asJSON  = flag.Bool("json", false, "print JSON instead of a table")
		embFlag = flag.String("embedder", builtin.Model, "the built-in model of the end-to-end and ingest phases: "+strings.Join(builtin.Models, " or "))
		profile = flag.String("cpuprofile", "", "with -phase e2e or e2e-warm: write a CPU profile of the timed recalls to this file")
	)
	flag.Parse()
	embedderModel, cpuProfile = *embFlag, *profile
	if *quick {
		*queries, *e2e, *ingest = 50, 2000, 2000
	}
	if *phase != "" {
		r, err := runPhase(*phase, *size, *queries)
		if err != nil {
			fmt.Fprintln(os.Stderr, "speed:", err)
			os.Exit(1)
		}
		json.NewEncoder(os.Stdout).Encode(r)
		return
	}
	var plan []struct {
		phase string
		size  int
	}
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			fmt.Fprintln(os.Stderr, "speed: bad -sizes:", err)
			os.Exit(2)
		}
		plan = append(plan, struct {
			phase string
			size  int
		}{"index", n}, struct {
			phase string
			size  int
		}{"chromem", n})
	}
	plan = append(plan, struct {
		phase string
		size  int
	}{"e2e", *e2e}, struct {
		phase string
		size  int
	}{"e2e-warm", *e2e}, struct {
		phase string
		size  int
	}{"ingest-batch", *ingest}, struct {
		phase string
		size  int
	}{"ingest-single", max(*ingest/10, 100)})

	var results []Result
	for _, p := range plan {
		r, err := child(p.phase, p.size, *queries)
		if err != nil {
			fmt.Fprintf(os.Stderr, "speed: phase %s %d: %v\n", p.phase, p.size, err)
			os.Exit(1)
		}
		results = append(results, r)
		fmt.Fprintf(os.Stderr, "done: %s %d\n", p.phase, p.size)
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		enc.Encode(map[string]any{"machine": machine(), "results": results})
		return
	}
	fmt.Printf("machine: %s\n\n", machine())
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "phase\tsize\tops\tp50\tp99\tper second\tbuild\tpeak RSS\t")
	idx := map[int]Result{}
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%s\t%.0f MiB\t\n", r.Phase, r.Size, r.Ops, us(r.P50us), us(r.P99us), rate(r.PerSec), ms(r.BuildMs), r.RSSMiB)
		if r.Phase == "index" {
			idx[r.Size] = r
		}
	}
	tw.Flush()
	fmt.Println()
	for _, r := range results {
		if m, ok := idx[r.Size]; ok && r.Phase == "chromem" {
			fmt.Printf("chromem-go / memgate index at %d: p50 %.1f×, p99 %.1f×\n", r.Size, r.P50us/m.P50us, r.P99us/m.P99us)
		}
	}
}

func us(v float64) string {
	switch {
	case v == 0:
		return "-"
	case v >= 1000:
		return fmt.Sprintf("%.2f ms", v/1000)
	}
	return fmt.Sprintf("%.0f µs", v)
}

func ms(v float64) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f ms", v)
}

func rate(v float64) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", v)
}

func machine() string {
	cpu := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "model name") {
				cpu = strings.TrimSpace(strings.SplitN(l, ":", 2)[1])
				break
			}
		}
	}
	return fmt.Sprintf("%s, %d cores, %s %s/%s", cpu, runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// child runs one phase in a new process and reads its result.
func child(phase string, size, queries int) (Result, error) {
	exe, err := os.Executable()
	if err != nil {
		return Result{}, err
	}
	cmd := exec.Command(exe, "-phase", phase, "-size", strconv.Itoa(size), "-queries", strconv.Itoa(queries), "-embedder", embedderModel)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return Result{}, err
	}
	var r Result
	return r, json.Unmarshal(out, &r)
}

func peakRSS() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Maxrss) / 1024 // KiB on Linux
}

func runPhase(phase string, size, queries int) (Result, error) {
	var r Result
	var err error
	switch phase {
	case "index":
		r, err = benchIndex(size, queries)
	case "chromem":
		r, err = benchChromem(size, queries)
	case "e2e":
		r, err = benchE2E(size, queries, 10)
	case "e2e-warm":
		r, err = benchE2E(size, queries, e2eWarmup)
	case "ingest-batch":
		r, err = benchIngest(size, 100)
	case "ingest-single":
		r, err = benchIngest(size, 1)
	default:
		return r, fmt.Errorf("unknown phase %q", phase)
	}
	r.Phase, r.Size, r.RSSMiB = phase, size, peakRSS()
	return r, err
}

// dataset is deterministic: clustered unit vectors (as embeddings of
// related texts are), and queries near a random stored vector.
type dataset struct {
	vecs    [][]float32
	queries [][]float32
}

func makeData(n, q int) dataset {
	rng := rand.New(rand.NewPCG(42, uint64(n)))
	centers := make([][]float32, max(1, n/100))
	for i := range centers {
		centers[i] = gaussian(rng, 1)
	}
	d := dataset{vecs: make([][]float32, n), queries: make([][]float32, q)}
	for i := range d.vecs {
		c := centers[rng.IntN(len(centers))]
		v := gaussian(rng, 0.6)
		for j := range v {
			v[j] += c[j]
		}
		d.vecs[i] = normalize(v)
	}
	for i := range d.queries {
		base := d.vecs[rng.IntN(n)]
		v := gaussian(rng, 0.8)
		for j := range v {
			v[j] += base[j] * float32(math.Sqrt(dim))
		}
		d.queries[i] = normalize(v)
	}
	return d
}

func gaussian(rng *rand.Rand, sigma float64) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(rng.NormFloat64() * sigma)
	}
	return v
}

func normalize(v []float32) []float32 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
	return v
}

func percentiles(ds []time.Duration) (p50, p99 float64) {
	slices.Sort(ds)
	p50 = float64(ds[len(ds)/2].Nanoseconds()) / 1e3
	p99 = float64(ds[min(len(ds)-1, len(ds)*99/100)].Nanoseconds()) / 1e3
	return
}

func benchIndex(n, q int) (Result, error) {
	d := makeData(n, q)
	start := time.Now()
	p := index.NewPartition(index.Config{})
	for i, v := range d.vecs {
		if err := p.Upsert(index.Entry{ID: fmt.Sprintf("m%07d", i), Vector: v, Status: memgate.StatusActive, Kind: memgate.KindFact, Source: memgate.SourceUser}); err != nil {
			return Result{}, err
		}
	}
	build := time.Since(start)
	now := time.Now()
	lat := make([]time.Duration, 0, q)
	for i := 0; i < q+10; i++ {
		t := time.Now()
		res, err := p.Search(index.Query{Vector: d.queries[i%q], K: 10, Filter: index.Filter{Now: now}})
		if err != nil {
			return Result{}, err
		}
		if len(res.Candidates) != 10 {
			return Result{}, fmt.Errorf("index returned %d candidates", len(res.Candidates))
		}
		if i >= 10 { // warm-up excluded
			lat = append(lat, time.Since(t))
		}
	}
	p50, p99 := percentiles(lat)
	return Result{Ops: q, P50us: p50, P99us: p99, BuildMs: float64(build.Milliseconds()), Note: "vector channel, k=10, exact"}, nil
}

func benchChromem(n, q int) (Result, error) {
	d := makeData(n, q)
	ctx := context.Background()
	db := chromem.NewDB()
	noEmbed := func(context.Context, string) ([]float32, error) {
		return nil, fmt.Errorf("chromem should not embed: vectors are given")
	}
	col, err := db.CreateCollection("bench", nil, noEmbed)
	if err != nil {
		return Result{}, err
	}
	start := time.Now()
	docs := make([]chromem.Document, n)
	for i, v := range d.vecs {
		docs[i] = chromem.Document{ID: fmt.Sprintf("m%07d", i), Embedding: v, Content: "x"}
	}
	if err := col.AddDocuments(ctx, docs, runtime.NumCPU()); err != nil {
		return Result{}, err
	}
	build := time.Since(start)
	lat := make([]time.Duration, 0, q)
	for i := 0; i < q+10; i++ {
		t := time.Now()
		res, err := col.QueryEmbedding(ctx, d.queries[i%q], 10, nil, nil)
		if err != nil {
			return Result{}, err
		}
		if len(res) != 10 {
			return Result{}, fmt.Errorf("chromem returned %d results", len(res))
		}
		if i >= 10 {
			lat = append(lat, time.Since(t))
		}
	}
	p50, p99 := percentiles(lat)
	return Result{Ops: q, P50us: p50, P99us: p99, BuildMs: float64(build.Milliseconds()), Note: "QueryEmbedding, k=10, exact"}, nil
}

// openEngine opens an engine with the built-in embedder over a new SQLite
// database in a temporary directory; done closes both and removes it.
func openEngine() (eng *engine.Engine, done func(), err error) {
	dir, err := os.MkdirTemp("", "memgate-speed-")
	if err != nil {
		return nil, nil, err
	}
	db, err := sqlite.Open(context.Background(), filepath.Join(dir, "bench.db"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	emb, err := builtin.NewModel(embedderModel)
	if err != nil {
		db.Close()
		os.RemoveAll(dir)
		return nil, nil, err
	}
	eng, err = engine.New(engine.Config{Store: db, Embedder: emb})
	if err != nil {
		db.Close()
		os.RemoveAll(dir)
		return nil, nil, err
	}
	return eng, func() { eng.Close(); db.Close(); os.RemoveAll(dir) }, nil
}

// cpuProfile is the -cpuprofile flag's value (read in main).
var cpuProfile string

// e2eWarmup is how many recalls the e2e-warm phase makes before it times
// any: enough that the store's read connection has the partition's rows in
// its page cache. Right after an ingest of 10,000 memories the first few
// hundred recalls read most of their rows from the file (a system call and
// a fresh cache page each), and recall is 1.5–2× slower for a few seconds;
// the e2e phase, which times the recalls from the 11th on, includes that.
const e2eWarmup = 2000

// benchE2E times q recalls of a partition of n texts made by RememberBatch,
// after warmup untimed ones.
func benchE2E(n, q, warmup int) (Result, error) {
	ctx := context.Background()
	eng, done, err := openEngine()
	if err != nil {
		return Result{}, err
	}
	defer done()
	docs := zipfcorpus.Texts(n, 1)
	start := time.Now()
	for chunk := range slices.Chunk(docs, 500) {
		rs := make([]engine.RememberRequest, len(chunk))
		for i, c := range chunk {
			rs[i] = engine.RememberRequest{Memory: memgate.Memory{Tenant: "bench", Principal: "p", Kind: memgate.KindMessage, Source: memgate.SourceUser, Conversation: "c", Content: c}}
		}
		if _, err := eng.RememberBatch(ctx, rs); err != nil {
			return Result{}, err
		}
	}
	build := time.Since(start)
	// Queries: a few words of stored texts, so the floor lets results through.
	qs := zipfcorpus.Queries(docs, q)
	lat := make([]time.Duration, 0, q)
	returned := 0
	for i := 0; i < q+warmup; i++ {
		if i == warmup && cpuProfile != "" {
			f, err := os.Create(cpuProfile)
			if err != nil {
				return Result{}, err
			}
			defer f.Close()
			if err := pprof.StartCPUProfile(f); err != nil {
				return Result{}, err
			}
			defer pprof.StopCPUProfile()
		}
		t := time.Now()
		res, err := eng.Recall(ctx, engine.RecallRequest{Scope: memgate.Scope{Tenant: "bench", Principal: "p"}, Query: qs[i%q], K: 10})
		if err != nil {
			return Result{}, err
		}
		if i >= warmup {
			lat = append(lat, time.Since(t))
			returned += len(res.Results)
		}
	}
	p50, p99 := percentiles(lat)
	return Result{Ops: q, P50us: p50, P99us: p99, BuildMs: float64(build.Milliseconds()),
		Note: fmt.Sprintf("embed query + index + rank + read from SQLite, k=10, default floor, %.1f results/query; first search loads the partition; timed after %d recalls", float64(returned)/float64(q), warmup)}, nil
}

func benchIngest(n, batch int) (Result, error) {
	ctx := context.Background()
	eng, done, err := openEngine()
	if err != nil {
		return Result{}, err
	}
	defer done()
	docs := zipfcorpus.Texts(n, 2)
	start := time.Now()
	for chunk := range slices.Chunk(docs, batch) {
		rs := make([]engine.RememberRequest, len(chunk))
		for i, c := range chunk {
			rs[i] = engine.RememberRequest{Memory: memgate.Memory{Tenant: "bench", Principal: "p", Kind: memgate.KindMessage, Source: memgate.SourceUser, Content: c}}
		}
		if _, err := eng.RememberBatch(ctx, rs); err != nil {
			return Result{}, err
		}
	}
	took := time.Since(start)
	return Result{Ops: n, PerSec: float64(n) / took.Seconds(), Note: fmt.Sprintf("built-in embedder into SQLite, batches of %d", batch)}, nil
}

// embedderModel is the -embedder flag's value (read in main).
var embedderModel = builtin.Model
