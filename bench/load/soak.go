package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"
)

// The soak's request types, in the order its rows and columns list them.
const (
	opRecall = iota
	opRemember
	opList
	opRevoke
	numOps
)

var opNames = [numOps]string{"recall", "remember", "list", "revoke"}

// Soak judging (see RELIABILITY.md, "Soak").
const (
	// maxWarmup and warmupShare set the warm-up: the curve's warm-up
	// sample is the first at or past max(min(maxWarmup, half the soak),
	// warmupShare of the soak). A long soak's data keeps growing until the
	// server's retention cap holds it (about two minutes at this mix's
	// rate of remembers), and RSS with it: judged from 10 s on, a
	// 10-minute soak read that growth as a leak although RSS was level
	// from the second minute (RELIABILITY.md, "Soak").
	maxWarmup   = 10 * time.Second
	warmupShare = 0.2
	// rssGrowth: RSS is flat when the last sample is at most this times
	// the warm-up sample.
	rssGrowth = 1.2
	// goroutineSlack and fdSlack: goroutines and open descriptors are flat
	// when the last sample is at most the warm-up sample plus these. The
	// samples are taken with no request in flight (see soakPhase), so they
	// count what the server keeps, not what it is doing.
	goroutineSlack = 10
	fdSlack        = 5
	// p99Growth and p99Slack: an op's p99 is stable when the p99 of the
	// last third of the intervals after warm-up is at most
	// max(p99Growth × the first third's, the first third's + p99Slack).
	p99Growth = 1.5
	p99Slack  = 2 * time.Millisecond
	// minP99Requests: a third with fewer requests of an op is too few for a
	// p99 (it would be the maximum): that op's stability is not judged.
	minP99Requests = 100
	// quiesceSettle is how long a sample waits after the last answer
	// before it reads the server, for the handlers to return.
	quiesceSettle = 50 * time.Millisecond
)

// SoakSample is one point of the soak's curve: the server at a time into
// the soak, and the requests of each type that completed since the
// previous sample (none in the first, taken at the start).
type SoakSample struct {
	At         float64      `json:"at_s"`
	RSSMiB     float64      `json:"rss_mib"`    // VmRSS of the child server (0: not a child)
	FDs        int          `json:"fds"`        // its entries in /proc/PID/fd (0: not a child)
	Goroutines int          `json:"goroutines"` // go_goroutines of its /metrics (0: not scraped)
	Ops        []OpInterval `json:"ops,omitempty"`
}

// OpInterval is one request type over one interval of the curve.
type OpInterval struct {
	Op       string  `json:"op"`
	Requests int     `json:"requests"` // failed included
	Errors   int     `json:"errors"`
	P50ms    float64 `json:"p50_ms"` // of the successful ones
	P99ms    float64 `json:"p99_ms"`
}

// P99Stability compares an op's p99 over the first and the last third of
// the soak's intervals after warm-up.
type P99Stability struct {
	Op        string  `json:"op"`
	Intervals int     `json:"intervals_per_third"`
	FirstN    int     `json:"first_requests"`
	FirstP99  float64 `json:"first_p99_ms"`
	LastN     int     `json:"last_requests"`
	LastP99   float64 `json:"last_p99_ms"`
	LimitP99  float64 `json:"limit_p99_ms"`
	Verdict   string  `json:"verdict"`
}

// soakRun is what soakPhase measured.
type soakRun struct {
	phases []Phase // one per request type with a share of the mix
	curve  []SoakSample
	// lat[op][k] are the latencies of op's successful requests in row k of
	// the curve (the interval that sample k closes; row 0 has none).
	lat [numOps][][]time.Duration
	// child: the server is the loader's child, so RSS and descriptors were
	// read from /proc and /metrics must answer.
	child bool
}

// memRef is a memory the soak remembered, to revoke later.
type memRef struct{ id, principal string }

// recent holds the ids of the newest memories the soak remembered and not
// yet revoked, at most cap of them; revoke takes the newest, so under a
// retention cap above cap no memory it holds has been evicted. Safe for
// concurrent use.
type recent struct {
	mu          sync.Mutex
	buf         []memRef
	start, size int
}

func newRecent(capacity int) *recent { return &recent{buf: make([]memRef, max(1, capacity))} }

