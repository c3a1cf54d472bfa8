// Command load is a load generator for memgate's HTTP API on loopback: it
// seeds partitions of synthetic conversation memories, then measures recall
// and single-remember throughput and latency under concurrent workers, and
// soaks the server with a mix of remember, recall, list and revoke
// (soak.go) while sampling its RSS, open descriptors and goroutines and
// each request type's latency per interval: the curve. The soak is judged:
// no failed request, each type's p99 stable, RSS, goroutines and
// descriptors flat (RELIABILITY.md, "Soak"); a target not met fails the
// run. With -soak-only it seeds and soaks, nothing else.
//
// By default it builds cmd/memgate into a temporary directory and runs
// "memgate serve --addr 127.0.0.1:0 --db TMP --rate -1" as a child process
// (rate limiting off, so the benchmark measures the server and not the
// token bucket; a policy file caps message retention per principal so the
// soak reaches a steady data size), reads the admin key and address from its
// stdout, and stops it with SIGTERM at the end. With -server and -key it
// targets a running server instead (no RSS, descriptor or CPU figures then).
//
// Every request is timed from send to the last byte of the response;
// latency percentiles are over successful requests, throughput counts
// successful requests only. A non-2xx answer or a transport error is counted
// and reported (with the distinct messages); the run exits 1 if any request
// failed.
//
// With -postgres URL it runs the replica benchmark instead (postgres.go):
// -replicas servers ("memgate serve --postgres") over a fresh database of
// that PostgreSQL server; recall latency at one replica, recall throughput
// over all of them, and a freshness check (remember on one replica, recall
// at once on another). A memory never recalled on the other replica fails
// the run like a failed request.
//
//	cd bench && go run ./load              # the full run (about two and a half minutes)
//	cd bench && go run ./load -quick       # 5 s phases and a 10 s soak, a smoke run
//	cd bench && go run ./load -soak-only -soak 10m -rss-every 10s   # the soak of RELIABILITY.md
//	cd bench && go run ./load -json        # JSON instead of a table
//	cd bench && go run ./load -replicas 2 -postgres 'postgres://USER:PASS@127.0.0.1:5432/postgres?sslmode=disable'
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/memgate/memgate/bench/internal/memgatebin"
)

// Phase is one phase's measurement.
type Phase struct {
	Name      string  `json:"phase"`
	Workers   int     `json:"workers"`
	Seconds   float64 `json:"seconds"`
	Requests  int     `json:"requests"`
	Errors    int     `json:"errors"`
	PerSec    float64 `json:"per_sec"`
	P50ms     float64 `json:"p50_ms"`
	P99ms     float64 `json:"p99_ms"`
	MaxMs     float64 `json:"max_ms"`
	Memories  int     `json:"memories,omitempty"`       // memories written (seed)
	Results   float64 `json:"avg_results,omitempty"`    // recall: mean results, sampled
	ServerCPU float64 `json:"server_cpu_pct,omitempty"` // all child servers together
	DBCPU     float64 `json:"db_cpu_pct,omitempty"`     // PostgreSQL's processes (-postgres)
	OtherCPU  float64 `json:"other_cpu_pct,omitempty"`  // the rest of the machine's busy time (-postgres)
	ClientCPU float64 `json:"client_cpu_pct"`
	Replicas  int     `json:"replicas,omitempty"` // servers the phase spread requests over (-postgres)
	// IdlePct and StealPct are of the whole machine (all CPUs, /proc/stat):
	// idle includes I/O wait; steal is time the hypervisor took.
	IdlePct  float64 `json:"machine_idle_pct"`
	StealPct float64 `json:"machine_steal_pct"`
}

// Report is the whole run.
type Report struct {
	Server string   `json:"server"`
	Notes  []string `json:"notes"`
	CPUs   int      `json:"cpus"`
	Phases []Phase  `json:"phases"`
	// The soak (soak.go): the curve, a sample every SoakEvery seconds, the
	// warm-up sample's time, and each request type's p99 stability.
	SoakEvery  float64        `json:"soak_every_s,omitempty"`
	Soak       []SoakSample   `json:"soak_curve,omitempty"`
	SoakWarmAt float64        `json:"soak_warmup_s,omitempty"`
	SoakP99    []P99Stability `json:"soak_p99_stability,omitempty"`
	RSSFirst   float64        `json:"rss_first_mib,omitempty"`
	RSSWarm    float64        `json:"rss_after_warmup_mib,omitempty"`
	RSSLast    float64        `json:"rss_last_mib,omitempty"`
	RSSMax     float64        `json:"rss_max_mib,omitempty"`
	RSSFlat    *bool          `json:"rss_flat,omitempty"`
	ClientRSS  float64        `json:"client_peak_rss_mib"`
	// Postgres is set by -postgres: the servers are replicas over one
	// PostgreSQL database (see runPostgres).
	Postgres    bool       `json:"postgres,omitempty"`
	ReplicaRSS  []float64  `json:"replica_rss_mib,omitempty"` // each replica's VmRSS at the end
	Fresh       *Freshness `json:"freshness,omitempty"`
	Targets     []Target   `json:"targets"`
	Errors      int        `json:"errors"`
	ErrorSample []string   `json:"error_sample,omitempty"`
}

