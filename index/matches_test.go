package index

import (
	"fmt"
	"slices"
	"testing"
)

// matchesRef is matchesOf by its definition: each query term in qts order,
// looked up in the entry's terms.
func (p *Partition) matchesRef(sl int32, qts []qterm) []qmatch {
	var out []qmatch
	for i, qt := range qts {
		if tf := p.tf(sl, qt.pl); tf > 0 {
			out = append(out, qmatch{int32(i), int32(tf)})
		}
	}
	return out
}

// matchesCase is a partition, and query terms over its postings: some
// terms more than once (a related word that is also a query term, or
// related to two), few and many of them (related words).
func matchesCase(n, nq int, seed uint64) (*Partition, []qterm) {
	r := newRand(seed)
	p := NewPartition(Config{})
	for i := range n {
		e := randomEntry(r, i, nil, true)
		e.Terms = zipfTerms(r, 5+r.IntN(40))
		if err := p.Upsert(e); err != nil {
			panic(err)
		}
	}
	var qts []qterm
	for len(qts) < nq {
		t := vocabulary[r.IntN(len(vocabulary))]
		if pl := p.terms[t]; pl != nil {
			qts = append(qts, qterm{pl: pl})
			if r.IntN(6) == 0 {
				qts = append(qts, qterm{pl: pl}) // the same postings again
			}
		}
	}
	return p, qts
}

// TestMatchesOf holds matchesOf (its postings table) to matchesRef on
// every entry, with 1 to 600 query terms, repeated postings among them,
// in one scratch reused across searches as the pool does.
func TestMatchesOf(t *testing.T) {
	sc := new(scratch)
	for _, nq := range []int{1, 2, 5, 8, 9, 30, 600} {
		p, qts := matchesCase(300, nq, uint64(nq))
		for sl := range int32(p.nslots) {
			want := p.matchesRef(sl, qts)
			got := p.matchesOf(nil, sl, qts, sc)
			if !slices.Equal(got, want) {
				t.Fatalf("%d query terms, slot %d: %v, want %v", nq, sl, got, want)
			}
			// Appended after what dst holds.
			got = p.matchesOf([]qmatch{{-1, -1}}, sl, qts, sc)
			if !slices.Equal(got[1:], want) || got[0] != (qmatch{-1, -1}) {
				t.Fatalf("%d query terms, slot %d, appended: %v, want %v", nq, sl, got, want)
			}
		}
		sc.qtab.reset() // the next search's
	}
}

func BenchmarkMatchesOf(b *testing.B) {
	for _, nq := range []int{5, 40} {
		p, qts := matchesCase(2000, nq, 1)
		b.Run(fmt.Sprintf("q=%d/ref", nq), func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				p.matchesRef(int32(i%p.nslots), qts)
			}
		})
		b.Run(fmt.Sprintf("q=%d/table", nq), func(b *testing.B) {
			sc := new(scratch)
			var dst []qmatch
			for i := 0; b.Loop(); i++ {
				dst = p.matchesOf(dst[:0], int32(i%p.nslots), qts, sc)
			}
		})
	}
}