func (r *recent) push(m memRef) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.size == len(r.buf) {
		r.start = (r.start + 1) % len(r.buf) // forget the oldest
		r.size--
	}
	r.buf[(r.start+r.size)%len(r.buf)] = m
	r.size++
}

func (r *recent) pop() (memRef, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.size == 0 {
		return memRef{}, false
	}
	r.size--
	return r.buf[(r.start+r.size)%len(r.buf)], true
}

// recentCap is how many remembered ids the soak keeps to revoke: under
// half the child's retention cap, so none is evicted before its revoke.
func recentCap(o options) int {
	if o.retention > 0 {
		return max(1, min(1024, o.retention/2))
	}
	return 1024
}

// pickOp draws a request type by the -soak-* fractions (recall: the rest).
func (o options) pickOp(rng *rand.Rand) int {
	x := rng.Float64()
	switch {
	case x < o.mixRemember:
		return opRemember
	case x < o.mixRemember+o.mixList:
		return opList
	case x < o.mixRemember+o.mixList+o.mixRevoke:
		return opRevoke
	}
	return opRecall
}

// share is the fraction of the mix an op type has.
func (o options) share(op int) float64 {
	switch op {
	case opRemember:
		return o.mixRemember
	case opList:
		return o.mixList
	case opRevoke:
		return o.mixRevoke
	}
	return 1 - o.mixRemember - o.mixList - o.mixRevoke
}

// soakRemember remembers one new memory and keeps its id for a revoke.
func (l *loader) soakRemember(ctx context.Context, rng *rand.Rand, ids *recent) bool {
	m := l.liveMemory(rng)
	body, _ := json.Marshal(m)
	out, ok := l.post(ctx, "/v1/memories", body, true)
	if !ok {
		return false
	}
	var r struct {
		Memories []struct {
			ID           string `json:"id"`
			Deduplicated bool   `json:"deduplicated"`
		} `json:"memories"`
	}
	if err := json.Unmarshal(out, &r); err != nil || len(r.Memories) != 1 || r.Memories[0].ID == "" {
		l.fail(fmt.Sprintf("remember: %d memories back for 1, or no id (%v)", len(r.Memories), err))
		return false
	}
	if !r.Memories[0].Deduplicated { // unique content: always, but a folded id is not ours to revoke
		ids.push(memRef{r.Memories[0].ID, m.Principal})
	}
	return true
}

// soakList lists the newest memories of a principal, one page.
func (l *loader) soakList(ctx context.Context, rng *rand.Rand) bool {
	path := "/v1/memories?principal=" + principal(rng.IntN(l.o.principals)) + "&limit=" + strconv.Itoa(l.o.listLimit)
	_, ok := l.send(ctx, "GET", l.next(), path, "GET /v1/memories", nil, false)
	return ok
}

var revokeBody = []byte(`{"reason":"load soak"}`)

// soakRevoke revokes m, a memory the soak remembered.
func (l *loader) soakRevoke(ctx context.Context, m memRef) bool {
	path := "/v1/memories/" + m.id + "/revoke?principal=" + m.principal
	_, ok := l.send(ctx, "POST", l.next(), path, "POST /v1/memories/{id}/revoke", revokeBody, false)
	return ok
}

// opTally is one worker's record of one request type: the tally of its
// phase row (lat filled at the end) and its figures by interval.
type opTally struct {
	tally
	ivLat      [][]time.Duration
	ivN, ivBad []int
}

func (t *opTally) record(iv int, d time.Duration, ok bool) {
	for len(t.ivN) <= iv {
		t.ivLat, t.ivN, t.ivBad = append(t.ivLat, nil), append(t.ivN, 0), append(t.ivBad, 0)
	}
	t.ivN[iv]++
	t.n++
	if ok {
		t.ivLat[iv] = append(t.ivLat[iv], d)
	} else {
		t.ivBad[iv]++
		t.bad++
	}
}

