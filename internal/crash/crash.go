// Package crash is memgate's crash-durability harness (issue 11): it drives
// `memgate serve` children with a stream of remembers and supersessions,
// kills a child with SIGKILL at random moments, restarts it, re-sends every
// request that was not acknowledged (same Idempotency-Key, same body) until
// it is, and checks that every acknowledged memory is stored exactly once
// with its content hash intact, that every acknowledged supersession is in
// place (the new memory active and naming the old, the old superseded by
// it) and no supersession is half done or has two successors, and, on
// SQLite, that the database file passes PRAGMA integrity_check after every
// kill.
//
// A memory is acknowledged when the server answered its remember with a 2xx
// and its id: from then on the server must never lose it, and a retry of
// the same request must never store it twice. A supersession is a remember
// with "supersedes": a writer replaces one of its own acknowledged, still
// active memories, each at most once, so that the only second supersession
// of a memory the server sees is a retry of the first. The harness turns off the
// write gate's dedup (a policy file with "dedup": false) so that a re-sent
// content is stored again unless the idempotency key prevents it: dedup
// would fold the copy and hide a missing idempotency guarantee.
//
// Run is for the record run (bench/crash) and the short run of the test
// suite. It must never log memory content: problems name request numbers,
// memory ids and hashes only. It is for Unix (it sends SIGKILL).
package crash

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"
)

// Defaults for Config.
const (
	DefaultWriters      = 4
	DefaultMinDelay     = 10 * time.Millisecond
	DefaultMaxDelay     = 150 * time.Millisecond
	DefaultMaxBatch     = 4
	DefaultReadyTimeout = 30 * time.Second
	// maxProblems bounds Report.Problems: a broken server would otherwise
	// fill it with one line per memory.
	maxProblems = 20
)

// Config configures Run.
type Config struct {
	// Binary is the path of the memgate binary to run as `memgate serve`.
	Binary string
	// SQLite is the path of the database file the children serve; it must
	// not exist yet (the run creates it). Exactly one of SQLite and
	// Postgres is set.
	SQLite string
	// Postgres is the URL of an empty PostgreSQL database or schema (a
	// search_path parameter selects a fresh schema). It is handed to the
	// children in $MEMGATE_POSTGRES_URL, never on the command line.
	Postgres string
	// Replicas is the number of `memgate serve` processes over Postgres
	// (1 or 2; default 1). With 2, writers spread requests over both and
	// each kill takes one of them, chosen at random, while the other keeps
	// serving: writers re-send what failed on the killed one to the
	// survivor at once. SQLite allows 1 only.
	Replicas int
	// Kills is the number of SIGKILLs (at least 1).
	Kills int
	// Writers is the number of concurrent writers (default DefaultWriters).
	// Each sends single remembers and, one time in three, a batch of 2 to
	// MaxBatch memories (default DefaultMaxBatch); and, one request in
	// four once it has memories acknowledged, a supersession of one of
	// them it has not superseded yet: each request with its own
	// Idempotency-Key.
	Writers  int
	MaxBatch int
	// MinDelay and MaxDelay bound the random time between the writers
	// starting again after a check and the next kill (defaults
	// DefaultMinDelay and DefaultMaxDelay).
	MinDelay, MaxDelay time.Duration
	// Seed seeds every random choice (delays, victims, batch sizes); 0
	// picks one at random. The seed used is in the Report. Scheduling is
	// not reproducible, so a seed replays the choices, not the run.
	Seed uint64
	// FileChecker, when set, is a program that checks the SQLite file
	// instead of this process: run as "FileChecker PATH", it exits 0 when
	// the file is sound and prints what is wrong otherwise (the command
	// internal/crash/sqlitecheck is one, running CheckSQLite). Tests under -race
	// use it: the race detector makes the pure-Go SQLite some 80 times
	// slower, too slow to check after every kill.
	FileChecker string
	// Dir receives the policy file and the children's JSON logs (one file
	// per replica, appended across restarts). Default: a temporary
	// directory, removed at the end unless the run failed (Report.Dir
	// names it then).
	Dir string
	// Progress, when set, receives a line every tenth of the kills;
	// Trace, when set, a line per kill with the time of each step.
	Progress, Trace io.Writer
	// ReadyTimeout bounds one start of a child (default
	// DefaultReadyTimeout).
	ReadyTimeout time.Duration
	// NoIdempotencyKey sends requests without an Idempotency-Key: a
	// control that shows what the checks find when a retry is not
	// recognised (a remember stored before the kill, whose answer was
	// lost, is stored again by its retry: duplicates; a supersession's
	// retry is refused as a conflict, its old memory being superseded
	// already: Report.Conflicts).
	NoIdempotencyKey bool
}

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	if c.Replicas == 0 {
		c.Replicas = 1
	}
	if c.Writers == 0 {
		c.Writers = DefaultWriters
	}
	if c.MaxBatch == 0 {
		c.MaxBatch = DefaultMaxBatch
	}
	if c.MinDelay == 0 && c.MaxDelay == 0 {
		c.MinDelay, c.MaxDelay = DefaultMinDelay, DefaultMaxDelay
	}
	if c.ReadyTimeout == 0 {
		c.ReadyTimeout = DefaultReadyTimeout
	}
	return c
}