// Target is a goal the run is judged against.
type Target struct {
	Goal     string `json:"goal"`
	Measured string `json:"measured"`
	Verdict  string `json:"verdict"` // "met", "NOT met" or "not judged"
}

type options struct {
	principals, perPrincipal, batch int
	workers                         int
	dur, soak, rssEvery             time.Duration
	soakOnly                        bool // seed, then only the soak
	judgeP99                        bool // judge the soak's p99 stability (off: reported only)
	// The soak's mix: fractions of its requests; recall is the rest.
	mixRemember, mixList, mixRevoke float64
	listLimit                       int // limit of the soak's lists
	retention                       int
	seed                            uint64
	k                               int

	// -postgres mode (postgres.go).
	postgres          string // URL of a database to create the benchmark's database from
	pgDB              string // name of the benchmark's database, dropped and created
	pgKeep            bool   // leave the database after the run
	pgAnalyze         bool   // ANALYZE the database after the seed
	replicas          int
	latencyWorkers    int   // workers of the one-replica recall latency phase
	throughputWorkers []int // workers of each recall throughput phase over every replica

	bin       string // memgate binary to run (empty: build cmd/memgate)
	pprofAddr string // the child's --pprof-addr (empty: none)
}

// binary returns o.bin, or builds cmd/memgate into dir.
func (o options) binary(ctx context.Context, dir string) (string, error) {
	if o.bin != "" {
		return o.bin, nil
	}
	return memgatebin.Build(ctx, dir)
}

// serveArgs appends the flags every child gets from the options.
func (o options) serveArgs(args []string) []string {
	if o.pprofAddr != "" {
		args = append(args, "--pprof-addr", o.pprofAddr)
	}
	return args
}

