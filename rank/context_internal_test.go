package rank

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// contextByStrings is withContext as it was written first, sorting the
// turns by their Group strings: the reference TestWithContextMatches
// holds the integer-keyed sort to.
func contextByStrings(ev []float64, cands []Candidate, c Context) (s, lift []float64) {
	s, lift = slices.Clone(ev), make([]float64, len(ev))
	if c.Gain == 0 || c.Prev+c.Prev2+c.Next+c.Group == 0 {
		return s, lift
	}
	idx := make([]int, 0, len(cands))
	for i, cd := range cands {
		if cd.Group != "" {
			idx = append(idx, i)
		}
	}
	slices.SortFunc(idx, func(a, b int) int {
		if x := cmp.Compare(cands[a].Group, cands[b].Group); x != 0 {
			return x
		}
		if x := cmp.Compare(cands[a].Seq, cands[b].Seq); x != 0 {
			return x
		}
		return cmp.Compare(a, b)
	})
	for lo := 0; lo < len(idx); {
		hi := lo + 1
		for hi < len(idx) && cands[idx[hi]].Group == cands[idx[lo]].Group {
			hi++
		}
		best := 0.0
		for _, i := range idx[lo:hi] {
			best = max(best, ev[i])
		}
		for p := lo; p < hi; p++ {
			i := idx[p]
			keep := 1 - c.Group*best
			if p-1 >= lo {
				keep *= 1 - c.Prev*ev[idx[p-1]]
			}
			if p-2 >= lo {
				keep *= 1 - c.Prev2*ev[idx[p-2]]
			}
			if p+1 < hi {
				keep *= 1 - c.Next*ev[idx[p+1]]
			}
			lift[i] = (1 - ev[i]) * c.Gain * (1 - keep)
			s[i] = ev[i] + lift[i]
		}
		lo = hi
	}
	return s, lift
}

// TestWithContextMatches holds withContext to the string-sorted reference,
// bit for bit: conversations interleaved in the candidates, turns out of
// order, equal Seqs (ties go by candidate order), Seqs outside [0, 2³²),
// candidates outside any conversation, and a context that adds nothing. The control checks that
// the cases lift something, so that equal zeros cannot pass for a match.
func TestWithContextMatches(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 11))
	lifted := 0
	for it := range 500 {
		n := r.IntN(300)
		cands := make([]Candidate, n)
		ev := make([]float64, n)
		for i := range cands {
			if r.IntN(6) > 0 {
				cands[i].Group = fmt.Sprintf("session-%d", r.IntN(1+n/8))
			}
			cands[i].Seq = int64(r.IntN(1 + n/2))
			if it%7 == 3 && r.IntN(50) == 0 {
				// Past what one integer key holds: the comparison sort.
				cands[i].Seq = []int64{-1, 1 << 32, math.MaxInt64}[r.IntN(3)]
			}
			ev[i] = r.Float64()
			if r.IntN(5) == 0 {
				ev[i] = 0
			}
		}
		c := DefaultContext()
		if it%10 == 0 {
			c = Context{}
		}
		s, lift := withContext(ev, cands, c)
		ws, wlift := contextByStrings(ev, cands, c)
		if !slices.Equal(s, ws) || !slices.Equal(lift, wlift) {
			t.Fatalf("iteration %d: scores %v, lifts %v; want %v, %v", it, s, lift, ws, wlift)
		}
		for _, l := range lift {
			if l > 0 {
				lifted++
			}
		}
	}
	if lifted == 0 {
		t.Fatal("no case lifted any candidate: the comparison checks nothing")
	}
}

// BenchmarkWithContext is withContext over the candidates of a recall of
// bench/load: 256, in 20 conversations.
//
//	go test ./rank -run '^$' -bench WithContext
func BenchmarkWithContext(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 11))
	cands := make([]Candidate, 256)
	ev := make([]float64, len(cands))
	for i := range cands {
		cands[i].Group = fmt.Sprintf("session-%d", r.IntN(20))
		cands[i].Seq = int64(r.IntN(10000))
		ev[i] = r.Float64()
	}
	b.ReportAllocs()
	for b.Loop() {
		withContext(ev, cands, DefaultContext())
	}
}
