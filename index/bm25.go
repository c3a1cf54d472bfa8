package index

import (
	"math"
	"math/bits"
	"slices"
	"unsafe"
)

// BM25 parameters, fixed for the whole system: the rank package uses the
// same values and formula.
const (
	K1 = 1.2
	B  = 0.75
)

// PriorDocs is the number of background entries, holding none of the
// partition's terms, that IDF counts besides the partition's own: without
// them a partition of a few memories gives a term it lacks several times
// the weight of one it holds (n = 1: ln 4 against ln(4/3)), so a single
// unmatched word of a query outweighs everything it matches. With them the
// weights of a small partition are those of a larger corpus; a partition
// of hundreds barely changes (LoCoMo: recall within 0.003). The rank
// package uses the same value.
const PriorDocs = 20

// IDF is the BM25 inverse document frequency of a term that occurs in df of
// the n entries of a partition: ln(1 + (n + PriorDocs − df + 0.5)/(df +
// 0.5)). It is positive for every 0 ≤ df ≤ n, so an absent term (df 0)
// still has weight.
func IDF(n, df int) float64 {
	return math.Log(1 + (float64(n)+PriorDocs-float64(df)+0.5)/(float64(df)+0.5))
}

// BM25Term is the contribution of one query term that occurs tf times in an
// entry of dl terms, in a partition whose mean entry length is avgDocLen:
//
//	idf · tf·(k1+1) / (tf + k1·(1 − b + b·dl/avgDocLen))
//
// An entry's BM25 score is the sum of BM25Term over the distinct query
// terms that occur in it, added in decreasing idf order (ties in query
// order).
func BM25Term(tf, dl int, avgDocLen, idf float64) float64 {
	t := float64(tf)
	return idf * (t * (K1 + 1)) / (t + K1*(1-B+B*float64(dl)/avgDocLen))
}

// postings is the inverted list of one term: one posting per entry that
// contains it, in no particular order. Its length is the term's df.
type postings struct {
	term string
	list []posting
}

type posting struct {
	slot int32
	tf   int32
}

// termRef is an entry's link to one of its distinct terms: pos is the index
// of its posting in that term's list, kept current when postings move, so
// that removing an entry costs O(distinct terms), not O(df).
type termRef struct {
	p   *postings
	tf  int32
	pos int32
}

// distinctTerms returns the distinct terms of ts in order of first
// occurrence, reusing buf.
func distinctTerms(ts []string, buf []string) []string {
	out := buf[:0]
	if len(ts) <= 32 {
	next:
		for _, t := range ts {
			for _, o := range out {
				if o == t {
					continue next
				}
			}
			out = append(out, t)
		}
		return out
	}
	seen := make(map[string]struct{}, len(ts))
	for _, t := range ts {
		if _, ok := seen[t]; !ok {
			seen[t] = struct{}{}
			out = append(out, t)
		}
	}
	return out
}

// qterm is a distinct query term present in the partition.
type qterm struct {
	pl       *postings
	idf      float64 // the term's idf times weight
	excluded bool    // left out of the content query
	of       int     // the query term it matches (an index of Result.Terms)
	related  int     // 0: the term itself; i+1: Query.Related[i]
	weight   float64 // 1 for the term itself
}

// accumulate adds the BM25 contributions of the query terms into sc.acc and
// lists the entries it touched in sc.touched; it returns how many postings
// it visited.
//
// Terms go in decreasing idf (MaxScore, term at a time). A term contributes
// less than idf·(k1+1) to any entry, so before each term the remaining
// terms bound the score of every entry not yet touched. Once that bound is
// below the k-th best partial score among touched entries that pass the
// filter (partial scores only grow), no untouched entry can reach the top
// k: the remaining terms, the common ones, only update touched entries. So
// every touched entry ends with its exact score, and the top k of the
// touched entries is the exact top k. Entries left untouched that another
// channel proposes get their score from bm25Of.
func (p *Partition) accumulate(qts []qterm, f *compiled, k int, avg float64, sc *scratch) int {
	slices.SortStableFunc(qts, func(a, b qterm) int {
		switch {
		case a.idf > b.idf:
			return -1
		case a.idf < b.idf:
			return 1
		}
		return 0
	})
	var rest float64
	for _, qt := range qts {
		rest += qt.idf * (K1 + 1)
	}
	visited := 0
	closed := false // no new entries: only touched ones are updated
	// Finding the k-th partial score costs a pass over the touched entries,
	// so it is retried only when the bound has halved; a k-th score once
	// seen stays a valid lower bound (partial scores only grow).
	theta, checkedAt := math.Inf(-1), math.Inf(1)
	acc, docLen := sc.acc, p.docLen
	for i, qt := range qts {
		if i > 0 {
			rest -= qts[i-1].idf * (K1 + 1)
		}
		if !closed && i > 0 && len(sc.touched) >= k && rest <= checkedAt/2 {
			checkedAt = rest
			if h := p.textHeap(f, k, sc); len(h) == k {
				theta = h[0].score
			}
		}
		// The factor covers rounding in the sums; scores are far larger.
		if !closed && rest*(1+1e-9) < theta {
			closed = true
		}
		list := qt.pl.list
		switch {
		case !closed:
			visited += len(list)
			for _, ps := range list {
				if acc[ps.slot] == 0 {
					sc.touched = append(sc.touched, ps.slot)
				}
				acc[ps.slot] += BM25Term(int(ps.tf), int(docLen[ps.slot]), avg, qt.idf)
			}
		case len(list) <= 8*len(sc.touched):
			visited += len(list)
			for _, ps := range list {
				if acc[ps.slot] != 0 {
					acc[ps.slot] += BM25Term(int(ps.tf), int(docLen[ps.slot]), avg, qt.idf)
				}
			}
		default:
			// Few touched entries, a long list: look the term up in each
			// touched entry instead.
			for _, sl := range sc.touched {
				if tf := p.tf(sl, qt.pl); tf > 0 {
					acc[sl] += BM25Term(tf, int(docLen[sl]), avg, qt.idf)
				}
			}
		}
	}
	return visited
}