func main() {
	var o options
	var (
		server = flag.String("server", "", "URL of a running server (default: start one as a child process)")
		key    = flag.String("key", os.Getenv("MEMGATE_API_KEY"), "admin API key for -server")
		quick  = flag.Bool("quick", false, "5 s phases and a 10 s soak sampled every 1 s, unless -d, -soak or -rss-every say otherwise (a smoke run)")
		asJSON = flag.Bool("json", false, "print JSON instead of a table")
	)
	flag.IntVar(&o.principals, "principals", 4, "partitions (principals) to seed")
	flag.IntVar(&o.perPrincipal, "per-principal", 1000, "memories seeded per principal (with -postgres: 10000 unless given)")
	flag.IntVar(&o.batch, "batch", 100, "memories per seed batch")
	flag.IntVar(&o.workers, "c", 8, "concurrent workers in the load phases (with -postgres: of the freshness phase)")
	flag.DurationVar(&o.dur, "d", 20*time.Second, "length of the recall and remember phases")
	flag.DurationVar(&o.soak, "soak", 60*time.Second, "length of the mixed soak")
	flag.DurationVar(&o.rssEvery, "rss-every", 5*time.Second, "how often the soak samples the server (RSS, open descriptors, goroutines) and closes an interval of its latency curve")
	flag.BoolVar(&o.soakOnly, "soak-only", false, "seed, then run only the soak (no recall or remember throughput phase)")
	flag.BoolVar(&o.judgeP99, "judge-p99", true, "judge the soak's p99 stability (false: report it only; the CI smoke run, whose seconds-long p99s on a shared machine are noise)")
	flag.Float64Var(&o.mixRemember, "soak-remember", 0.2, "fraction of soak requests that remember a new memory")
	flag.Float64Var(&o.mixList, "soak-list", 0.1, "fraction of soak requests that list a principal's memories (one page of -list-limit)")
	flag.Float64Var(&o.mixRevoke, "soak-revoke", 0.1, "fraction of soak requests that revoke a memory the soak remembered (a remember when none is left); recall is the rest")
	flag.IntVar(&o.listLimit, "list-limit", 20, "limit of the soak's lists")
	flag.IntVar(&o.retention, "retention", 2000, "message retention per principal of the child server (0: the server's default; with -postgres: 0 unless given)")
	flag.Uint64Var(&o.seed, "seed", 1, "seed of the synthetic data")
	flag.IntVar(&o.k, "k", 5, "k of each recall")
	flag.StringVar(&o.postgres, "postgres", "", "PostgreSQL URL: run the replica benchmark, with servers on a fresh database (-pg-db) of this server (see postgres.go)")
	flag.StringVar(&o.pgDB, "pg-db", "memgate_bench", "with -postgres: the benchmark's database, dropped if it exists, created, and dropped at the end (unless -pg-keep)")
	flag.BoolVar(&o.pgKeep, "pg-keep", false, "with -postgres: leave the database after the run, for inspection")
	flag.BoolVar(&o.pgAnalyze, "pg-analyze", true, "with -postgres: ANALYZE the database after the seed (what autovacuum does within a minute or so)")
	flag.IntVar(&o.replicas, "replicas", 1, "with -postgres: servers over the database; workers spread requests round-robin over them")
	flag.IntVar(&o.latencyWorkers, "latency-c", 4, "with -postgres: workers of the recall latency phase (one replica)")
	flag.StringVar(&o.bin, "bin", "", "memgate binary to run (default: build cmd/memgate of this module): to compare two builds")
	flag.StringVar(&o.pprofAddr, "pprof-addr", "", "the child server's --pprof-addr (a loopback address; with -postgres, replica 1's): profile it during a phase with go tool pprof")
	tput := flag.String("throughput-c", "16,32", "with -postgres: workers of each recall throughput phase (all replicas), comma-separated")
	flag.Parse()
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *quick {
		if !set["d"] {
			o.dur = 5 * time.Second
		}
		if !set["soak"] {
			o.soak = 10 * time.Second
		}
		if !set["rss-every"] {
			o.rssEvery = time.Second
		}
	}
	if o.postgres != "" {
		// The replica benchmark's partitions hold 10,000 memories, and the
		// server's own retention (10,000 messages) keeps them whole.
		if !set["per-principal"] {
			o.perPrincipal = 10000
		}
		if !set["retention"] {
			o.retention = 0
		}
	}
	for f := range strings.SplitSeq(*tput, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			fmt.Fprintln(os.Stderr, "load: -throughput-c must be positive numbers separated by commas")
			os.Exit(2)
		}
		o.throughputWorkers = append(o.throughputWorkers, n)
	}
	if o.workers < 1 || o.principals < 1 || o.perPrincipal < 1 || o.batch < 1 || o.latencyWorkers < 1 || o.replicas < 1 || o.listLimit < 1 {
		fmt.Fprintln(os.Stderr, "load: -c, -latency-c, -replicas, -principals, -per-principal, -batch and -list-limit must be positive")
		os.Exit(2)
	}
	if o.soak <= 0 || o.rssEvery <= 0 {
		fmt.Fprintln(os.Stderr, "load: -soak and -rss-every must be positive")
		os.Exit(2)
	}
	if f := []float64{o.mixRemember, o.mixList, o.mixRevoke}; slices.Min(f) < 0 || f[0]+f[1]+f[2] > 1 {
		fmt.Fprintln(os.Stderr, "load: -soak-remember, -soak-list and -soak-revoke must be fractions adding up to at most 1 (recall is the rest)")
		os.Exit(2)
	}
	switch {
	case o.postgres != "" && *server != "":
		fmt.Fprintln(os.Stderr, "load: -postgres starts its own servers: drop -server")
		os.Exit(2)
	case o.postgres == "" && o.replicas > 1:
		fmt.Fprintln(os.Stderr, "load: -replicas above 1 needs -postgres")
		os.Exit(2)
	case o.postgres != "" && o.soakOnly:
		fmt.Fprintln(os.Stderr, "load: -postgres runs no soak: drop -soak-only")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var (
		rep *Report
		err error
	)
	if o.postgres != "" {
		rep, err = runPostgres(ctx, o)
	} else {
		rep, err = run(ctx, o, *server, *key)
	}
	if rep != nil {
		if *asJSON {
			enc := json.NewEncoder(os.Stdout)
			enc.SetIndent("", "  ")
			enc.Encode(rep)
		} else {
			printTable(rep)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
	if rep.Errors > 0 {
		fmt.Fprintf(os.Stderr, "load: %d requests failed\n", rep.Errors)
		os.Exit(1)
	}
	if rep.Fresh != nil && rep.Fresh.Lost > 0 {
		fmt.Fprintf(os.Stderr, "load: %d memories remembered on one replica were not recalled on another within %s\n", rep.Fresh.Lost, freshRetryFor)
		os.Exit(1)
	}
	// The soak's targets are pass or fail; the throughput targets are
	// figures of the machine and only reported.
	if missed := rep.soakMissed(); len(missed) > 0 {
		fmt.Fprintf(os.Stderr, "load: soak targets not met: %s\n", strings.Join(missed, "; "))
		os.Exit(1)
	}
}

// soakMissed are the soak's targets not met.
func (r *Report) soakMissed() []string {
	var out []string
	for _, t := range r.Targets {
		if strings.HasPrefix(t.Goal, "soak: ") && t.Verdict == "NOT met" {
			out = append(out, t.Goal)
		}
	}
	return out
}

func run(ctx context.Context, o options, serverURL, key string) (*Report, error) {
	rep := &Report{CPUs: runtime.NumCPU()}
	pid := 0
	if serverURL == "" {
		dir, err := os.MkdirTemp("", "memgate-load-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir) // after the child stopped (deferred below)
		bin, err := o.binary(ctx, dir)
		if err != nil {
			return nil, err
		}
		args := o.serveArgs([]string{"serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(dir, "load.db"), "--rate", "-1"})
		if o.retention > 0 {
			pol, err := writePolicy(dir, o.retention)
			if err != nil {
				return nil, err
			}
			args = append(args, "--policy", pol)
		}
		child, err := startServer(ctx, bin, args, memgatebin.Env(), filepath.Join(dir, "server.log"), true)
		if err != nil {
			return nil, err
		}
		defer stop(child)
		serverURL, key, pid = child.URL, child.Key, child.Cmd.Process.Pid
		rep.Notes = append(rep.Notes, "child process: memgate serve --addr 127.0.0.1:0 --rate -1 (rate limiting OFF for the benchmark)")
		if o.retention > 0 {
			rep.Notes = append(rep.Notes, fmt.Sprintf("policy: message retention %d per principal (steady data size for the soak)", o.retention))
		}
	} else if key == "" {
		return nil, errors.New("-server needs -key (or MEMGATE_API_KEY)")
	} else {
		rep.Notes = append(rep.Notes, "external server: its rate limit applies (429s count as errors); no server RSS, descriptors or CPU")
	}
	rep.Server = serverURL
	rep.Notes = append(rep.Notes, fmt.Sprintf("%d principals x %d memories seeded, %d workers, recall k=%d", o.principals, o.perPrincipal, o.workers, o.k),
		fmt.Sprintf("soak %s: %.0f%% remember, %.0f%% recall, %.0f%% list (limit %d), %.0f%% revoke (of the soak's own newest memories)",
			o.soak, 100*o.mixRemember, 100*o.share(opRecall), 100*o.mixList, o.listLimit, 100*o.mixRevoke))
	if o.soakOnly {
		rep.Notes = append(rep.Notes, "-soak-only: no recall or remember throughput phase")
	}

	l := newLoader(o, key, o.workers)
	l.add(serverURL, pid)
	defer l.hc.CloseIdleConnections()
	if err := l.health(ctx, serverURL); err != nil {
		return rep, err
	}

	steps := []func(context.Context) (Phase, error){l.seedPhase}
	if !o.soakOnly {
		steps = append(steps, l.recallPhase, l.rememberPhase)
	}
	for _, step := range steps {
		p, err := step(ctx)
		rep.Phases = append(rep.Phases, p)
		if err != nil {
			rep.finish(l)
			return rep, err
		}
	}
	soak, err := l.soakPhase(ctx)
	rep.Phases = append(rep.Phases, soak.phases...)
	rep.finish(l)
	rep.SoakEvery = o.rssEvery.Seconds()
	rep.judgeSoak(o, soak)
	return rep, err
}

func (r *Report) finish(l *loader) {
	r.Errors = int(l.errs.Load())
	l.mu.Lock()
	for _, m := range l.errSample {
		r.ErrorSample = append(r.ErrorSample, fmt.Sprintf("%dx %s", l.errKinds[m], m))
	}
	l.mu.Unlock()
	r.ClientRSS = procStatusMiB("self", "VmHWM")
	if !r.Postgres {
		r.judgeSQLite()
	}
}

// judgeSQLite sets the targets of the single-server run (BENCHMARKS.md).
func (r *Report) judgeSQLite() {
	for _, p := range r.Phases {
		switch p.Name {
		case "recall":
			r.Targets = append(r.Targets, Target{"recall >= 3000/s with p99 <= 20 ms",
				fmt.Sprintf("%.0f/s, p99 %.2f ms", p.PerSec, p.P99ms), met(p.PerSec >= 3000 && p.P99ms <= 20)})
		case "remember (single)":
			r.Targets = append(r.Targets, Target{"remember >= 1500/s",
				fmt.Sprintf("%.0f/s", p.PerSec), met(p.PerSec >= 1500)})
		}
	}
}

// writePolicy writes a policy file capping message retention per
// principal at retention and returns its path.
func writePolicy(dir string, retention int) (string, error) {
	pol := filepath.Join(dir, "policy.json")
	return pol, os.WriteFile(pol, fmt.Appendf(nil, `{"retention": {"message": %d}}`, retention), 0o600)
}

// startServer starts memgate serve (memgatebin.Start). With needKey the
// server must print the admin key it created (the first start on an empty
// database); without, it must not (it shares a database that has keys).
func startServer(ctx context.Context, bin string, args, env []string, logPath string, needKey bool) (*memgatebin.Child, error) {
	c, err := memgatebin.Start(ctx, bin, args, env, logPath)
	if err != nil {
		return nil, err
	}
	switch {
	case needKey && c.Key == "":
		err = errors.New("the server printed no admin key")
	case !needKey && c.Key != "":
		err = errors.New("the server created an admin key: it does not share the first server's database")
	}
	if err != nil {
		stop(c)
		return nil, fmt.Errorf("start memgate serve: %w (log: %s)", err, logPath)
	}
	return c, nil
}

// stop stops c (SIGTERM, then a kill after 20 s), saying on stderr when it
// did not exit cleanly.
func stop(c *memgatebin.Child) {
	if err := c.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "load: the server:", err)
	}
}

// loader sends requests and counts failures.
type loader struct {
	urls      []string // the servers, without a trailing slash
	pids      []int    // their process ids (0: not a child)
	rr        atomic.Uint64
	dbCPU     func() float64 // CPU seconds of the database's processes (nil: none to watch)
	key       string
	o         options
	hc        *http.Client
	data      *corpus
	errs      atomic.Int64
	mu        sync.Mutex
	errSample []string       // distinct failure messages, first seen first (at most 10)
	errKinds  map[string]int // how often each was seen
	wseq      atomic.Int64   // unique suffix of remembered content
}

// newLoader returns a loader with no server yet, whose HTTP client keeps
// enough idle connections for workers concurrent requests per server.
func newLoader(o options, key string, workers int) *loader {
	return &loader{
		key: "Bearer " + key, o: o,
		hc: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:        2 * workers,
			MaxIdleConnsPerHost: workers,
			IdleConnTimeout:     90 * time.Second,
			DisableCompression:  true,
		}},
		data: newCorpus(o.seed),
	}
}

// add makes the server at url (process pid, 0 if not a child) one of those
// the loader spreads requests over. Not safe during a phase.
func (l *loader) add(url string, pid int) {
	l.urls = append(l.urls, strings.TrimRight(url, "/"))
	l.pids = append(l.pids, pid)
}

// next is the server of the next request: round-robin over the servers.
func (l *loader) next() string {
	if len(l.urls) == 1 {
		return l.urls[0]
	}
	return l.urls[(l.rr.Add(1)-1)%uint64(len(l.urls))]
}

func (l *loader) fail(msg string) {
	l.errs.Add(1)
	l.mu.Lock()
	if l.errKinds == nil {
		l.errKinds = map[string]int{}
	}
	if _, seen := l.errKinds[msg]; seen || len(l.errKinds) < 10 {
		if !seen {
			l.errSample = append(l.errSample, msg)
		}
		l.errKinds[msg]++
	}
	l.mu.Unlock()
}

func (l *loader) health(ctx context.Context, url string) error {
	req, _ := http.NewRequestWithContext(ctx, "GET", strings.TrimRight(url, "/")+"/healthz", nil)
	resp, err := l.hc.Do(req)
	if err != nil {
		return fmt.Errorf("health check: %w", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("health check: HTTP %d", resp.StatusCode)
	}
	return nil
}

// post sends one JSON request to the next server (round-robin) and reads
// the whole response. It returns the body when keep is set (or on
// failure); a non-2xx status or a transport error is counted as a failure.
func (l *loader) post(ctx context.Context, path string, body []byte, keep bool) ([]byte, bool) {
	return l.postTo(ctx, l.next(), path, body, keep)
}

// postTo is post to the server at base.
func (l *loader) postTo(ctx context.Context, base, path string, body []byte, keep bool) ([]byte, bool) {
	return l.send(ctx, "POST", base, path, "POST "+path, body, keep)
}

// send is postTo with any method and a body (nil: none); failures are
// counted under what, which names the request without its ids.
func (l *loader) send(ctx context.Context, method, base, path, what string, body []byte, keep bool) ([]byte, bool) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		l.fail(err.Error())
		return nil, false
	}
	req.Header.Set("Authorization", l.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := l.hc.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			l.fail(what + ": " + err.Error())
		}
		return nil, false
	}
	defer resp.Body.Close()
	ok := resp.StatusCode/100 == 2
	var out []byte
	if keep || !ok {
		out, err = io.ReadAll(resp.Body)
	} else {
		_, err = io.Copy(io.Discard, resp.Body)
	}
	switch {
	case err != nil && ctx.Err() == nil:
		l.fail(what + ": reading the response: " + err.Error())
		return nil, false
	case err != nil:
		return nil, false
	case !ok:
		l.fail(fmt.Sprintf("%s: HTTP %d %.200s", what, resp.StatusCode, bytes.TrimSpace(out)))
		return nil, false
	}
	return out, true
}