// Validate reports a configuration that cannot work.
func (c Config) Validate() error {
	switch {
	case c.Binary == "":
		return errors.New("crash: the memgate binary is required")
	case (c.SQLite == "") == (c.Postgres == ""):
		return errors.New("crash: name either a SQLite file or a PostgreSQL URL")
	case c.Replicas < 1 || c.Replicas > 2:
		return errors.New("crash: replicas must be 1 or 2")
	case c.SQLite != "" && c.Replicas != 1:
		return errors.New("crash: a SQLite database is served by one process")
	case c.Kills < 1:
		return errors.New("crash: kills must be at least 1")
	case c.Writers < 1:
		return errors.New("crash: writers must be at least 1")
	case c.MaxBatch < 2 || c.MaxBatch > 100:
		return errors.New("crash: max batch must be between 2 and 100")
	case c.MinDelay < 0 || c.MaxDelay < c.MinDelay:
		return errors.New("crash: need 0 <= min delay <= max delay")
	}
	if c.SQLite != "" {
		if _, err := os.Stat(c.SQLite); err == nil {
			return fmt.Errorf("crash: %s exists: the run needs a new database", c.SQLite)
		}
	}
	return nil
}

// Report is the outcome of a run. Lost, Corrupt, Duplicates, Strays,
// HalfDone, DoubleSuccessors, WrongState, Refused, Conflicts,
// CountMismatches and IntegrityFailures must all be 0 (see Err).
type Report struct {
	Backend  string `json:"backend"` // "sqlite" or "postgres"
	Replicas int    `json:"replicas"`
	Seed     uint64 `json:"seed"`
	Writers  int    `json:"writers"`
	Kills    int    `json:"kills"`

	// Requests is the number of remembers acknowledged, supersessions
	// included (each once, however often it was sent); Acknowledged the
	// memories they stored; Supersessions the supersessions among them.
	Requests      int `json:"requests"`
	Acknowledged  int `json:"acknowledged"`
	Supersessions int `json:"supersessions"`
	// InFlightAtKill sums, over the kills, the requests sent to the victim
	// and not yet answered when the signal went out. Retried counts the
	// requests that needed more than one send, Resends the extra sends.
	// Replayed counts retries the server answered as replays: the first
	// send had been stored before the kill, only its answer was lost.
	// SupersessionsReplayed counts the supersessions among Replayed.
	InFlightAtKill        int `json:"in_flight_at_kill"`
	Retried               int `json:"retried"`
	Resends               int `json:"resends"`
	Replayed              int `json:"replayed"`
	SupersessionsReplayed int `json:"supersessions_replayed"`
	// ServerErrors counts 5xx answers (re-sent like a failed connection).
	ServerErrors int `json:"server_errors"`

	// Lost: acknowledged memories not found. Corrupt: found with another
	// content or content hash. Duplicates: extra stored copies of an
	// acknowledged memory. Strays: stored memories of no acknowledged
	// request. Refused: requests answered with a 4xx (a conflict on a
	// retry included) or with a body the harness cannot read, never
	// acknowledged.
	Lost       int `json:"lost"`
	Corrupt    int `json:"corrupt"`
	Duplicates int `json:"duplicates"`
	Strays     int `json:"strays"`
	Refused    int `json:"refused"`
	// HalfDone: old memories whose supersession is half done (named in
	// supersedes by a memory it is not superseded by, or superseded by a
	// memory that is not stored or does not name it). DoubleSuccessors:
	// old memories named in supersedes by more than one memory.
	// WrongState: acknowledged memories whose status or links are not
	// those the acknowledged requests gave them (an old memory left active
	// or superseded by another, a new one not active or not naming its
	// old one).
	HalfDone         int `json:"half_done"`
	DoubleSuccessors int `json:"double_successors"`
	WrongState       int `json:"wrong_state"`
	// Conflicts counts retried supersessions answered 409 conflict because
	// their first send had superseded the old memory: what a retry
	// without Idempotency-Key meets. The harness then reads the old
	// memory's successor and acknowledges the request with it when it is
	// the request's memory (else the request is refused), so that the
	// stored state is checked as for any other supersession.
	Conflicts int `json:"conflicts"`
	// StoredAtEnd is the number of memories the final listing found;
	// CountMismatches counts the other counts that disagree with it
	// (/v1/stats, and on PostgreSQL SELECT count(*) FROM memories).
	StoredAtEnd     int `json:"stored_at_end"`
	CountMismatches int `json:"count_mismatches"`

	// Integrity is "ok" when every check passed, "failed" otherwise, and
	// "n/a" on PostgreSQL (no file to check); IntegrityChecks counts the
	// PRAGMA integrity_check + foreign_key_check runs (one per kill and
	// one after the final clean shutdown).
	Integrity         string  `json:"integrity"`
	IntegrityChecks   int     `json:"integrity_checks"`
	IntegrityFailures int     `json:"integrity_failures"`
	CheckP50ms        float64 `json:"integrity_check_p50_ms,omitempty"`

	// Restart latency from SIGKILL to the new process answering /healthz,
	// without the time the harness spends checking the file in between.
	RestartP50ms float64 `json:"restart_p50_ms"`
	RestartP99ms float64 `json:"restart_p99_ms"`
	RestartMaxms float64 `json:"restart_max_ms"`

	Wall     time.Duration `json:"-"`
	WallSecs float64       `json:"wall_s"`
	// Dir holds the children's logs when a check failed (else removed,
	// unless Config.Dir named it).
	Dir string `json:"dir,omitempty"`
	// Problems describes the first failures (ids and request numbers,
	// never content).
	Problems []string `json:"problems,omitempty"`
}

