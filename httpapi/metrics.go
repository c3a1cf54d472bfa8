package httpapi

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"runtime"
	rtmetrics "runtime/metrics"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/guard"
)

// metrics holds what GET /metrics exposes in the Prometheus text format,
// written by hand. Labels are route patterns, methods, status codes and
// memory statuses: never content, query text, or ids of people.
type metrics struct {
	counts *guard.Guard
	now    func() time.Time

	mu       sync.Mutex
	requests map[requestLabels]uint64
	latency  map[routeLabels]*histogram
	recall   histogram

	// The memory gauge is counted per tenant through the engine (the only
	// way to the store), for the tenants whose keys this server has
	// authenticated since it started, at most every MetricsRefreshEvery.
	// tenants is read on every request, so it is not behind gaugeMu, which
	// a recount holds for as long as it takes.
	tenants   sync.Map // tenant → struct{}
	gaugeMu   sync.Mutex
	refreshed time.Time
	memories  map[string]int64
}

type requestLabels struct {
	route, method string
	code          int
}

type routeLabels struct{ route, method string }

// buckets are the latency histogram bounds, in seconds.
var buckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

type histogram struct {
	counts []uint64 // per bucket, not cumulative; the last is +Inf
	sum    float64
	n      uint64
}

func (h *histogram) observe(v float64) {
	if h.counts == nil {
		h.counts = make([]uint64, len(buckets)+1)
	}
	i := sort.SearchFloat64s(buckets, v)
	h.counts[i]++
	h.sum += v
	h.n++
}

func newMetrics(g *guard.Guard, now func() time.Time) *metrics {
	return &metrics{
		counts: g, now: now,
		requests: map[requestLabels]uint64{},
		latency:  map[routeLabels]*histogram{},
	}
}

// method bounds the method label to the methods HTTP defines.
func method(m string) string {
	switch m {
	case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE":
		return m
	}
	return "other"
}

func (m *metrics) observeRequest(route, meth string, code int, took time.Duration) {
	meth = method(meth)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests[requestLabels{route, meth, code}]++
	h := m.latency[routeLabels{route, meth}]
	if h == nil {
		h = &histogram{}
		m.latency[routeLabels{route, meth}] = h
	}
	h.observe(took.Seconds())
}

func (m *metrics) observeRecall(took time.Duration) {
	m.mu.Lock()
	m.recall.observe(took.Seconds())
	m.mu.Unlock()
}

func (m *metrics) sawTenant(t string) {
	if _, ok := m.tenants.Load(t); !ok {
		m.tenants.Store(t, struct{}{})
	}
}

// memoryCounts returns the memories by status, recounted when the last
// count is older than MetricsRefreshEvery. A failed recount keeps the last
// figures.
func (m *metrics) memoryCounts(ctx context.Context) map[string]int64 {
	m.gaugeMu.Lock()
	defer m.gaugeMu.Unlock()
	now := m.now()
	if m.memories != nil && now.Sub(m.refreshed) < MetricsRefreshEvery {
		return m.memories
	}
	counts := map[string]int64{}
	for _, st := range memgate.Statuses {
		counts[string(st)] = 0
	}
	counts[string(memgate.StatusExpired)] = 0
	var tenants []string
	m.tenants.Range(func(k, _ any) bool {
		tenants = append(tenants, k.(string))
		return true
	})
	for _, t := range tenants {
		cs, err := m.counts.Counts(ctx, t)
		if err != nil {
			if m.memories != nil {
				return m.memories
			}
			return counts
		}
		for _, c := range cs {
			counts[string(c.Status)] += c.N
		}
	}
	m.memories, m.refreshed = counts, now
	return counts
}