// timed runs workers until the phase's deadline, each calling op in a loop
// and recording the latency of every successful call.
type tally struct {
	lat []time.Duration
	n   int // calls, failed included
	bad int
	res int // results seen in sampled recalls
	smp int // sampled recalls
}

func (l *loader) timed(ctx context.Context, name string, d time.Duration, workers int,
	op func(ctx context.Context, w int, rng *rand.Rand, t *tally) bool) Phase {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	cpu0, scpu0, m0 := cpuSeconds("self"), l.serverCPU(), machineTicks()
	dcpu0 := l.dbCPUSeconds()
	tallies := make([]tally, workers)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(l.o.seed, uint64(1000+w)^uint64(len(name))))
			t := &tallies[w]
			t.lat = make([]time.Duration, 0, 4096)
			for ctx.Err() == nil {
				t0 := time.Now()
				ok := op(ctx, w, rng, t)
				if ctx.Err() != nil && !ok {
					break // cut off by the deadline: not a failure, not timed
				}
				t.n++
				if ok {
					t.lat = append(t.lat, time.Since(t0))
				} else {
					t.bad++
				}
			}
		})
	}
	wg.Wait()
	el := time.Since(start)
	return l.summarize(name, workers, el, tallies, cpu0, scpu0, dcpu0, m0)
}