// Err is nil when the run kept every guarantee, else an error saying which
// it broke.
func (r *Report) Err() error {
	var errs []error
	add := func(n int, what string) {
		if n > 0 {
			errs = append(errs, fmt.Errorf("%d %s", n, what))
		}
	}
	add(r.Lost, "acknowledged memories lost")
	add(r.Corrupt, "acknowledged memories with another content or hash")
	add(r.Duplicates, "duplicate memories stored")
	add(r.Strays, "memories stored by no acknowledged request")
	add(r.HalfDone, "supersessions half done")
	add(r.DoubleSuccessors, "memories with two successors")
	add(r.WrongState, "acknowledged memories with another status or supersession link")
	add(r.Refused, "requests refused")
	add(r.Conflicts, "retried supersessions answered 409 conflict")
	add(r.IntegrityFailures, "integrity checks failed")
	add(r.CountMismatches, "memory counts that disagree with the listing")
	if len(errs) == 0 {
		return nil
	}
	err := errors.Join(errs...)
	for _, p := range r.Problems {
		err = errors.Join(err, errors.New("  "+p))
	}
	return err
}

// run is the state of one Run.
type run struct {
	cfg    Config
	rep    *Report
	dir    string
	policy string
	hc     *http.Client
	key    string // the admin key's secret, "Bearer …"

	rng *rand.Rand // the kill loop's: delays and victims

	children []*child
	tg       targets
	led      ledger
	wr       writers

	// mu guards problems, the sets of ids found wrong, the latencies and
	// the report's counters while the run goes on.
	mu       sync.Mutex
	problems []string
	lost     map[string]bool // acknowledged, not found
	corrupt  map[string]bool // found (or acknowledged) with another content or hash
	dups     map[string]bool // extra copies of an acknowledged item
	strays   map[string]bool // stored, of no acknowledged request
	halfDone map[string]bool // old ids of half-done supersessions
	doubles  map[string]bool // old ids with two successors
	wrong    map[string]bool // acknowledged, in the wrong state
	seen     map[string]bool // every id a round's listing returned
	// named maps an old id to the memories the rounds' listings found
	// naming it in supersedes (checkLinks). Used by verifyRound only.
	named   map[string][]string
	restart []time.Duration
	checks  []time.Duration
}

