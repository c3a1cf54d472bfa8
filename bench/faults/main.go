// Command faults puts a "memgate serve" child through two real faults under
// load and reports what clients saw, for RELIABILITY.md:
//
//   - pg-restart: a server over PostgreSQL (a fresh database -pg-db of the
//     server -postgres names) while -restart runs (default "pg_ctlcluster
//     15 main restart"): the requests that met the outage and how they
//     failed, the slowest answer, how long after PostgreSQL was back the
//     server answered every request again (the same process: it is never
//     restarted), acknowledged writes lost (every acknowledged id is read
//     back: must be 0), and failed writes stored partly (a batch: must be
//     0) or whole (a connection cut during COMMIT: the client cannot
//     know).
//   - full-disk: a server whose SQLite database lives on a tmpfs of -tmpfs
//     bytes, written to until the disk is full, held full for -hold under
//     load, then remounted larger: how writes and reads answered while
//     full, PRAGMA integrity_check, how long after the remount the first
//     write succeeded, and acknowledged writes lost.
//
// Both need root (the restart and the mount) and are run by hand, never by
// go test: the restart takes down the PostgreSQL every test shares.
//
//	cd bench && sudo go run ./faults -postgres 'postgres://memgate:memgate@127.0.0.1:5432/memgate?sslmode=disable'
//	cd bench && sudo go run ./faults -scenario full-disk
//
// The run exits 1 when a must-be-zero figure is not: an acknowledged write
// lost, a partial batch, a 500, a transport error, or no recovery.
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite"

	"github.com/memgate/memgate/bench/internal/memgatebin"
	"github.com/memgate/memgate/bench/internal/pgadmin"
	"github.com/memgate/memgate/sqlite"
)

type options struct {
	scenario string
	postgres string
	pgDB     string
	restart  string
	tmpfs    int64
	hold     time.Duration
	warm     time.Duration
	workers  int
	steady   time.Duration
	timeout  time.Duration
}

// Report is one scenario's figures.
type Report struct {
	Scenario string   `json:"scenario"`
	Notes    []string `json:"notes"`
	Workers  int      `json:"workers"`
	Requests int      `json:"requests"`

	// The fault: during the outage (pg-restart: from the first failed
	// request to the last) or while the disk was full (full-disk).
	FaultSeconds   float64        `json:"fault_s"`
	FaultRequests  int            `json:"fault_requests"`
	FaultStatuses  map[string]int `json:"fault_statuses"` // "op status code" -> count
	SlowestFaultMs float64        `json:"slowest_fault_answer_ms"`
	Slowest        string         `json:"slowest_fault_answer"`
	RestartSeconds float64        `json:"restart_command_s,omitempty"`
	// DownSeconds: how long a probe (a new connection and SELECT 1 every
	// 50 ms, straight to PostgreSQL) could not get an answer.
	DownSeconds float64 `json:"postgres_down_s,omitempty"`

	// Recovery: from PostgreSQL accepting again (the restart command's
	// end) or from the remount, to the first success of a write, and to
	// the last failure (after which every request succeeded for -steady).
	FirstWriteMs float64 `json:"first_write_after_ms"`
	RecoveredMs  float64 `json:"all_ok_after_ms"`

	StoredBeforeFull int    `json:"stored_before_full,omitempty"`
	FilesWhenFull    string `json:"files_when_full,omitempty"`
	Integrity        string `json:"integrity_check,omitempty"`

	Acked          int  `json:"acknowledged_writes"`
	AckedLost      int  `json:"acknowledged_writes_lost"`
	FailedStored   int  `json:"failed_writes_stored_whole"`
	PartialBatches int  `json:"partial_batches"`
	Internal       int  `json:"status_500"`
	Transport      int  `json:"transport_errors"`
	OK             bool `json:"ok"`
}

