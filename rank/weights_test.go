package rank_test

import (
	"math"
	"testing"

	"github.com/memgate/memgate/rank"
)

// Score computes the query's term weights once for all candidates; the
// text evidence it gives each candidate (and TextEvidence) is still the
// formula's (textEvidence, as it was computed per candidate), to the bit,
// over more terms than its stack buffer holds too.
func TestScoreTextIsTextEvidence(t *testing.T) {
	t.Parallel()
	o := rank.Options{}.WithDefaults()
	for _, nterms := range []int{1, 3, 20} {
		q := rank.Query{AvgDocLen: 12, Memories: 100}
		for i := range nterms {
			q.Terms = append(q.Terms, rank.Term{IDF: 0.5 + float64(i)/3, Specificity: 0.3 + float64(i%5)/10, Modifier: i%4 == 1})
		}
		var cands []rank.Candidate
		for c := range 30 {
			cd := rank.Candidate{ID: "m", DocLen: 3 + c}
			for j := range nterms {
				if (c+j)%3 != 0 {
					cd.Matches = append(cd.Matches, rank.Match{Weight: 1 / float64(1+(c*j)%4), TF: 1 + (c+j)%3})
				} else {
					cd.Matches = append(cd.Matches, rank.Match{})
				}
			}
			cands = append(cands, cd)
		}
		sc := rank.Score(q, cands, o)
		nonzero := 0
		for i, c := range cands {
			want := textEvidence(q, c, o)
			if got := sc.Components[i].Text; got != want {
				t.Errorf("%d terms, candidate %d: Score's text %v, want %v", nterms, i, got, want)
			}
			if got := rank.TextEvidence(q, c, o); got != want {
				t.Errorf("%d terms, candidate %d: TextEvidence %v, want %v", nterms, i, got, want)
			}
			if want > 0 {
				nonzero++
			}
		}
		if nonzero == 0 {
			t.Fatalf("%d terms: control: no candidate has text evidence", nterms)
		}
	}
}

// textEvidence is rank.TextEvidence as written before Score shared the
// weights: each term's weight computed where it is used.
func textEvidence(q rank.Query, c rank.Candidate, o rank.Options) float64 {
	weight := func(t rank.Term) float64 {
		w := max(t.IDF, 0)
		if s := t.Specificity; o.SpecificityPower > 0 && s > 0 && s < 1 {
			w *= math.Pow(s, o.SpecificityPower)
		}
		if t.Modifier && o.ModifierWeight > 0 {
			w *= o.ModifierWeight
		}
		return w
	}
	var sum float64
	for _, t := range q.Terms {
		sum += weight(t)
	}
	if !(sum > 0) {
		return 0
	}
	avg := q.AvgDocLen
	if !(avg > 0) {
		avg = 1
	}
	var got float64
	for j, m := range c.Matches {
		if j >= len(q.Terms) || !(m.Weight > 0) || m.TF <= 0 {
			continue
		}
		f := float64(m.TF)
		sat := f * (rank.K1 + 1) / (f + rank.K1*(1-rank.B+rank.B*float64(max(c.DocLen, 1))/avg))
		got += weight(q.Terms[j]) * min(1, m.Weight) * min(1, sat)
	}
	return max(0, min(1, got/sum))
}