// tf returns how often the term of pl occurs in the entry at slot sl.
func (p *Partition) tf(sl int32, pl *postings) int {
	for _, r := range p.sl(sl).terms {
		if r.p == pl {
			return int(r.tf)
		}
	}
	return 0
}

// qmatch is a query term (an index of qts) an entry holds, and how often.
type qmatch struct {
	qt int32
	tf int32
}

// matchesOf appends to dst the query terms of qts that the entry at slot
// sl holds, in qts order. With many query terms (related words among
// them) it walks the entry's own terms and finds the query terms of each
// in sc.qtab instead of looking each query term up in the entry.
func (p *Partition) matchesOf(dst []qmatch, sl int32, qts []qterm, sc *scratch) []qmatch {
	if len(qts) <= 8 {
		for i, qt := range qts {
			if tf := p.tf(sl, qt.pl); tf > 0 {
				dst = append(dst, qmatch{int32(i), int32(tf)})
			}
		}
		return dst
	}
	t := &sc.qtab
	if !t.ok {
		t.build(qts)
	}
	start := len(dst)
	for _, r := range p.sl(sl).terms {
		for i := t.lookup(r.p); i >= 0; i = t.next[i] {
			dst = append(dst, qmatch{i, r.tf})
		}
	}
	if m := dst[start:]; len(m) > 16 {
		slices.SortFunc(m, func(a, b qmatch) int { return int(a.qt - b.qt) })
	} else {
		for i := 1; i < len(m); i++ {
			for j := i; j > 0 && m[j].qt < m[j-1].qt; j-- {
				m[j], m[j-1] = m[j-1], m[j]
			}
		}
	}
	return dst
}

// qtable finds the query terms of a posting list: it maps the postings of
// a search's query terms (qts, once sorted by accumulate) to their
// indexes, by open addressing on the postings' address (a partition's
// postings do not move while a search holds its read lock). It is made on
// the search's first matchesOf and kept in the search's scratch.
type qtable struct {
	keys  []*postings // nil: an empty slot
	first []int32     // by slot: the lowest qts index of its postings
	next  []int32     // by qts index: the next one of the same postings, or -1
	shift uint
	ok    bool // made for this search
}

// build makes t for qts.
func (t *qtable) build(qts []qterm) {
	size := probeTableSize(len(qts))
	t.keys = slices.Grow(t.keys[:0], size)[:size]
	clear(t.keys)
	t.first = slices.Grow(t.first[:0], size)[:size]
	t.next = slices.Grow(t.next[:0], len(qts))[:len(qts)]
	t.shift = 64 - uint(bits.TrailingZeros(uint(size)))
	// Backwards, so that each chain of one postings ascends.
	for i := len(qts) - 1; i >= 0; i-- {
		pl := qts[i].pl
		h := t.slot(pl)
		if t.keys[h] == pl {
			t.next[i] = t.first[h]
		} else {
			t.keys[h] = pl
			t.next[i] = -1
		}
		t.first[h] = int32(i)
	}
	t.ok = true
}

// slot returns the slot of pl, or the empty slot where it would go.
func (t *qtable) slot(pl *postings) int {
	mask := len(t.keys) - 1
	h := int((uint64(uintptr(unsafe.Pointer(pl))) * 0x9e3779b97f4a7c15) >> t.shift)
	for t.keys[h] != nil && t.keys[h] != pl {
		h = (h + 1) & mask
	}
	return h
}

// lookup returns the lowest qts index of pl's term, or -1.
func (t *qtable) lookup(pl *postings) int32 {
	h := t.slot(pl)
	if t.keys[h] == nil {
		return -1
	}
	return t.first[h]
}

// reset forgets t's postings (a pooled scratch must not keep a partition
// reachable) and marks it to be made again.
func (t *qtable) reset() {
	clear(t.keys)
	t.ok = false
}

// candidateMatches returns the matches (matchesOf) of the entry at slot
// sl, the search's next candidate, and keeps them for content: each
// candidate's are found once.
func (p *Partition) candidateMatches(sl int32, qts []qterm, sc *scratch) []qmatch {
	start := len(sc.cqm)
	sc.cqm = p.matchesOf(sc.cqm, sl, qts, sc)
	sc.cqmEnd = append(sc.cqmEnd, int32(len(sc.cqm)))
	return sc.cqm[start:]
}

// bm25Of returns the BM25 score of the entry at slot sl, whose matches are
// ms, added in the same order as accumulate, and the number of distinct
// query terms it holds (itself or by a related word).
func (p *Partition) bm25Of(sl int32, ms []qmatch, qts []qterm, avg float64, sc *scratch) (float64, int) {
	n := distinctOf(ms, qts)
	if s := sc.acc[sl]; s != 0 {
		return s, n
	}
	var s float64
	for _, m := range ms {
		s += BM25Term(int(m.tf), int(p.docLen[sl]), avg, qts[m.qt].idf)
	}
	return s, n
}

// distinctOf counts the distinct query terms (qterm.of) of ms.
func distinctOf(ms []qmatch, qts []qterm) int {
	var seen uint64
	n := 0
	for _, m := range ms {
		of := qts[m.qt].of
		if of < 64 {
			if seen&(1<<of) != 0 {
				continue
			}
			seen |= 1 << of
		}
		n++
	}
	return n
}