func main() {
	var o options
	asJSON := flag.Bool("json", false, "print JSON instead of a table")
	flag.StringVar(&o.scenario, "scenario", "all", "pg-restart, full-disk or all")
	flag.StringVar(&o.postgres, "postgres", os.Getenv("MEMGATE_TEST_POSTGRES"), "PostgreSQL URL to create the scenario's database from (default $MEMGATE_TEST_POSTGRES)")
	flag.StringVar(&o.pgDB, "pg-db", "memgate_faults", "the pg-restart scenario's database: dropped if it exists, created, dropped at the end")
	flag.StringVar(&o.restart, "restart", "pg_ctlcluster 15 main restart", "shell command that restarts PostgreSQL")
	flag.Int64Var(&o.tmpfs, "tmpfs", 2<<20, "size of the full-disk scenario's tmpfs in bytes (remounted at 16 times that, room for the load to go on past -steady)")
	flag.DurationVar(&o.hold, "hold", 3*time.Second, "how long the disk is held full under load")
	flag.DurationVar(&o.warm, "warm", 3*time.Second, "load before the fault")
	flag.IntVar(&o.workers, "c", 8, "concurrent workers")
	flag.DurationVar(&o.steady, "steady", 3*time.Second, "recovered: this long with every request succeeding")
	flag.DurationVar(&o.timeout, "timeout", 60*time.Second, "give up on recovery after this long")
	flag.Parse()
	if o.workers < 1 || o.tmpfs < 64<<10 {
		fmt.Fprintln(os.Stderr, "faults: -c must be positive and -tmpfs at least 64 KiB")
		os.Exit(2)
	}
	ctx := context.Background()
	var reps []*Report
	var failed bool
	run := func(name string, f func(context.Context, options) (*Report, error)) {
		rep, err := f(ctx, o)
		if err != nil {
			fmt.Fprintf(os.Stderr, "faults: %s: %v\n", name, err)
			failed = true
		}
		if rep != nil {
			reps = append(reps, rep)
			failed = failed || !rep.OK
		}
	}
	switch o.scenario {
	case "pg-restart":
		run(o.scenario, runPGRestart)
	case "full-disk":
		run(o.scenario, runFullDisk)
	case "all":
		run("pg-restart", runPGRestart)
		run("full-disk", runFullDisk)
	default:
		fmt.Fprintln(os.Stderr, "faults: -scenario is pg-restart, full-disk or all")
		os.Exit(2)
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		enc.Encode(reps)
	} else {
		for _, r := range reps {
			printReport(r)
		}
	}
	if failed {
		os.Exit(1)
	}
}

// runPGRestart is the pg-restart scenario.
func runPGRestart(ctx context.Context, o options) (*Report, error) {
	if o.postgres == "" {
		return nil, errors.New("pg-restart needs -postgres (or $MEMGATE_TEST_POSTGRES)")
	}
	rep := &Report{Scenario: "pg-restart", Workers: o.workers}
	dbURL, err := pgadmin.CreateDatabase(ctx, o.postgres, o.pgDB)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err := pgadmin.DropDatabase(context.WithoutCancel(ctx), o.postgres, o.pgDB); err != nil {
			fmt.Fprintln(os.Stderr, "faults: drop the database:", err)
		}
	}()
	dir, err := os.MkdirTemp("", "memgate-faults-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	bin, err := memgatebin.Build(ctx, dir)
	if err != nil {
		return nil, err
	}
	// The URL goes in $MEMGATE_POSTGRES_URL, out of the process list.
	c, err := startChild(ctx, bin, []string{"serve", "--addr", "127.0.0.1:0", "--rate", "-1", "--sweep-every", "0"},
		memgatebin.Env("MEMGATE_POSTGRES_URL="+dbURL), filepath.Join(dir, "server.log"))
	if err != nil {
		return nil, err
	}
	defer c.Stop()
	rep.Notes = append(rep.Notes, "memgate serve --postgres (one child process, never restarted), "+strconv.Itoa(o.workers)+
		" workers: remember, batch of 3, recall, recall", "restart: "+o.restart)

	l := newLoad(c.URL, c.Key)
	if err := l.seed(ctx); err != nil {
		return rep, err
	}
	l.start(o.workers)
	time.Sleep(o.warm)
	pr := startProbe(o.postgres)
	restartAt := time.Now()
	out, err := exec.CommandContext(ctx, "sh", "-c", o.restart).CombinedOutput()
	cmdDone := time.Now()
	if err != nil {
		l.stopAll()
		pr.stop()
		return rep, fmt.Errorf("%s: %v: %s", o.restart, err, out)
	}
	rep.RestartSeconds = round(cmdDone.Sub(restartAt).Seconds(), 2)
	// PostgreSQL is back when the probe first connects after having
	// failed to (or when the command returned, if the probe never saw it
	// down).
	backAt := cmdDone
	for backAt == cmdDone && time.Since(cmdDone) < o.timeout {
		if down, up := pr.window(restartAt); !up.IsZero() {
			backAt = up
			rep.DownSeconds = round(up.Sub(down).Seconds(), 2)
		}
		time.Sleep(50 * time.Millisecond)
	}
	pr.stop()
	lastFail, recovered := l.waitSteady(backAt, o.steady, o.timeout)
	l.stopAll()
	all := l.results()
	rep.Requests = len(all)

	// The outage: from the first failed request's start to the last
	// failed request's end.
	var first, last time.Time
	for _, r := range all {
		if r.failed() {
			if first.IsZero() || r.start.Before(first) {
				first = r.start
			}
			if r.end.After(last) {
				last = r.end
			}
		}
	}
	if !first.IsZero() {
		rep.FaultSeconds = round(last.Sub(first).Seconds(), 2)
		rep.tally(all, first, last)
	}
	rep.recovery(all, backAt, lastFail)
	if !recovered {
		rep.Notes = append(rep.Notes, fmt.Sprintf("NOT recovered: requests still failed %s after PostgreSQL was back", o.timeout))
	}
	if err := l.verify(ctx, rep, all); err != nil {
		return rep, err
	}
	rep.OK = recovered && rep.AckedLost == 0 && rep.PartialBatches == 0 && rep.Internal == 0 && rep.Transport == 0
	return rep, nil
}