func (l *loader) summarize(name string, workers int, el time.Duration, tallies []tally, cpu0, scpu0, dcpu0 float64, m0 [3]float64) Phase {
	var all []time.Duration
	p := Phase{Name: name, Workers: workers, Seconds: round(el.Seconds(), 1)}
	if l.o.postgres != "" {
		p.Replicas = len(l.urls)
	}
	res, smp := 0, 0
	for _, t := range tallies {
		all = append(all, t.lat...)
		p.Requests += t.n
		p.Errors += t.bad
		res, smp = res+t.res, smp+t.smp
	}
	slices.Sort(all)
	q := func(f float64) float64 {
		if len(all) == 0 {
			return 0
		}
		return round(float64(all[min(len(all)-1, int(f*float64(len(all))))])/1e6, 2)
	}
	p.P50ms, p.P99ms = q(0.50), q(0.99)
	if len(all) > 0 {
		p.MaxMs = round(float64(all[len(all)-1])/1e6, 2)
	}
	p.PerSec = round(float64(p.Requests-p.Errors)/el.Seconds(), 0)
	if smp > 0 {
		p.Results = round(float64(res)/float64(smp), 2)
	}
	p.ClientCPU = round(100*(cpuSeconds("self")-cpu0)/el.Seconds(), 0)
	if slices.ContainsFunc(l.pids, func(pid int) bool { return pid != 0 }) {
		p.ServerCPU = round(100*(l.serverCPU()-scpu0)/el.Seconds(), 0)
	}
	if l.dbCPU != nil {
		p.DBCPU = round(100*(l.dbCPUSeconds()-dcpu0)/el.Seconds(), 0)
	}
	if m1 := machineTicks(); m1[0] > m0[0] {
		p.IdlePct = round(100*(m1[1]-m0[1])/(m1[0]-m0[0]), 0)
		p.StealPct = round(100*(m1[2]-m0[2])/(m1[0]-m0[0]), 0)
		if l.o.postgres != "" {
			// The machine's busy time in CPU % of one core, less what the
			// replicas, PostgreSQL and this process used: the kernel's
			// time outside them and every other program.
			busy := 100 * float64(runtime.NumCPU()) * (1 - (m1[1]-m0[1])/(m1[0]-m0[0]))
			p.OtherCPU = round(max(0, busy-p.ServerCPU-p.DBCPU-p.ClientCPU), 0)
		}
	}
	return p
}

