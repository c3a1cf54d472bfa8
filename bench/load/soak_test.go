package main

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// rows builds the latencies of a curve: one row per value (row 0, the
// start, empty), each with n requests at that many ms, one in 100 at
// tail ms instead (so the row's p99 is tail).
func rows(n int, ms ...[2]float64) [][]time.Duration {
	out := [][]time.Duration{nil}
	for _, m := range ms {
		var r []time.Duration
		for i := range n {
			v := m[0]
			if i%100 == 99 {
				v = m[1]
			}
			r = append(r, time.Duration(v*float64(time.Millisecond)))
		}
		out = append(out, r)
	}
	return out
}

func TestP99Stable(t *testing.T) {
	t.Parallel()
	steady := [2]float64{1, 10}
	for _, c := range []struct {
		name    string
		lat     [][]time.Duration
		warm    int
		verdict string
	}{
		{"steady", rows(200, steady, steady, steady, steady, steady, steady), 0, "met"},
		{"doubled p99", rows(200, steady, steady, steady, steady, [2]float64{1, 20}, [2]float64{1, 20}), 0, "NOT met"},
		{"within 1.5 x", rows(200, steady, steady, steady, steady, [2]float64{1, 14.9}, [2]float64{1, 14.9}), 0, "met"},
		{"small p99 within +2 ms", rows(200, [2]float64{0.2, 1}, [2]float64{0.2, 1}, [2]float64{0.2, 1}, [2]float64{0.2, 2.9}), 0, "met"},
		{"small p99 beyond +2 ms", rows(200, [2]float64{0.2, 1}, [2]float64{0.2, 1}, [2]float64{0.2, 1}, [2]float64{0.2, 3.1}), 0, "NOT met"},
		// The slow rows before the warm-up sample (row 2) are not compared.
		{"slow warm-up ignored", rows(200, [2]float64{1, 50}, [2]float64{1, 50}, steady, steady, steady, steady, steady, steady), 2, "met"},
		{"too few intervals", rows(200, steady, steady, steady), 1, "not judged"},
		{"too few requests", rows(50, steady, steady, steady), 0, "not judged"},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := p99Stable("recall", c.lat, c.warm)
			if !strings.HasPrefix(st.Verdict, c.verdict) || (c.verdict == "met" && st.Verdict != "met") {
				t.Fatalf("verdict %q, want %q (first %.2f ms, last %.2f ms, limit %.2f ms)", st.Verdict, c.verdict, st.FirstP99, st.LastP99, st.LimitP99)
			}
		})
	}
}

// curve is a soak curve sampled every second, with the given goroutines
// and descriptors (RSS steady).
func curve(goroutines, fds []int) []SoakSample {
	out := make([]SoakSample, len(goroutines))
	for i := range out {
		out[i] = SoakSample{At: float64(i), RSSMiB: 50, Goroutines: goroutines[i], FDs: fds[i]}
	}
	return out
}

