package wordvec

import (
	_ "embed"
	"encoding/binary"
	"errors"
	"sync"
)

// The neighbour table (neighbors.bin): for every word of the table, its
// nearest other words by cosine, at most NeighborsK of them with cosine at
// least NeighborsMin, nearest first. Finding them takes a scan of the
// whole table (Nearest, about 2 ms a word), so genneighbors makes them
// once for all words from table.bin, and the table embeds the result
// (about 2 MB).
//
// The encoding: magic "MGNB", version, word count, K and the minimum
// cosine ×1000 (uint32 each, little-endian); then count+1 uint32 offsets
// into the entries; then the entries, 3 bytes each: the neighbour's index
// (uint16) and its cosine quantized as (cos − NeighborsMin)/(1 −
// NeighborsMin)·255 (uint8).
const (
	NeighborsK   = 40
	NeighborsMin = 0.5
)

//go:embed neighbors.bin
var neighborsBytes []byte

var (
	neighborsOnce sync.Once
	neighbors     *neighborTable
	neighborsErr  error
)

type neighborTable struct {
	offsets []byte // (n+1) uint32
	entries []byte
	n       int
}

// Neighbors returns word i's nearest words with cosine at least min (and
// NeighborsMin), nearest first, at most k (and NeighborsK), from the
// embedded neighbour table. It panics if the embedded table does not
// belong to the embedded word table (a build defect, caught by tests).
func (t *Table) Neighbors(i, k int, min float64) []Neighbor {
	neighborsOnce.Do(func() { neighbors, neighborsErr = decodeNeighbors(neighborsBytes, len(t.words)) })
	if neighborsErr != nil {
		panic("wordvec: embedded neighbour table: " + neighborsErr.Error())
	}
	nt := neighbors
	if i < 0 || i >= nt.n || k <= 0 {
		return nil
	}
	lo := binary.LittleEndian.Uint32(nt.offsets[4*i:])
	hi := binary.LittleEndian.Uint32(nt.offsets[4*i+4:])
	var out []Neighbor
	for p := lo; p < hi && len(out) < k; p += 3 {
		e := nt.entries[p : p+3]
		cos := NeighborsMin + float64(e[2])/255*(1-NeighborsMin)
		if cos < min {
			break
		}
		out = append(out, Neighbor{Word: int(binary.LittleEndian.Uint16(e)), Cosine: cos})
	}
	return out
}

// EncodeNeighbors encodes the neighbours of every word (nb[i] for word i,
// nearest first, each with cosine at least NeighborsMin).
func EncodeNeighbors(nb [][]Neighbor) []byte {
	var b []byte
	for _, v := range []uint32{0x424e474d, 1, uint32(len(nb)), NeighborsK, NeighborsMin * 1000} {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	off := uint32(0)
	for _, ns := range nb {
		b = binary.LittleEndian.AppendUint32(b, off)
		off += 3 * uint32(len(ns))
	}
	b = binary.LittleEndian.AppendUint32(b, off)
	for _, ns := range nb {
		for _, n := range ns {
			b = binary.LittleEndian.AppendUint16(b, uint16(n.Word))
			q := (n.Cosine - NeighborsMin) / (1 - NeighborsMin) * 255
			b = append(b, byte(max(0, min(255, q+0.5))))
		}
	}
	return b
}

func decodeNeighbors(b []byte, words int) (*neighborTable, error) {
	if len(b) < 20 || binary.LittleEndian.Uint32(b) != 0x424e474d || binary.LittleEndian.Uint32(b[4:]) != 1 {
		return nil, errors.New("bad header")
	}
	n := int(binary.LittleEndian.Uint32(b[8:]))
	if n != words {
		return nil, errors.New("made for another word table")
	}
	offs := b[20 : 20+4*(n+1)]
	ents := b[20+4*(n+1):]
	if int(binary.LittleEndian.Uint32(offs[4*n:])) != len(ents) {
		return nil, errors.New("truncated")
	}
	return &neighborTable{offsets: offs, entries: ents, n: n}, nil
}