// runFullDisk is the full-disk scenario.
func runFullDisk(ctx context.Context, o options) (*Report, error) {
	rep := &Report{Scenario: "full-disk", Workers: o.workers}
	dir, err := os.MkdirTemp("", "memgate-faults-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	bin, err := memgatebin.Build(ctx, dir)
	if err != nil {
		return nil, err
	}
	disk := filepath.Join(dir, "disk")
	if err := os.Mkdir(disk, 0o700); err != nil {
		return nil, err
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+strconv.FormatInt(o.tmpfs, 10), "memgate-faults", disk).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("mount a tmpfs (needs root): %v: %s", err, out)
	}
	defer func() {
		if out, err := exec.Command("umount", disk).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "faults: umount %s: %v: %s\n", disk, err, out)
		}
	}()
	path := filepath.Join(disk, "m.db")
	c, err := startChild(ctx, bin, []string{"serve", "--addr", "127.0.0.1:0", "--db", path, "--rate", "-1", "--sweep-every", "0"},
		memgatebin.Env(), filepath.Join(dir, "server.log"))
	if err != nil {
		return nil, err
	}
	defer c.Stop()
	rep.Notes = append(rep.Notes, fmt.Sprintf("memgate serve --db on a %d KiB tmpfs (database, WAL and shared memory file), %d workers: remember, batch of 3, recall, recall; held full %s, then remounted at %d KiB",
		o.tmpfs>>10, o.workers, o.hold, 16*o.tmpfs>>10))

	l := newLoad(c.URL, c.Key)
	if err := l.seed(ctx); err != nil {
		return rep, err
	}
	l.start(o.workers)
	deadline := time.Now().Add(o.timeout)
	var fullAt time.Time
	for fullAt.IsZero() {
		if time.Now().After(deadline) {
			l.stopAll()
			return rep, fmt.Errorf("the disk did not fill within %s", o.timeout)
		}
		time.Sleep(20 * time.Millisecond)
		for _, r := range l.results() {
			if r.op != "recall" && r.status == http.StatusServiceUnavailable {
				fullAt = r.start
				break
			}
		}
	}
	time.Sleep(o.hold)
	remountAt := time.Now()
	rep.FaultSeconds = round(remountAt.Sub(fullAt).Seconds(), 2)
	rep.Integrity = integrity(path)
	rep.FilesWhenFull = fileSizes(path)
	if out, err := exec.Command("mount", "-o", "remount,size="+strconv.FormatInt(16*o.tmpfs, 10), disk).CombinedOutput(); err != nil {
		l.stopAll()
		return rep, fmt.Errorf("remount larger: %v: %s", err, out)
	}
	lastFail, recovered := l.waitSteady(remountAt, o.steady, o.timeout)
	l.stopAll()
	all := l.results()
	rep.Requests = len(all)
	for _, r := range all {
		if r.ok() && r.op != "recall" && r.end.Before(fullAt) {
			rep.StoredBeforeFull += len(r.ids)
		}
	}
	rep.tally(all, fullAt, remountAt)
	rep.recovery(all, remountAt, lastFail)
	if !recovered {
		rep.Notes = append(rep.Notes, fmt.Sprintf("NOT recovered: requests still failed %s after the remount", o.timeout))
	}
	if err := l.verify(ctx, rep, all); err != nil {
		return rep, err
	}
	if after := integrity(path); after != "ok" {
		rep.Integrity += ", after: " + after
	}
	rep.OK = recovered && rep.Integrity == "ok" && rep.AckedLost == 0 && rep.PartialBatches == 0 && rep.Internal == 0 && rep.Transport == 0
	return rep, nil
}