func TestJudgeSoakFlat(t *testing.T) {
	t.Parallel()
	o := options{soak: 12 * time.Second} // warm-up: the sample at 6 s
	fds := []int{20, 25, 25, 25, 25, 25, 25, 25, 25, 25, 25, 25, 25}
	for _, c := range []struct {
		name       string
		goroutines []int
		fds        []int
		child      bool
		want       map[string]string // target goal prefix → verdict
	}{
		// Growth before the warm-up sample (6 s) is not held against it.
		{"flat after warm-up", []int{14, 30, 60, 25, 40, 25, 26, 28, 27, 25, 30, 26, 36}, fds, true,
			map[string]string{"soak: server goroutines": "met", "soak: server open descriptors": "met", "soak: server RSS": "met"}},
		{"goroutine leak", []int{14, 30, 30, 30, 30, 30, 30, 35, 38, 40, 45, 48, 50}, fds, true,
			map[string]string{"soak: server goroutines": "NOT met", "soak: server open descriptors": "met"}},
		{"descriptor leak", []int{14, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30}, []int{20, 25, 25, 25, 25, 25, 25, 27, 28, 30, 31, 32, 33}, true,
			map[string]string{"soak: server goroutines": "met", "soak: server open descriptors": "NOT met"}},
		{"descriptors at the limit", []int{14, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30}, []int{20, 25, 25, 25, 25, 25, 25, 27, 28, 30, 30, 30, 30}, true,
			map[string]string{"soak: server open descriptors": "met"}},
		{"no /metrics, child", []int{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, fds, true,
			map[string]string{"soak: server goroutines": "NOT met"}},
		{"no /proc figures, external server", []int{14, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30}, make([]int, 13), false,
			map[string]string{"soak: server goroutines": "met", "soak: server open descriptors": "not judged", "soak: server RSS": "not judged"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cv := curve(c.goroutines, c.fds)
			if !c.child {
				for i := range cv {
					cv[i].RSSMiB = 0
				}
			}
			var r Report
			r.judgeSoak(o, soakRun{curve: cv, child: c.child, phases: []Phase{{Name: "soak: recall", Requests: 10}}})
			for prefix, verdict := range c.want {
				found := false
				for _, tg := range r.Targets {
					if strings.HasPrefix(tg.Goal, prefix) {
						found = true
						if !strings.HasPrefix(tg.Verdict, verdict) || (verdict == "met" && tg.Verdict != "met") {
							t.Errorf("%s: %q (%s), want %q", tg.Goal, tg.Verdict, tg.Measured, verdict)
						}
					}
				}
				if !found {
					t.Errorf("no target %q", prefix)
				}
			}
		})
	}
}

// TestJudgeSoakErrors: a failed request fails the soak.
func TestJudgeSoakErrors(t *testing.T) {
	t.Parallel()
	for _, errs := range []int{0, 1} {
		var r Report
		r.judgeSoak(options{soak: time.Minute}, soakRun{curve: curve([]int{10}, []int{10}), child: true,
			phases: []Phase{{Name: "soak: recall", Requests: 100}, {Name: "soak: revoke", Requests: 10, Errors: errs}}})
		missed := r.soakMissed()
		if got := len(missed) > 0 && missed[0] == "soak: no failed request"; got != (errs > 0) {
			t.Errorf("%d errors: missed %q", errs, missed)
		}
	}
}

func TestRecent(t *testing.T) {
	t.Parallel()
	r := newRecent(3)
	if _, ok := r.pop(); ok {
		t.Fatal("pop of an empty ring")
	}
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		r.push(memRef{id: id})
	}
	var got []string
	for {
		m, ok := r.pop()
		if !ok {
			break
		}
		got = append(got, m.id)
	}
	if strings.Join(got, "") != "edc" { // newest first; the oldest forgotten
		t.Fatalf("popped %v, want e d c", got)
	}
}

func TestPickOp(t *testing.T) {
	t.Parallel()
	o := options{mixRemember: 0.2, mixList: 0.1, mixRevoke: 0.1}
	rng := rand.New(rand.NewPCG(1, 2))
	var n [numOps]int
	const draws = 100000
	for range draws {
		n[o.pickOp(rng)]++
	}
	for op := range numOps {
		got := float64(n[op]) / draws
		if want := o.share(op); got < want-0.01 || got > want+0.01 {
			t.Errorf("%s: %.3f of draws, want %.2f", opNames[op], got, want)
		}
	}
}

func TestJudgeSoakRSS(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name      string
		warm, end float64
		verdict   string
	}{
		{"flat", 80, 95, "met"},
		{"grown by a quarter", 80, 100.1, "NOT met"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cv := curve([]int{10, 10, 10}, []int{10, 10, 10})
			cv[1].RSSMiB, cv[2].RSSMiB = c.warm, c.end
			var r Report
			r.judgeSoak(options{soak: 2 * time.Second}, soakRun{curve: cv, child: true}) // warm-up: the sample at 1 s
			for _, tg := range r.Targets {
				if strings.HasPrefix(tg.Goal, "soak: server RSS") && tg.Verdict != c.verdict {
					t.Fatalf("%s: %q (%s), want %q", tg.Goal, tg.Verdict, tg.Measured, c.verdict)
				}
			}
			if r.RSSFlat == nil || *r.RSSFlat != (c.verdict == "met") {
				t.Fatalf("rss_flat %v", r.RSSFlat)
			}
		})
	}
}