// keyedMetrics is /metrics behind an admin key (Config.Metrics
// MetricsKey): any other key, or none, is refused like an API call.
func (s *server) keyedMetrics(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	sess, err := s.authenticate(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if k := sess.Key(); k.Role != memgate.RoleAdmin {
		s.writeError(w, r, &memgate.Error{Code: memgate.EFORBIDDEN, Message: "this API key may not read metrics (an admin key may)"})
		return
	}
	s.serveMetrics(w, r)
}

// MetricsHandler returns the /metrics handler of h, a handler New returned,
// without a key: to serve on a separate listener (Config.Metrics
// MetricsOff keeps it off the API's). Nil for any other handler.
func MetricsHandler(h http.Handler) http.Handler {
	s, ok := h.(*server)
	if !ok {
		return nil
	}
	return http.HandlerFunc(s.serveMetrics)
}

func (s *server) serveMetrics(w http.ResponseWriter, r *http.Request) {
	memories := s.metrics.memoryCounts(r.Context())
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	bw := bufio.NewWriter(w)
	s.metrics.write(bw, memories)
	bw.Flush()
}

// write writes the exposition, series sorted so it is stable.
func (m *metrics) write(w *bufio.Writer, memories map[string]int64) {
	m.mu.Lock()
	reqs := make([]requestLabels, 0, len(m.requests))
	for k := range m.requests {
		reqs = append(reqs, k)
	}
	sort.Slice(reqs, func(i, j int) bool {
		a, b := reqs[i], reqs[j]
		if a.route != b.route {
			return a.route < b.route
		}
		if a.method != b.method {
			return a.method < b.method
		}
		return a.code < b.code
	})
	fmt.Fprintln(w, "# HELP http_requests_total HTTP requests served, by route pattern, method and status code.")
	fmt.Fprintln(w, "# TYPE http_requests_total counter")
	for _, k := range reqs {
		fmt.Fprintf(w, "http_requests_total{route=%s,method=%s,code=\"%d\"} %d\n", label(k.route), label(k.method), k.code, m.requests[k])
	}
	routes := make([]routeLabels, 0, len(m.latency))
	for k := range m.latency {
		routes = append(routes, k)
	}
	sort.Slice(routes, func(i, j int) bool {
		if routes[i].route != routes[j].route {
			return routes[i].route < routes[j].route
		}
		return routes[i].method < routes[j].method
	})
	fmt.Fprintln(w, "# HELP http_request_duration_seconds Time to serve an HTTP request, by route pattern and method.")
	fmt.Fprintln(w, "# TYPE http_request_duration_seconds histogram")
	for _, k := range routes {
		writeHistogram(w, "http_request_duration_seconds", "route="+label(k.route)+",method="+label(k.method), m.latency[k])
	}
	fmt.Fprintln(w, "# HELP memgate_recall_duration_seconds Time the engine took to answer a recall.")
	fmt.Fprintln(w, "# TYPE memgate_recall_duration_seconds histogram")
	writeHistogram(w, "memgate_recall_duration_seconds", "", &m.recall)
	m.mu.Unlock()

	fmt.Fprintln(w, "# HELP memgate_memories Memories by status (expired: active past expires_at), in the tenants served since start, refreshed at most every 10s.")
	fmt.Fprintln(w, "# TYPE memgate_memories gauge")
	statuses := make([]string, 0, len(memories))
	for st := range memories {
		statuses = append(statuses, st)
	}
	sort.Strings(statuses)
	for _, st := range statuses {
		fmt.Fprintf(w, "memgate_memories{status=%s} %d\n", label(st), memories[st])
	}
	writeProcess(w)
}

// heapSamples are the runtime/metrics whose sum is MemStats.HeapInuse (as
// the Prometheus Go client computes it): read without the stop-the-world
// pause of runtime.ReadMemStats.
var heapSamples = []string{"/memory/classes/heap/objects:bytes", "/memory/classes/heap/unused:bytes"}

// writeProcess writes the process gauges Prometheus users expect of a Go
// server. The two read from /proc are left out where there is no /proc
// (not Linux), rather than written as zero.
func writeProcess(w *bufio.Writer) {
	gauge := func(name, help string, v int64) {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s gauge\n%s %d\n", name, help, name, name, v)
	}
	gauge("go_goroutines", "Goroutines that currently exist.", int64(runtime.NumGoroutine()))
	samples := make([]rtmetrics.Sample, len(heapSamples))
	for i, n := range heapSamples {
		samples[i].Name = n
	}
	rtmetrics.Read(samples)
	var heap int64
	for _, s := range samples {
		if s.Value.Kind() == rtmetrics.KindUint64 {
			heap += int64(s.Value.Uint64())
		}
	}
	gauge("go_memstats_heap_inuse_bytes", "Bytes in in-use heap spans (MemStats.HeapInuse).", heap)
	if n, ok := openFDs(); ok {
		gauge("process_open_fds", "Open file descriptors.", n)
	}
	if n, ok := residentBytes(); ok {
		gauge("process_resident_memory_bytes", "Resident memory size in bytes.", n)
	}
}

// openFDs counts the entries of /proc/self/fd, the descriptor that reads
// the directory included.
func openFDs() (int64, bool) {
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return 0, false
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return 0, false
	}
	return int64(len(names)), true
}

// residentBytes is the second field of /proc/self/statm (resident pages)
// times the page size.
func residentBytes() (int64, bool) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, false
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0, false
	}
	return pages * int64(os.Getpagesize()), true
}

func writeHistogram(w *bufio.Writer, name, labels string, h *histogram) {
	sep := ""
	if labels != "" {
		sep = ","
	}
	var cum uint64
	for i, b := range buckets {
		if h.counts != nil {
			cum += h.counts[i]
		}
		fmt.Fprintf(w, "%s_bucket{%s%sle=\"%s\"} %d\n", name, labels, sep, strconv.FormatFloat(b, 'g', -1, 64), cum)
	}
	fmt.Fprintf(w, "%s_bucket{%s%sle=\"+Inf\"} %d\n", name, labels, sep, h.n)
	if labels == "" {
		fmt.Fprintf(w, "%s_sum %s\n%s_count %d\n", name, strconv.FormatFloat(h.sum, 'g', -1, 64), name, h.n)
		return
	}
	fmt.Fprintf(w, "%s_sum{%s} %s\n%s_count{%s} %d\n", name, labels, strconv.FormatFloat(h.sum, 'g', -1, 64), name, labels, h.n)
}

// label quotes a label value for the text format.
func label(v string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(v) + `"`
}