// tally counts the requests that overlapped [from, to] by operation,
// status and code, and the slowest of them; and every 500 and transport
// error of the run.
func (r *Report) tally(all []result, from, to time.Time) {
	r.FaultStatuses = map[string]int{}
	for _, x := range all {
		if x.status == http.StatusInternalServerError {
			r.Internal++
		}
		if x.err != nil {
			r.Transport++
		}
		if x.end.Before(from) || x.start.After(to) {
			continue
		}
		r.FaultRequests++
		key := x.op + " " + strconv.Itoa(x.status)
		if x.err != nil {
			key = x.op + " transport error"
		} else if x.code != "" {
			key += " " + x.code
		}
		r.FaultStatuses[key]++
		if took := ms(x.end.Sub(x.start)); took > r.SlowestFaultMs {
			r.SlowestFaultMs, r.Slowest = took, key
		}
	}
}

// recovery sets the time from back (the fault gone) to the first
// successful write started after it, and to the last failure.
func (r *Report) recovery(all []result, back, lastFail time.Time) {
	var first time.Time
	for _, x := range all {
		if x.ok() && x.op != "recall" && !x.start.Before(back) && (first.IsZero() || x.end.Before(first)) {
			first = x.end
		}
	}
	if !first.IsZero() {
		r.FirstWriteMs = ms(first.Sub(back))
	}
	r.RecoveredMs = ms(max(lastFail.Sub(back), 0))
}

// probe connects to PostgreSQL every 50 ms and records when it fails
// and when it answers.
type probe struct {
	mu   sync.Mutex
	log  []probeResult
	done chan struct{}
	wg   sync.WaitGroup
}

type probeResult struct {
	at time.Time
	ok bool
}

func startProbe(dbURL string) *probe {
	p := &probe{done: make(chan struct{})}
	p.wg.Go(func() {
		for {
			select {
			case <-p.done:
				return
			case <-time.After(50 * time.Millisecond):
			}
			at := time.Now()
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			conn, err := pgx.Connect(ctx, dbURL)
			if err == nil {
				_, err = conn.Exec(ctx, "SELECT 1")
				conn.Close(ctx)
			}
			cancel()
			p.mu.Lock()
			p.log = append(p.log, probeResult{at, err == nil})
			p.mu.Unlock()
		}
	})
	return p
}

// window returns the first failed probe after since and the first
// successful one after that (zero while there is none).
func (p *probe) window(since time.Time) (down, up time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range p.log {
		switch {
		case r.at.Before(since):
		case down.IsZero() && !r.ok:
			down = r.at
		case !down.IsZero() && r.ok:
			return down, r.at
		}
	}
	return down, time.Time{}
}

func (p *probe) stop() {
	close(p.done)
	p.wg.Wait()
}

// result is one request.
type result struct {
	op         string   // remember, batch, recall
	tokens     []string // content tokens of a write
	ids        []string // acknowledged ids
	start, end time.Time
	status     int
	code       string
	err        error
}

func (r result) ok() bool     { return r.err == nil && r.status/100 == 2 }
func (r result) failed() bool { return !r.ok() }

// load drives one server with workers and keeps every result.
type load struct {
	base, key string
	hc        *http.Client
	seq       atomic.Int64
	stop      chan struct{}
	wg        sync.WaitGroup

	mu  sync.Mutex
	all []result
}

