package analysis

import "hash/maphash"

// termSeed is this process's seed of TermHash.
var termSeed = maphash.MakeSeed()

// TermHash returns a hash of term, the same for equal terms within one
// process and different between processes (the seed is random): for sets
// of terms kept in memory, whose users hash a term once where it is made
// (package relate's related words) and test it many times without reading
// its bytes again (package index's term filter). Never stored.
func TermHash(term string) uint64 { return maphash.String(termSeed, term) }