// serverCPU is the CPU time of the child servers, together.
func (l *loader) serverCPU() float64 {
	s := 0.0
	for _, pid := range l.pids {
		if pid != 0 {
			s += cpuSeconds(strconv.Itoa(pid))
		}
	}
	return s
}

func (l *loader) dbCPUSeconds() float64 {
	if l.dbCPU == nil {
		return 0
	}
	return l.dbCPU()
}

// seedPhase writes every principal's memories in batches, a worker per
// principal (at most -c), and checks the server returned one item per input.
func (l *loader) seedPhase(ctx context.Context) (Phase, error) {
	o := l.o
	type job struct{ p, from int }
	jobs := make(chan job)
	go func() {
		defer close(jobs)
		for p := range o.principals {
			for from := 0; from < o.perPrincipal; from += o.batch {
				select {
				case jobs <- job{p, from}:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	workers := min(o.workers, o.principals)
	tallies := make([]tally, workers)
	cpu0, scpu0, m0 := cpuSeconds("self"), l.serverCPU(), machineTicks()
	dcpu0 := l.dbCPUSeconds()
	var written atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for w := range workers {
		wg.Go(func() {
			t := &tallies[w]
			for j := range jobs {
				n := min(o.batch, o.perPrincipal-j.from)
				ms := make([]memoryIn, n)
				for i := range ms {
					ms[i] = l.data.seedMemory(j.p, j.from+i)
				}
				body, _ := json.Marshal(struct {
					Memories []memoryIn `json:"memories"`
				}{ms})
				t0 := time.Now()
				out, ok := l.post(ctx, "/v1/memories", body, true)
				t.n++
				if !ok {
					t.bad++
					continue
				}
				t.lat = append(t.lat, time.Since(t0))
				var r struct {
					Memories []json.RawMessage `json:"memories"`
				}
				if err := json.Unmarshal(out, &r); err != nil || len(r.Memories) != n {
					l.fail(fmt.Sprintf("seed batch: %d items back for %d (%v)", len(r.Memories), n, err))
					t.bad++
					continue
				}
				written.Add(int64(n))
			}
		})
	}
	wg.Wait()
	p := l.summarize(fmt.Sprintf("seed (batches of %d)", o.batch), workers, time.Since(start), tallies, cpu0, scpu0, dcpu0, m0)
	p.Memories = int(written.Load())
	if p.Memories != o.principals*o.perPrincipal {
		return p, fmt.Errorf("seeded %d of %d memories", p.Memories, o.principals*o.perPrincipal)
	}
	return p, ctx.Err()
}

// recallBodies pre-builds request bodies so the client spends its CPU on
// HTTP, not on JSON.
func (l *loader) recallBodies(n int) [][]byte {
	rng := rand.New(rand.NewPCG(l.o.seed, 7))
	out := make([][]byte, n)
	for i := range out {
		body, _ := json.Marshal(recallIn{Principal: principal(rng.IntN(l.o.principals)), Query: l.data.query(rng), K: l.o.k})
		out[i] = body
	}
	return out
}

// recallOp sends a recall; one in 16 responses is decoded to count results.
func (l *loader) recallOp(bodies [][]byte) func(context.Context, int, *rand.Rand, *tally) bool {
	return func(ctx context.Context, _ int, rng *rand.Rand, t *tally) bool {
		sample := rng.IntN(16) == 0
		out, ok := l.post(ctx, "/v1/recall", bodies[rng.IntN(len(bodies))], sample)
		if ok && sample {
			var r struct {
				Results []json.RawMessage `json:"results"`
			}
			if err := json.Unmarshal(out, &r); err != nil {
				l.fail("recall: undecodable response: " + err.Error())
				return false
			}
			t.res += len(r.Results)
			t.smp++
		}
		return ok
	}
}

// rememberOp sends one new memory.
func (l *loader) rememberOp(ctx context.Context, _ int, rng *rand.Rand, _ *tally) bool {
	body, _ := json.Marshal(l.liveMemory(rng))
	_, ok := l.post(ctx, "/v1/memories", body, false)
	return ok
}

// liveMemory is a new memory of a random principal, its content unique
// (so never deduplicated).
func (l *loader) liveMemory(rng *rand.Rand) memoryIn {
	seq := l.wseq.Add(1)
	m := l.data.seedMemory(rng.IntN(l.o.principals), 0)
	m.Content = l.data.sentence(rng) + " (note " + suffix(seq) + ")"
	m.Conversation = "live"
	return m
}

func (l *loader) recallPhase(ctx context.Context) (Phase, error) {
	p := l.timed(ctx, "recall", l.o.dur, l.o.workers, l.recallOp(l.recallBodies(4096)))
	return p, ctx.Err()
}

func (l *loader) rememberPhase(ctx context.Context) (Phase, error) {
	p := l.timed(ctx, "remember (single)", l.o.dur, l.o.workers, l.rememberOp)
	return p, ctx.Err()
}

// ---- synthetic data ----

type memoryIn struct {
	Principal    string `json:"principal"`
	Conversation string `json:"conversation,omitempty"`
	Kind         string `json:"kind"`
	Source       string `json:"source"`
	Content      string `json:"content"`
}

type recallIn struct {
	Principal string `json:"principal"`
	Query     string `json:"query"`
	K         int    `json:"k"`
}

func principal(i int) string { return "load-p" + strconv.Itoa(i) }

// suffix spells n in letters (a digit run could look like a card number or
// another secret to the write gate).
func suffix(n int64) string {
	var b []byte
	for {
		b = append(b, byte('a'+n%26))
		n /= 26
		if n == 0 {
			return string(b)
		}
	}
}

var (
	names    = strings.Fields("Alice Bruno Chen Dana Elif Farid Greta Hiro Ines Jonas Kemal Lena Mateo Nadia Omar Priya")
	verbs    = strings.Fields("likes visited planned cooked mentioned booked painted fixed ordered recommended studied adopted")
	objects  = strings.Fields("tea coffee hiking pottery guitar sourdough garden bicycle novel marathon museum violin kayak chess yoga camera puppy kitchen")
	places   = strings.Fields("Lisbon Kyoto Oslo Denver Cairo Quito Hanoi Dublin Austin Tbilisi Porto Seoul")
	times    = strings.Fields("yesterday weekend Monday Friday morning evening spring summer autumn winter")
	modifier = strings.Fields("again finally happily slowly recently often carefully together alone quietly")
)

type corpus struct{ seed uint64 }

func newCorpus(seed uint64) *corpus { return &corpus{seed} }

func pick(rng *rand.Rand, s []string) string { return s[rng.IntN(len(s))] }

// sentence is one turn of synthetic conversation.
func (c *corpus) sentence(rng *rand.Rand) string {
	switch rng.IntN(3) {
	case 0:
		return fmt.Sprintf("%s %s the %s in %s last %s, %s.", pick(rng, names), pick(rng, verbs), pick(rng, objects), pick(rng, places), pick(rng, times), pick(rng, modifier))
	case 1:
		return fmt.Sprintf("I %s a %s with %s this %s and want to try the %s next.", pick(rng, verbs), pick(rng, objects), pick(rng, names), pick(rng, times), pick(rng, objects))
	default:
		return fmt.Sprintf("%s says the %s near %s is %s worth it on a %s.", pick(rng, names), pick(rng, objects), pick(rng, places), pick(rng, modifier), pick(rng, times))
	}
}

// seedMemory is the i-th memory of principal p: deterministic, and unique
// within the partition (the turn number is spelled out in letters).
func (c *corpus) seedMemory(p, i int) memoryIn {
	rng := rand.New(rand.NewPCG(c.seed, uint64(p)<<32|uint64(i)))
	return memoryIn{
		Principal:    principal(p),
		Conversation: "session-" + strconv.Itoa(i/50),
		Kind:         "message",
		Source:       "user",
		Content:      c.sentence(rng) + " (turn " + suffix(int64(i)) + ")",
	}
}

// query is a question built from the words the memories use.
func (c *corpus) query(rng *rand.Rand) string {
	switch rng.IntN(3) {
	case 0:
		return fmt.Sprintf("What does %s think about the %s?", pick(rng, names), pick(rng, objects))
	case 1:
		return fmt.Sprintf("When did %s go to %s?", pick(rng, names), pick(rng, places))
	default:
		return fmt.Sprintf("Who %s the %s %s?", pick(rng, verbs), pick(rng, objects), pick(rng, modifier))
	}
}

// ---- /proc ----

// procStatusMiB reads a kB field of /proc/PID/status in MiB (0 if absent).
func procStatusMiB(pid, field string) float64 {
	b, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				kb, _ := strconv.ParseFloat(f[0], 64)
				return round(kb/1024, 1)
			}
		}
	}
	return 0
}

// cpuSeconds is the user+system CPU time of a process, from
// /proc/PID/stat (clock ticks of 1/100 s, the Linux USER_HZ).
func cpuSeconds(pid string) float64 {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3 (state); utime is field 14
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (u + st) / 100
}

// machineTicks reads the first line of /proc/stat: total, idle+iowait and
// steal ticks of all CPUs together.
func machineTicks() [3]float64 {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return [3]float64{}
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line) // cpu user nice system idle iowait irq softirq steal ...
	if len(f) < 9 || f[0] != "cpu" {
		return [3]float64{}
	}
	var t [3]float64
	for i, v := range f[1:] {
		x, _ := strconv.ParseFloat(v, 64)
		if i >= 8 {
			break // guest time is already counted in user
		}
		t[0] += x
		switch i {
		case 3, 4:
			t[1] += x
		case 7:
			t[2] += x
		}
	}
	return t
}

