package index

import (
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
)

// allGatherKernels lists every gather kernel this CPU runs.
func allGatherKernels() map[string]func([]int16, []*int8, int, []int32) {
	ks := map[string]func([]int16, []*int8, int, []int32){"generic": gatherDotsGeneric}
	for _, k := range gatherKernels {
		ks[k.name] = k.fn
	}
	ks["in use"] = gatherDots
	return ks
}

// TestGatherDots holds every gather kernel to dotsGeneric on scattered rows:
// repeats, zero rows, the extremes, several strides.
func TestGatherDots(t *testing.T) {
	t.Parallel()
	r := newRand(5)
	for _, stride := range []int{32, 64, 384, 416, 1024} {
		const nrows = 37
		qmax := queryCodeMax(stride)
		q := make([]int16, stride)
		for j := range q {
			q[j] = int16(r.IntN(2*qmax+1) - qmax)
		}
		codes := make([]int8, nrows*stride)
		for j := range codes {
			codes[j] = int8(r.IntN(255) - 127)
		}
		clear(codes[3*stride : 4*stride]) // a zero row
		for j := range codes[5*stride : 6*stride] {
			codes[5*stride+j] = -127
		}
		for _, n := range []int{0, 4, 8, 36, 100, 256} {
			rows := make([]int, n+gatherAhead)
			ptrs := make([]*int8, n+gatherAhead)
			for i := range rows {
				rows[i] = r.IntN(nrows)
				ptrs[i] = &codes[rows[i]*stride]
			}
			want := make([]int32, n)
			for i := range n {
				dotsGeneric(q, codes[rows[i]*stride:(rows[i]+1)*stride], stride, want[i:i+1])
			}
			for name, k := range allGatherKernels() {
				got := make([]int32, n)
				k(q, ptrs, stride, got)
				if !slices.Equal(got, want) {
					t.Fatalf("%s stride %d n %d: %v, want %v", name, stride, n, got, want)
				}
			}
		}
	}
}

// checkIVF checks the inverted file's invariants: every row in exactly one
// list, at the position recorded for it.
func checkIVF(t *testing.T, p *Partition) {
	t.Helper()
	f := p.ivf
	if f == nil {
		return
	}
	if len(f.list) != p.rows || len(f.pos) != p.rows {
		t.Fatalf("ivf has %d/%d rows, partition %d", len(f.list), len(f.pos), p.rows)
	}
	seen := make([]bool, p.rows)
	total := 0
	for l, ls := range f.lists {
		for i, e := range ls {
			r := e.row
			if c, o := p.row(int(r)); e.scale != c.scales[o] || e.resid != c.resid[o] {
				t.Fatalf("row %d: list has scale %v resid %v, row %v %v", r, e.scale, e.resid, c.scales[o], c.resid[o])
			}
			if int(r) >= p.rows || seen[r] {
				t.Fatalf("row %d in list %d: out of range or twice", r, l)
			}
			seen[r] = true
			if int(f.list[r]) != l || int(f.pos[r]) != i {
				t.Fatalf("row %d at list %d pos %d, recorded %d %d", r, l, i, f.list[r], f.pos[r])
			}
		}
		total += len(ls)
	}
	if total != p.rows {
		t.Fatalf("lists hold %d rows, partition %d", total, p.rows)
	}
}

// TestIVFMaintained runs random upserts, replacements and removals on a
// partition with an inverted file from 60 vectors on that probes every
// list, so every search must match brute force exactly, whichever path
// answered; some must have answered
// from the inverted file (the control), and the file must go when the
// partition shrinks below half the threshold.
func TestIVFMaintained(t *testing.T) {
	t.Parallel()
	r := newRand(21)
	const dim = 40
	for _, dist := range []string{"gaussian", "duplicates", "ternary", "outlier"} {
		gen := distributions[dist](r, dim)
		p := NewPartition(Config{ApproxMinRows: 60, probeAll: true})
		live := map[string]Entry{}
		approx, built, dropped := 0, false, false
		for step := range 800 {
			id := fmt.Sprintf("m%03d", r.IntN(150))
			switch {
			case step > 450, r.IntN(5) == 0: // then shrink
				p.Remove(id)
				delete(live, id)
			default:
				e := randomEntry(r, step, gen(r, dim, step), false)
				e.ID = id
				if err := p.Upsert(e); err != nil {
					t.Fatal(err)
				}
				live[id] = e
			}
			p.Settle()
			checkIVF(t, p)
			if p.ivf != nil {
				built = true
			} else if built {
				dropped = true
			}
			if step%7 != 0 {
				continue
			}
			entries := make([]Entry, 0, len(live))
			for _, e := range live {
				entries = append(entries, e)
			}
			q := Query{Vector: gen(r, dim, -1), K: 1 + r.IntN(12), Filter: randomFilter(r)}
			res, err := p.Search(q)
			if err != nil {
				t.Fatal(err)
			}
			if res.Approximate {
				approx++
			}
			checkResult(t, fmt.Sprintf("%s step %d", dist, step), entries, q, res)
		}
		if approx == 0 || !dropped {
			t.Fatalf("%s: %d searches answered from the inverted file, dropped %v: the test tests nothing", dist, approx, dropped)
		}
	}
}