// soakPhase runs the mix of remember, recall, list and revoke for -soak,
// sampling the server at the start, every -rss-every and at the end. Each
// sample pauses the load for as long as it takes (the requests in flight
// finish first; their wait is not timed) and closes an interval of the
// curve: the requests that completed since the previous sample.
func (l *loader) soakPhase(ctx context.Context) (soakRun, error) {
	o := l.o
	run := soakRun{child: l.pids[0] != 0}
	scrape := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true}}
	defer scrape.CloseIdleConnections()
	probe := func(at time.Duration) SoakSample {
		s := SoakSample{At: round(at.Seconds(), 1)}
		if pid := l.pids[0]; pid != 0 {
			s.RSSMiB = procStatusMiB(strconv.Itoa(pid), "VmRSS")
			s.FDs = countFDs(pid)
		}
		s.Goroutines = scrapeGoroutines(ctx, scrape, l.urls[0])
		return s
	}

	// Each request holds quiet for reading; a sample holds it for writing:
	// it waits for the requests in flight, and the workers wait for it.
	// The server is sampled between requests (quiesceSettle after the last
	// answer), so a sample counts no goroutine or connection of a request
	// in flight, and the interval a request belongs to is exact.
	var quiet sync.RWMutex
	var interval atomic.Int64 // the interval a completing request belongs to
	ctxW, stopW := context.WithCancel(ctx)
	defer stopW()
	start := time.Now()
	run.curve = append(run.curve, probe(0))
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		defer stopW()
		take := func(last bool) {
			quiet.Lock()
			defer quiet.Unlock()
			at := time.Since(start)
			interval.Add(1)
			time.Sleep(quiesceSettle)
			run.curve = append(run.curve, probe(at))
			if last {
				stopW() // before the workers may send another request
			}
		}
		tk := time.NewTicker(o.rssEvery)
		defer tk.Stop()
		end := time.NewTimer(o.soak)
		defer end.Stop()
		for {
			select {
			case <-tk.C:
				if o.soak-time.Since(start) > min(time.Second, o.rssEvery/2) { // else the end's sample is due
					take(false)
				}
			case <-end.C:
				take(true)
				return
			case <-ctx.Done():
				return
			}
		}
	}()

	recall := l.recallOp(l.recallBodies(4096))
	ids := newRecent(recentCap(o))
	w := o.workers
	tallies := make([][numOps]opTally, w)
	cpu0, scpu0, m0 := cpuSeconds("self"), l.serverCPU(), machineTicks()
	dcpu0 := l.dbCPUSeconds()
	var wg sync.WaitGroup
	for i := range w {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(o.seed, uint64(5000+i)))
			for {
				quiet.RLock()
				if ctxW.Err() != nil {
					quiet.RUnlock()
					break
				}
				op := o.pickOp(rng)
				var m memRef
				if op == opRevoke {
					var ok bool
					if m, ok = ids.pop(); !ok {
						op = opRemember // nothing of ours left to revoke
					}
				}
				t := &tallies[i][op]
				s := time.Now()
				var ok bool
				switch op {
				case opRecall:
					ok = recall(ctxW, i, rng, &t.tally)
				case opRemember:
					ok = l.soakRemember(ctxW, rng, ids)
				case opList:
					ok = l.soakList(ctxW, rng)
				case opRevoke:
					ok = l.soakRevoke(ctxW, m)
				}
				if ctxW.Err() != nil && !ok {
					quiet.RUnlock()
					break // cut off by the end: not a failure, not timed
				}
				t.record(int(interval.Load()), time.Since(s), ok)
				quiet.RUnlock()
			}
		})
	}
	wg.Wait()
	el := time.Since(start)
	<-sampled

	// Requests that completed after the last sample (a soak cut short)
	// join its interval.
	rows := len(run.curve)
	for op := range numOps {
		run.lat[op] = make([][]time.Duration, rows)
		ts := make([]tally, w)
		row := make([]OpInterval, rows)
		for i := range w {
			t := &tallies[i][op]
			for iv := range t.ivN {
				k := min(iv+1, rows-1)
				run.lat[op][k] = append(run.lat[op][k], t.ivLat[iv]...)
				row[k].Requests += t.ivN[iv]
				row[k].Errors += t.ivBad[iv]
			}
			ts[i] = t.tally
			ts[i].lat = slices.Concat(t.ivLat...)
		}
		for k := 1; k < rows; k++ {
			row[k].Op = opNames[op]
			row[k].P50ms, row[k].P99ms = quantileMs(run.lat[op][k], 0.50), quantileMs(run.lat[op][k], 0.99)
		}
		if o.share(op) == 0 && slices.IndexFunc(ts, func(t tally) bool { return t.n > 0 }) < 0 {
			continue // not in the mix
		}
		for k := 1; k < rows; k++ {
			run.curve[k].Ops = append(run.curve[k].Ops, row[k])
		}
		// CPU is for the whole mix; every row shows it.
		run.phases = append(run.phases, l.summarize("soak: "+opNames[op], w, el, ts, cpu0, scpu0, dcpu0, m0))
	}
	return run, ctx.Err()
}