func round(x float64, digits int) float64 {
	p := 1.0
	for range digits {
		p *= 10
	}
	if x < 0 {
		return -float64(int64(-x*p+0.5)) / p
	}
	return float64(int64(x*p+0.5)) / p
}

// ---- output ----

func printTable(r *Report) {
	fmt.Printf("memgate load: %s, %d CPUs\n", r.Server, r.CPUs)
	for _, n := range r.Notes {
		fmt.Println("  " + n)
	}
	fmt.Println()
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	if r.Postgres {
		fmt.Fprintln(tw, "phase\treplicas\tworkers\tseconds\trequests\terrors\treq/s\tp50 ms\tp99 ms\tmax ms\tresults/recall\treplicas CPU %\tpostgres CPU %\tclient CPU %\tother CPU %\tidle %\tsteal %\t")
	} else {
		fmt.Fprintln(tw, "phase\tworkers\tseconds\trequests\terrors\treq/s\tp50 ms\tp99 ms\tmax ms\tresults/recall\tserver CPU %\tclient CPU %\tidle %\tsteal %\t")
	}
	for _, p := range r.Phases {
		res := "-"
		if p.Results > 0 || strings.Contains(p.Name, "recall") {
			res = strconv.FormatFloat(p.Results, 'f', 2, 64)
		}
		scpu := "-"
		if p.ServerCPU > 0 {
			scpu = strconv.FormatFloat(p.ServerCPU, 'f', 0, 64)
		}
		if r.Postgres {
			dcpu := "-"
			if p.DBCPU > 0 {
				dcpu = strconv.FormatFloat(p.DBCPU, 'f', 0, 64)
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%.1f\t%d\t%d\t%.0f\t%.2f\t%.2f\t%.2f\t%s\t%s\t%s\t%.0f\t%.0f\t%.0f\t%.0f\t\n",
				p.Name, p.Replicas, p.Workers, p.Seconds, p.Requests, p.Errors, p.PerSec, p.P50ms, p.P99ms, p.MaxMs, res, scpu, dcpu, p.ClientCPU, p.OtherCPU, p.IdlePct, p.StealPct)
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%d\t%d\t%.0f\t%.2f\t%.2f\t%.2f\t%s\t%s\t%.0f\t%.0f\t%.0f\t\n",
			p.Name, p.Workers, p.Seconds, p.Requests, p.Errors, p.PerSec, p.P50ms, p.P99ms, p.MaxMs, res, scpu, p.ClientCPU, p.IdlePct, p.StealPct)
	}
	tw.Flush()
	for _, p := range r.Phases {
		if p.Memories > 0 {
			fmt.Printf("\nseed: %d memories written, %.0f memories/s\n", p.Memories, float64(p.Memories)/p.Seconds)
		}
	}
	printCurve(r)
	if f := r.Fresh; f != nil {
		fmt.Printf("\nfreshness: %d pairs (remember on one replica, then at once recall it on the next), %d first recalls without the new memory, %d still without it after %s\n",
			f.Pairs, f.Stale, f.Lost, freshRetryFor)
		fmt.Printf("  the remember: p50 %.2f ms, p99 %.2f ms; the recall: p50 %.2f ms, p99 %.2f ms\n", f.RememberP50, f.RememberP99, f.RecallP50, f.RecallP99)
	}
	if len(r.ReplicaRSS) > 0 {
		fmt.Printf("replica RSS at the end (MiB): %v\n", r.ReplicaRSS)
	}
	fmt.Println("CPU % is of one core (200 = both of 2); idle and steal % are of the whole machine.")
	fmt.Printf("client peak RSS: %.1f MiB\n", r.ClientRSS)
	for _, t := range r.Targets {
		fmt.Printf("target %s: %s -> %s\n", t.Goal, t.Measured, t.Verdict)
	}
	fmt.Printf("errors: %d\n", r.Errors)
	for _, e := range r.ErrorSample {
		fmt.Println("  " + e)
	}
}

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}
