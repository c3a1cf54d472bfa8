package index

import "github.com/memgate/memgate/analysis"

// termFilter is a blocked Bloom filter of a partition's terms, by
// analysis.TermHash. Holds asks it before the term map: a recall tests
// every related word of its query words (hundreds) against the partition,
// most of them absent, and a map lookup hashes each word's bytes afresh,
// a cache miss apiece (5 % of an in-memory recall's CPU at bench/load's
// 1,000 memories, BENCHMARKS.md); the filter tests a hash the caller made
// once (relate.Word.TermHash) against a few kilobytes.
//
// It has no false negatives: every term of the partition's map has its
// bits set (add sets them with the term's first posting, build with all).
// A removed term keeps its bits until the next build, which runs when the
// removed outnumber the held, as does a build at twice the size when the
// terms pass the filter's capacity; so the false positives, which only
// cost the map lookup they replace, stay near the rate of a filter of
// termFilterBits bits a term with three bits in one word (about 2 %).
type termFilter struct {
	words []uint64
	stale int // terms removed since the last build
}

// termFilterBits is the filter's size in bits per term at its capacity.
const termFilterBits = 16

// capacity is the number of terms the filter was sized for.
func (f *termFilter) capacity() int { return len(f.words) * 64 / termFilterBits }

// slot returns the word of hash h and its three bits.
func (f *termFilter) slot(h uint64) (int, uint64) {
	i := int((h >> 32) * uint64(len(f.words)) >> 32)
	return i, 1<<(h&63) | 1<<((h>>6)&63) | 1<<((h>>12)&63)
}

// mayHold reports whether a term of hash h may be in the partition: false
// only when it is not.
func (f *termFilter) mayHold(h uint64) bool {
	if len(f.words) == 0 {
		return true
	}
	i, m := f.slot(h)
	return f.words[i]&m == m
}

// build sizes the filter for twice the terms of the partition's map (at
// least 256) and sets the bits of every one. It returns the change in
// memory, in bytes.
func (f *termFilter) build(terms map[string]*postings) int64 {
	before := int64(8 * len(f.words))
	f.words = make([]uint64, max(2*len(terms), 256)*termFilterBits/64)
	f.stale = 0
	for t := range terms {
		f.add(analysis.TermHash(t))
	}
	return int64(8*len(f.words)) - before
}

// add sets the bits of a term of hash h.
func (f *termFilter) add(h uint64) {
	i, m := f.slot(h)
	f.words[i] |= m
}

// addTerm keeps the filter current after term t joined the partition's
// map terms, and returns the change in memory.
func (f *termFilter) addTerm(t string, terms map[string]*postings) int64 {
	if len(terms) > f.capacity() {
		return f.build(terms)
	}
	f.add(analysis.TermHash(t))
	return 0
}

// removed counts a term that left the partition's map terms, rebuilding
// the filter when the removed outnumber the held (dropping it with the
// last term); it returns the change in memory.
func (f *termFilter) removed(terms map[string]*postings) int64 {
	if len(terms) == 0 {
		// The last term: no filter, no memory (a partition emptied is as
		// a new one).
		freed := int64(8 * len(f.words))
		*f = termFilter{}
		return -freed
	}
	if f.stale++; f.stale > len(terms) && f.stale >= 256 {
		return f.build(terms)
	}
	return 0
}