// countFDs counts the entries of /proc/PID/fd (0 if unreadable).
func countFDs(pid int) int {
	d, err := os.Open("/proc/" + strconv.Itoa(pid) + "/fd")
	if err != nil {
		return 0
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return 0
	}
	return len(names)
}

// scrapeGoroutines reads go_goroutines from the server's /metrics (0 if it
// cannot).
func scrapeGoroutines(ctx context.Context, hc *http.Client, base string) int {
	req, err := http.NewRequestWithContext(ctx, "GET", base+"/metrics", nil)
	if err != nil {
		return 0
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body) // all of it: the connection is reused
	if err != nil || resp.StatusCode != http.StatusOK {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "go_goroutines "); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

// warmIndex is the index of the curve's warm-up sample: the first at or
// past max(min(maxWarmup, half the soak), warmupShare of it); the last
// sample if none is.
func warmIndex(curve []SoakSample, soak time.Duration) int {
	warmAt := max(min(maxWarmup, soak/2).Seconds(), warmupShare*soak.Seconds())
	for i, s := range curve {
		if s.At >= warmAt {
			return i
		}
	}
	return len(curve) - 1
}

// judgeSoak sets the soak's targets: no failed request, each op's p99
// stable, and RSS, goroutines and open descriptors flat (the rules are the
// constants above).
func (r *Report) judgeSoak(o options, s soakRun) {
	r.Soak = s.curve
	if len(s.curve) == 0 {
		return
	}
	reqs, errs := 0, 0
	for _, p := range s.phases {
		reqs, errs = reqs+p.Requests, errs+p.Errors
	}
	r.Targets = append(r.Targets, Target{"soak: no failed request",
		fmt.Sprintf("%d failed of %d", errs, reqs), met(errs == 0)})

	warm := warmIndex(s.curve, o.soak)
	r.SoakWarmAt = s.curve[warm].At
	for op := range numOps {
		if !slices.ContainsFunc(s.phases, func(p Phase) bool { return p.Name == "soak: "+opNames[op] }) {
			continue
		}
		st := p99Stable(opNames[op], s.lat[op], warm)
		if !o.judgeP99 {
			st.Verdict = "not judged (-judge-p99=false)"
		}
		r.SoakP99 = append(r.SoakP99, st)
		r.Targets = append(r.Targets, Target{
			fmt.Sprintf("soak: %s p99 stable (last third of intervals after warm-up <= max(%.1f x, +%d ms) first third)", st.Op, p99Growth, p99Slack.Milliseconds()),
			fmt.Sprintf("first third %.2f ms (%d requests), last third %.2f ms (%d requests), limit %.2f ms", st.FirstP99, st.FirstN, st.LastP99, st.LastN, st.LimitP99),
			st.Verdict})
	}

	first, wm, last := s.curve[0], s.curve[warm], s.curve[len(s.curve)-1]
	if s.child {
		r.RSSFirst, r.RSSWarm, r.RSSLast = first.RSSMiB, wm.RSSMiB, last.RSSMiB
		for _, c := range s.curve {
			r.RSSMax = max(r.RSSMax, c.RSSMiB)
		}
		flat := r.RSSLast <= rssGrowth*r.RSSWarm
		r.RSSFlat = &flat
	}
	r.Targets = append(r.Targets, flat(fmt.Sprintf("soak: server RSS flat (last <= %.1f x after warm-up)", rssGrowth), s.child,
		wm.RSSMiB == 0 || last.RSSMiB == 0, "no RSS of the server",
		fmt.Sprintf("after warm-up (%.0f s) %.1f MiB, last (%.0f s) %.1f MiB", wm.At, wm.RSSMiB, last.At, last.RSSMiB),
		last.RSSMiB <= rssGrowth*wm.RSSMiB))
	for _, c := range []struct {
		what  string
		slack int
		v     func(SoakSample) int
		why   string
	}{
		{"goroutines", goroutineSlack, func(s SoakSample) int { return s.Goroutines }, "no go_goroutines in its /metrics"},
		{"open descriptors", fdSlack, func(s SoakSample) int { return s.FDs }, "no descriptor count of the server"},
	} {
		r.Targets = append(r.Targets, flat(fmt.Sprintf("soak: server %s flat (last <= after warm-up + %d)", c.what, c.slack), s.child,
			slices.ContainsFunc(s.curve, func(s SoakSample) bool { return c.v(s) == 0 }), c.why,
			fmt.Sprintf("after warm-up (%.0f s) %d, last (%.0f s) %d", wm.At, c.v(wm), last.At, c.v(last)),
			c.v(last) <= c.v(wm)+c.slack))
	}
}

// flat is a target of the soak's curve. Missing figures fail it for a
// child server, which must give them, and leave it not judged for another.
func flat(goal string, child, missing bool, why, measured string, ok bool) Target {
	switch {
	case missing && child:
		return Target{goal, why, "NOT met"}
	case missing:
		return Target{goal, why, "not judged (" + why + ")"}
	}
	return Target{goal, measured, met(ok)}
}

// p99Stable compares the p99 of the first and last third of the curve's
// intervals after the warm-up sample (rows warm+1 on; lat by row).
func p99Stable(op string, lat [][]time.Duration, warm int) P99Stability {
	st := P99Stability{Op: op}
	after := len(lat) - (warm + 1)
	if after < 3 {
		st.Verdict = fmt.Sprintf("not judged (%d intervals after warm-up, needs 3: lengthen -soak or shorten -rss-every)", max(0, after))
		return st
	}
	st.Intervals = after / 3
	f := slices.Concat(lat[warm+1 : warm+1+st.Intervals]...)
	l := slices.Concat(lat[len(lat)-st.Intervals:]...)
	st.FirstN, st.LastN = len(f), len(l)
	st.FirstP99, st.LastP99 = quantileMs(f, 0.99), quantileMs(l, 0.99)
	st.LimitP99 = round(max(p99Growth*st.FirstP99, st.FirstP99+float64(p99Slack)/1e6), 2)
	switch {
	case len(f) < minP99Requests || len(l) < minP99Requests:
		st.Verdict = fmt.Sprintf("not judged (fewer than %d requests in a third)", minP99Requests)
	default:
		st.Verdict = met(st.LastP99 <= st.LimitP99)
	}
	return st
}

// printCurve prints the soak's curve: the server and each op's p99 (ms)
// per interval.
func printCurve(r *Report) {
	if len(r.Soak) == 0 {
		return
	}
	fmt.Printf("\nsoak curve: the server every %.0f s; requests, errors and p99 ms of the requests completed since the previous row\n", r.SoakEvery)
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	head := "t s\tRSS MiB\tgoroutines\tFDs\trequests\terrors\t"
	var ops []string
	for _, op := range r.Soak[len(r.Soak)-1].Ops {
		ops = append(ops, op.Op)
		head += op.Op + " p99\t"
	}
	fmt.Fprintln(tw, head)
	for _, s := range r.Soak {
		line := fmt.Sprintf("%.0f\t%.1f\t%d\t%d\t", s.At, s.RSSMiB, s.Goroutines, s.FDs)
		n, bad := 0, 0
		for _, op := range s.Ops {
			n, bad = n+op.Requests, bad+op.Errors
		}
		if len(s.Ops) == 0 {
			line += "-\t-\t" + strings.Repeat("-\t", len(ops))
		} else {
			line += fmt.Sprintf("%d\t%d\t", n, bad)
			for _, op := range s.Ops {
				line += strconv.FormatFloat(op.P99ms, 'f', 2, 64) + "\t"
			}
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
	if r.RSSFlat != nil {
		fmt.Printf("server RSS: first %.1f MiB, after warm-up (%.0f s) %.1f, last %.1f, max %.1f\n", r.RSSFirst, r.SoakWarmAt, r.RSSWarm, r.RSSLast, r.RSSMax)
	}
}