func newLoad(base, key string) *load {
	return &load{base: base, key: key, stop: make(chan struct{}),
		hc: &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
}

const principal = "fault-p"

// memory is a memory of about 1 KiB whose content starts with token.
func memory(token string) string {
	b, _ := json.Marshal(map[string]string{"principal": principal, "kind": "fact", "source": "user", "reason": "fault bench",
		"content": token + " The tomatoes by the south fence want water every second evening; " +
			strings.Repeat("the gardener keeps a notebook of what grew where and when. ", 14)})
	return string(b)
}

func (l *load) do(ctx context.Context, op string) result {
	r := result{op: op}
	var path, body string
	switch op {
	case "remember":
		r.tokens = []string{"r" + strconv.FormatInt(l.seq.Add(1), 10)}
		path, body = "/v1/memories", memory(r.tokens[0])
	case "batch":
		n := strconv.FormatInt(l.seq.Add(1), 10)
		var items []string
		for i := range 3 {
			r.tokens = append(r.tokens, "b"+n+"-"+strconv.Itoa(i))
			items = append(items, memory(r.tokens[i]))
		}
		path, body = "/v1/memories", `{"memories":[`+strings.Join(items, ",")+`]}`
	default:
		path, body = "/v1/recall", `{"principal":"`+principal+`","query":"When do the tomatoes by the south fence want water?"}`
	}
	req, _ := http.NewRequestWithContext(ctx, "POST", l.base+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+l.key)
	r.start = time.Now()
	resp, err := l.hc.Do(req)
	if err != nil {
		r.end, r.err = time.Now(), err
		return r
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	r.end, r.status = time.Now(), resp.StatusCode
	if r.ok() {
		var out struct {
			Memories []struct {
				ID string `json:"id"`
			} `json:"memories"`
		}
		json.Unmarshal(b, &out)
		for _, m := range out.Memories {
			r.ids = append(r.ids, m.ID)
		}
	} else {
		var e struct {
			Error struct {
				Code string `json:"code"`
			} `json:"error"`
		}
		json.Unmarshal(b, &e)
		r.code = e.Error.Code
	}
	return r
}

// seed stores a few memories for the recalls to find.
func (l *load) seed(ctx context.Context) error {
	for range 3 {
		if r := l.do(ctx, "batch"); !r.ok() {
			return fmt.Errorf("seed: status %d %s %v", r.status, r.code, r.err)
		}
	}
	return nil
}

func (l *load) start(workers int) {
	for w := range workers {
		l.wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for {
				select {
				case <-l.stop:
					return
				default:
				}
				r := l.do(context.Background(), []string{"remember", "batch", "recall", "recall"}[rng.IntN(4)])
				l.mu.Lock()
				l.all = append(l.all, r)
				l.mu.Unlock()
				if !r.ok() {
					time.Sleep(10 * time.Millisecond) // a failing client backs off a little
				}
			}
		})
	}
}

func (l *load) stopAll() {
	close(l.stop)
	l.wg.Wait()
}

func (l *load) results() []result {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.all)
}

// waitSteady waits until steady has passed with every request succeeding,
// counted from back at the earliest, or timeout. It returns the end of the
// last failure (back if none came after it) and whether it recovered.
func (l *load) waitSteady(back time.Time, steady, timeout time.Duration) (time.Time, bool) {
	for {
		time.Sleep(50 * time.Millisecond)
		last := back
		for _, r := range l.results() {
			if r.failed() && r.end.After(last) {
				last = r.end
			}
		}
		if time.Since(last) >= steady {
			return last, true
		}
		if time.Since(back) > timeout {
			return last, false
		}
	}
}