// Run drives the children through cfg.Kills kills and checks them. The
// error is about the harness (a child that does not start, a context
// cancelled); a broken guarantee is in the Report (see Report.Err).
func Run(ctx context.Context, cfg Config) (_ *Report, err error) {
	r, err := newRun(cfg)
	if err != nil {
		return nil, err
	}
	defer r.hc.CloseIdleConnections()
	if r.cfg.Dir == "" {
		defer func() {
			if err == nil && r.rep.Err() == nil {
				os.RemoveAll(r.dir)
			} else {
				r.rep.Dir = r.dir
			}
		}()
	}
	start := time.Now()
	err = r.loop(ctx)
	r.finish(time.Since(start))
	return r.rep, err
}

// newRun validates cfg and prepares a run: its directory and policy file.
func newRun(cfg Config) (*run, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Seed == 0 {
		cfg.Seed = rand.Uint64()
	}
	r := &run{cfg: cfg, rep: &Report{
		Backend: "sqlite", Replicas: cfg.Replicas, Seed: cfg.Seed, Writers: cfg.Writers, Integrity: "ok",
	}, lost: map[string]bool{}, corrupt: map[string]bool{}, dups: map[string]bool{}, strays: map[string]bool{},
		halfDone: map[string]bool{}, doubles: map[string]bool{}, wrong: map[string]bool{},
		seen: map[string]bool{}, named: map[string][]string{}}
	if cfg.Postgres != "" {
		r.rep.Backend, r.rep.Integrity = "postgres", "n/a"
	}
	r.rng = rand.New(rand.NewPCG(cfg.Seed, 0))
	r.hc = newHTTPClient(cfg.Writers + 4)
	r.dir = cfg.Dir
	if r.dir == "" {
		d, err := os.MkdirTemp("", "memgate-crash-")
		if err != nil {
			return nil, err
		}
		r.dir = d
	} else if err := os.MkdirAll(r.dir, 0o700); err != nil {
		return nil, err
	}
	var err error
	if r.policy, err = writePolicy(r.dir); err != nil {
		return nil, err
	}
	return r, nil
}

// startAll starts every replica and checks that the database is empty.
func (r *run) startAll(ctx context.Context) error {
	r.children = make([]*child, r.cfg.Replicas)
	r.tg.init(r.cfg.Replicas)
	for i := range r.children {
		c, err := r.start(ctx, i)
		if err != nil {
			return err
		}
		r.children[i] = c
		r.tg.up(i, c.url)
	}
	if n, err := r.storedCount(ctx); err != nil {
		return err
	} else if n != 0 {
		return fmt.Errorf("crash: the database holds %d memories: the run needs an empty one", n)
	}
	return nil
}

// killAll kills every child still running.
func (r *run) killAll() {
	for _, c := range r.children {
		if c != nil {
			c.kill()
		}
	}
}

// loop starts the children, runs the kills and the final check.
func (r *run) loop(ctx context.Context) error {
	defer r.killAll()
	if err := r.startAll(ctx); err != nil {
		return err
	}

	wctx, stopWriters := context.WithCancel(ctx)
	r.wr.start(wctx, r)
	defer func() {
		stopWriters()
		r.wr.wait()
	}()

	every := max(1, r.cfg.Kills/10)
	for k := 1; k <= r.cfg.Kills; k++ {
		if err := r.kill(ctx, k); err != nil {
			return err
		}
		if k%every == 0 && r.cfg.Progress != nil {
			r.mu.Lock()
			reqs, _, sups := r.led.totals()
			fmt.Fprintf(r.cfg.Progress, "crash: %d/%d kills, %d requests acknowledged (%d supersessions), %d lost, %d duplicates, %d half done, %d integrity failures\n",
				k, r.cfg.Kills, reqs, sups, r.rep.Lost, r.rep.Duplicates, r.rep.HalfDone, r.rep.IntegrityFailures)
			r.mu.Unlock()
		}
	}
	r.wr.pause()
	stopWriters()
	r.wr.wait()
	if err := r.verifyAll(ctx); err != nil {
		return err
	}
	// A clean shutdown, then one more check of the file.
	for _, c := range r.children {
		c.stop()
	}
	if r.cfg.SQLite != "" {
		r.checkFile(ctx, "after the final shutdown")
	}
	return nil
}

