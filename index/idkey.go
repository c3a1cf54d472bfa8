package index

import (
	"encoding/binary"
	"strings"
)

// Ties between entries of equal score rank by id (TestTextTies), and the
// text channel's templated memories tie often: the top-k heap compared
// ids, each a slot read and a string comparison, 7 % of a server's CPU
// under bench/load (BENCHMARKS.md, "Ties by key"). So every slot
// also has a key: the 8 bytes of its id after idBase, the prefix every id
// placed since the partition was made shares, big-endian and padded with
// zero bytes (the least byte, so a shorter id sorts first as it does as a
// string). Two ids that share idBase order as their keys do wherever the
// keys differ; where they are equal the ids themselves decide (cmpIDs).
//
// idBase only ever shortens: an id that leaves it shortens it to the
// prefix they share, and every live slot's key is made again (placeKey),
// at most once for each byte of the first id. Removing an entry leaves it:
// a shorter base than needed only makes the keys hold less of the ids.
// memgate's own ids begin with the time (memgate.NewID), so a partition's
// ids share most of its first characters and the keys hold the rest of
// the time and some of the random part.

// placeKey sets the key of slot sl, whose id is id, under the write lock.
func (p *Partition) placeKey(sl int32, id string) {
	if p.live == 1 {
		// The only live entry (add counted it): the base is its id.
		p.idBase = strings.Clone(id)
	}
	n := commonPrefix(p.idBase, id)
	if n < len(p.idBase) {
		p.idBase = p.idBase[:n]
		for s := range int32(p.nslots) {
			if other := p.sl(s).id; other != "" {
				p.idKey[s] = keyOf(other, n)
			}
		}
	}
	p.idKey[sl] = keyOf(id, len(p.idBase))
}

// cmpIDs compares the ids of slots a and b as strings.Compare does.
func (p *Partition) cmpIDs(a, b int32) int {
	ka, kb := p.idKey[a], p.idKey[b]
	switch {
	case ka < kb:
		return -1
	case ka > kb:
		return 1
	}
	return strings.Compare(p.sl(a).id, p.sl(b).id)
}

// keyOf is the key of id after its first n bytes.
func keyOf(id string, n int) uint64 {
	var b [8]byte
	copy(b[:], id[n:])
	return binary.BigEndian.Uint64(b[:])
}

// commonPrefix returns the length of the prefix a and b share.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}