// TestIVFRecall holds the approximate path to recall@10 ≥ 0.99 against the
// exact scan on the benchmark distribution (topics plus noise), with a
// partition large enough to have more lists than are probed, and checks
// that an exact partition of the same entries is exact.
//
// The inverted file is trained on exactly the first 10,000 rows (the
// build waits for it there), and the next 9,999 join their lists as they
// come, short of the doubling that would train again. Training where the
// upserts had got to when the trainer ran made the test flaky: on this
// corpus calibration keeps the file at some sizes and refuses it at
// others (at 10,496 and 11,000 rows of this corpus its 1,000 sampled
// neighbours need 18 and 13 probes for 0.995, more than 1/8 of the lists;
// at 10,000, 10,700 and 11,300 they need 4, 1 and 1), which is the exact
// scan it must fall back to, not an error. Training beside concurrent
// writes is TestIVFConcurrent's.
func TestIVFRecall(t *testing.T) {
	t.Parallel()
	c := corpus(20000)
	const trained = 10000
	entries := c.entries[:2*trained-1]
	approx := buildPartition(t, Config{ApproxMinRows: trained}, entries[:trained])
	for _, e := range entries[trained:] {
		if err := approx.Upsert(e); err != nil {
			t.Fatal(err)
		}
	}
	approx.Settle()
	exact := buildPartition(t, Config{ApproxMinRows: -1}, entries)
	checkIVF(t, approx)
	if approx.ivf != nil && approx.ivf.trained != trained {
		t.Fatalf("trained on %d rows, want %d", approx.ivf.trained, trained)
	}
	if approx.ivf == nil || exact.ivf != nil {
		t.Fatal("the inverted file is not where it should be")
	}
	if np := approx.ivf.probes; np >= approx.ivf.nlist {
		t.Fatalf("probes every list (%d of %d): the test tests nothing", np, approx.ivf.nlist)
	}
	var recall float64
	for _, q := range c.queries {
		q.Terms = nil
		got, err := approx.Search(q)
		if err != nil {
			t.Fatal(err)
		}
		want, err := exact.Search(q)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Approximate || want.Approximate {
			t.Fatalf("approximate %v and %v", got.Approximate, want.Approximate)
		}
		recall += recallAt(got, want)
	}
	recall /= float64(len(c.queries))
	t.Logf("recall@10 %.4f over %d queries, trained %d, probes %d of %d", recall, len(c.queries), approx.ivf.trained, approx.ivf.probes, approx.ivf.nlist)
	if recall < 0.99 {
		t.Fatalf("recall@10 %.4f < 0.99", recall)
	}
}

// TestIVFCalibrationKeepsExact: on isotropic vectors no short list of
// clusters holds the nearest neighbours, so calibration must refuse the
// inverted file and the partition stays exact, until it doubles. The
// control is TestIVFRecall, where the same calibration accepts it.
func TestIVFCalibrationKeepsExact(t *testing.T) {
	t.Parallel()
	r := newRand(8)
	const n, dim = 12000, 64
	entries := make([]Entry, n)
	for i := range entries {
		entries[i] = randomEntry(r, i, gaussVec(r, dim), true)
	}
	p := buildPartition(t, Config{ApproxMinRows: 10000}, entries)
	if p.ivf != nil {
		t.Fatalf("kept an inverted file probing %d of %d lists", p.ivf.probes, p.ivf.nlist)
	}
	if p.ivfRetry < 20000 {
		t.Fatalf("retry at %d rows, want twice the rows trained on (≥ 20000)", p.ivfRetry)
	}
	q := Query{Vector: gaussVec(r, dim), K: 10, Filter: Filter{Now: now}}
	res, err := p.Search(q)
	if err != nil {
		t.Fatal(err)
	}
	if res.Approximate {
		t.Fatal("approximate search without an inverted file")
	}
	checkResult(t, "isotropic", entries, q, res)
}

// TestIVFConcurrent runs searches beside upserts and removals that make,
// retrain and maintain the inverted file (run it with -race); the control
// is that searches answered from it.
func TestIVFConcurrent(t *testing.T) {
	t.Parallel()
	c := corpus(3000)
	p := buildPartition(t, Config{ApproxMinRows: 400, probeAll: true}, c.entries[:500])
	done := make(chan struct{})
	approx := make(chan int, 2)
	var searches [2]atomic.Int64
	for g := range 2 {
		go func() {
			n := 0
			for i := 0; ; i++ {
				select {
				case <-done:
					approx <- n
					return
				default:
				}
				q := c.queries[(g*7+i)%len(c.queries)]
				res, err := p.Search(q)
				if err != nil {
					t.Error(err)
				}
				if res.Approximate {
					n++
				}
				searches[g].Add(1)
			}
		}()
	}
	// The writes wait for a search of each reader every 50 upserts, so
	// that searches run among them however the goroutines are scheduled
	// (on a busy machine the upserts could otherwise all run first).
	var seen [2]int64
	for i, e := range c.entries[500:] {
		if i%50 == 0 {
			for g := range searches {
				for searches[g].Load() == seen[g] {
					runtime.Gosched()
				}
				seen[g] = searches[g].Load()
			}
		}
		if err := p.Upsert(e); err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 {
			p.Remove(c.entries[i].ID)
		}
	}
	close(done)
	if n := <-approx + <-approx; n == 0 {
		t.Fatal("no search answered from the inverted file: the test tests nothing")
	}
	p.Settle()
	checkIVF(t, p)
}
