package httpapi_test

import (
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestMetricsProcess: /metrics carries the process gauges Prometheus users
// expect, each with its HELP and TYPE lines and a plausible value. The two
// read from /proc are checked where /proc exists (and must then be there).
func TestMetricsProcess(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	body := string(h.do("GET", "/metrics", "", nil).want(t, http.StatusOK).body)
	_, procErr := os.Stat("/proc/self/statm")
	hasProc := procErr == nil
	for _, c := range []struct {
		name     string
		min      float64 // the value must be at least this
		needProc bool
	}{
		{"go_goroutines", 1, false},
		{"go_memstats_heap_inuse_bytes", 64 << 10, false},
		{"process_open_fds", 3, true}, // stdin, stdout, stderr at least
		{"process_resident_memory_bytes", 1 << 20, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			v, ok := gauge(t, body, c.name)
			switch {
			case c.needProc && !hasProc:
				if ok {
					t.Fatalf("%s = %v without /proc", c.name, v)
				}
			case !ok:
				t.Fatalf("no %s in:\n%s", c.name, body)
			case v < c.min:
				t.Fatalf("%s = %v, want at least %v", c.name, v, c.min)
			}
		})
	}
}

// gauge finds a gauge without labels in an exposition: its value, and
// whether it is there with its HELP and TYPE lines.
func gauge(t *testing.T, body, name string) (float64, bool) {
	t.Helper()
	var help, typ, found bool
	var v float64
	for l := range strings.SplitSeq(body, "\n") {
		switch {
		case strings.HasPrefix(l, "# HELP "+name+" "):
			help = true
		case l == "# TYPE "+name+" gauge":
			typ = true
		case strings.HasPrefix(l, name+" "):
			if found {
				t.Fatalf("%s written twice", name)
			}
			var err error
			if v, err = strconv.ParseFloat(strings.TrimPrefix(l, name+" "), 64); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			found = true
		}
	}
	if found && (!help || !typ) {
		t.Fatalf("%s lacks its HELP (%v) or TYPE gauge (%v) line", name, help, typ)
	}
	return v, found
}