// verify reads back every acknowledged id and lists what is stored, to
// count acknowledged writes lost and failed writes stored partly or whole.
func (l *load) verify(ctx context.Context, rep *Report, all []result) error {
	get := func(path string) (int, []byte, error) {
		req, _ := http.NewRequestWithContext(ctx, "GET", l.base+path, nil)
		req.Header.Set("Authorization", "Bearer "+l.key)
		resp, err := l.hc.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, b, err
	}
	stored := map[string]int{}
	for cursor := ""; ; {
		path := "/v1/memories?principal=" + principal + "&limit=1000"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		status, b, err := get(path)
		if err != nil || status != http.StatusOK {
			return fmt.Errorf("list after the fault: %d %v", status, err)
		}
		var page struct {
			Memories []struct {
				Content string `json:"content"`
			} `json:"memories"`
			NextCursor string `json:"next_cursor"`
		}
		if err := json.Unmarshal(b, &page); err != nil {
			return err
		}
		for _, m := range page.Memories {
			tok, _, _ := strings.Cut(m.Content, " ")
			stored[tok]++
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	for _, r := range all {
		if r.op == "recall" {
			continue
		}
		n := 0
		for _, tok := range r.tokens {
			n += min(stored[tok], 1)
		}
		if r.ok() {
			rep.Acked++
			for _, id := range r.ids {
				if status, _, err := get("/v1/memories/" + id + "?principal=" + principal); err != nil || status != http.StatusOK {
					rep.AckedLost++
				}
			}
			if n != len(r.tokens) {
				rep.AckedLost += len(r.tokens) - n
			}
			continue
		}
		switch {
		case n == len(r.tokens):
			rep.FailedStored++
		case n != 0:
			rep.PartialBatches++
		}
	}
	return nil
}

// fileSizes describes the sizes of the database's files (sqlite.Files).
func fileSizes(path string) string {
	var parts []string
	for _, f := range sqlite.Files(path) {
		if st, err := os.Stat(f); err == nil {
			parts = append(parts, fmt.Sprintf("%s %d KiB", filepath.Base(f), st.Size()>>10))
		}
	}
	return strings.Join(parts, ", ")
}

// integrity runs PRAGMA integrity_check on a read-only connection.
func integrity(path string) string {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return err.Error()
	}
	defer db.Close()
	var res string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&res); err != nil {
		return err.Error()
	}
	return res
}

// startChild starts memgate serve (memgatebin.Start), which must create
// the admin key: the scenarios run on a new database.
func startChild(ctx context.Context, bin string, args, env []string, logPath string) (*memgatebin.Child, error) {
	c, err := memgatebin.Start(ctx, bin, args, env, logPath)
	if err != nil {
		return nil, err
	}
	if c.Key == "" {
		c.Stop()
		return nil, fmt.Errorf("memgate serve did not create an admin key: its database is not new (log: %s)", logPath)
	}
	return c, nil
}

func ms(d time.Duration) float64 { return round(float64(d)/float64(time.Millisecond), 1) }

func round(x float64, digits int) float64 {
	p := 1.0
	for range digits {
		p *= 10
	}
	return float64(int64(x*p+0.5)) / p
}

func printReport(r *Report) {
	fmt.Printf("== %s\n", r.Scenario)
	for _, n := range r.Notes {
		fmt.Println("  " + n)
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	row := func(k string, v any) { fmt.Fprintf(w, "  %s\t%v\n", k, v) }
	row("requests", r.Requests)
	if r.RestartSeconds > 0 {
		row("restart command took", fmt.Sprintf("%.2f s", r.RestartSeconds))
		row("PostgreSQL unreachable (probe)", fmt.Sprintf("%.2f s", r.DownSeconds))
	}
	if r.StoredBeforeFull > 0 {
		row("memories stored before the disk was full", r.StoredBeforeFull)
	}
	row("fault window", fmt.Sprintf("%.2f s", r.FaultSeconds))
	row("requests in the fault window", r.FaultRequests)
	keys := make([]string, 0, len(r.FaultStatuses))
	for k := range r.FaultStatuses {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		row("  "+k, r.FaultStatuses[k])
	}
	row("slowest answer in the window", fmt.Sprintf("%.1f ms (%s)", r.SlowestFaultMs, r.Slowest))
	if r.FilesWhenFull != "" {
		row("files when full", r.FilesWhenFull)
	}
	if r.Integrity != "" {
		row("integrity_check while full", r.Integrity)
	}
	back := "the remount"
	if r.Scenario == "pg-restart" {
		back = "PostgreSQL answered the probe again"
	}
	row("first successful write after "+back, fmt.Sprintf("%.1f ms", r.FirstWriteMs))
	row("every request succeeding after "+back, fmt.Sprintf("%.1f ms", r.RecoveredMs))
	row("acknowledged writes", r.Acked)
	row("acknowledged writes lost", r.AckedLost)
	row("failed writes stored whole (unknown outcome)", r.FailedStored)
	row("failed batches stored partly", r.PartialBatches)
	row("500s / transport errors", fmt.Sprintf("%d / %d", r.Internal, r.Transport))
	row("verdict", map[bool]string{true: "ok", false: "FAILED"}[r.OK])
	w.Flush()
}