// kill is one round: the writers run for a random delay, one child is
// killed, the file checked, the child restarted; then the writers pause
// once every request is acknowledged, and the round's memories are
// verified.
func (r *run) kill(ctx context.Context, k int) error {
	lo, hi := r.cfg.MinDelay, r.cfg.MaxDelay
	delay := lo
	if hi > lo {
		delay += time.Duration(r.rng.Int64N(int64(hi - lo)))
	}
	victim := 0
	if len(r.children) > 1 {
		victim = r.rng.IntN(len(r.children))
	}
	r.wr.resume()
	select {
	case <-time.After(delay):
	case <-ctx.Done():
		return ctx.Err()
	}
	c := r.children[victim]
	n := int(r.tg.inflight(victim))
	killedAt := time.Now()
	c.kill()
	down := time.Since(killedAt)
	r.tg.down(victim)
	r.hc.CloseIdleConnections()
	r.mu.Lock()
	r.rep.Kills++
	r.rep.InFlightAtKill += n
	r.mu.Unlock()

	if r.cfg.SQLite != "" {
		r.checkFile(ctx, fmt.Sprintf("after kill %d", k))
	}
	startedAt := time.Now()
	nc, err := r.start(ctx, victim)
	if err != nil {
		return fmt.Errorf("crash: restart after kill %d: %w", k, err)
	}
	r.children[victim] = nc
	r.tg.up(victim, nc.url)
	r.mu.Lock()
	r.restart = append(r.restart, down+time.Since(startedAt))
	r.mu.Unlock()

	ready := time.Now()
	if err := r.wr.pauseCtx(ctx); err != nil {
		return err
	}
	paused := time.Now()
	err = r.verifyRound(ctx, k)
	if r.cfg.Trace != nil {
		checked := ""
		if r.cfg.SQLite != "" {
			checked = fmt.Sprintf(", file checked in %v", startedAt.Sub(killedAt.Add(down)).Round(time.Millisecond))
		}
		fmt.Fprintf(r.cfg.Trace, "crash: kill %d (replica %d): after %v with %d in flight; reaped in %v%s, restarted in %v; writers drained in %v, round verified in %v\n",
			k, victim+1, delay.Round(time.Millisecond), n, down.Round(time.Millisecond), checked,
			ready.Sub(startedAt).Round(time.Millisecond), paused.Sub(ready).Round(time.Millisecond), time.Since(paused).Round(time.Millisecond))
	}
	return err
}

// problem records the description of a failure (ids and request numbers,
// never content); the first maxProblems are kept.
func (r *run) problem(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.problems) < maxProblems {
		r.problems = append(r.problems, fmt.Sprintf(format, args...))
	}
}

// finish fills the report's derived figures.
func (r *run) finish(wall time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rep := r.rep
	rep.Wall = wall
	rep.WallSecs = round(wall.Seconds(), 1)
	rep.Requests, rep.Acknowledged, rep.Supersessions = r.led.totals()
	s := r.wr.stats()
	rep.Retried, rep.Resends, rep.Replayed, rep.ServerErrors, rep.Refused = s.retried, s.resends, s.replayed, s.serverErrors, s.refused
	rep.SupersessionsReplayed, rep.Conflicts = s.supersedeReplayed, s.conflicts
	rep.RestartP50ms, rep.RestartP99ms, rep.RestartMaxms = ms(quantile(r.restart, 0.5)), ms(quantile(r.restart, 0.99)), ms(quantile(r.restart, 1))
	if len(r.checks) > 0 {
		rep.CheckP50ms = ms(quantile(r.checks, 0.5))
	}
	rep.Lost, rep.Corrupt, rep.Duplicates, rep.Strays = len(r.lost), len(r.corrupt), len(r.dups), len(r.strays)
	rep.HalfDone, rep.DoubleSuccessors, rep.WrongState = len(r.halfDone), len(r.doubles), len(r.wrong)
	if rep.IntegrityFailures > 0 {
		rep.Integrity = "failed"
	}
	rep.Problems = slices.Clone(r.problems)
}

func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(q*float64(len(s)-1) + 0.5)
	return s[min(i, len(s)-1)]
}

func ms(d time.Duration) float64 { return round(float64(d)/float64(time.Millisecond), 1) }

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
