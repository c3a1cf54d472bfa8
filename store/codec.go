package store

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"unsafe"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/analysis"
)

// EncodeVector returns v as backends store it: little-endian float32, four
// bytes a value. Every backend stores these bytes, so a vector reads back
// bit for bit whichever database holds it.
func EncodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

// DecodeVector reverses EncodeVector; no bytes decode to nil. A length that
// is not a multiple of four is an error (a corrupt row, for the backend to
// report as internal).
func DecodeVector(b []byte) ([]float32, error) {
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("stored vector has %d bytes, not a multiple of 4", len(b))
	}
	if len(b) == 0 {
		return nil, nil
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}

// EncodeMetadata returns md as JSON text to bind, or nil (SQL NULL) for a
// nil map. Metadata that JSON cannot hold (a NaN, a channel) is
// invalid_argument naming metadata.
func EncodeMetadata(md map[string]any) (any, error) {
	if md == nil {
		return nil, nil
	}
	b, err := json.Marshal(md)
	if err != nil {
		return nil, memgate.FieldError("metadata", "must be serializable as JSON (finite numbers, strings, arrays, objects)")
	}
	return string(b), nil
}

// DecodeVectorInto is DecodeVector reusing dst's storage. On a
// little-endian machine the stored bytes are the float32 values' memory,
// so it copies them whole (a cold load decodes every vector of a
// partition); elsewhere it decodes value by value.
func DecodeVectorInto(dst []float32, b []byte) ([]float32, error) {
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("stored vector has %d bytes, not a multiple of 4", len(b))
	}
	if len(b) == 0 {
		return nil, nil
	}
	dst = slices.Grow(dst[:0], len(b)/4)[:len(b)/4]
	if littleEndian {
		copy(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(dst))), len(b)), b)
		return dst, nil
	}
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return dst, nil
}

// littleEndian reports whether this machine stores a float32 as
// EncodeVector does.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// ContentTerms returns what backends store of content for the recall
// index (the columns index_terms and terms_version): EncodeTerms of
// analysis.Terms(content), and analysis.TermsVersion.
func ContentTerms(content string) ([]byte, string) {
	return EncodeTerms(analysis.Terms(content)), analysis.TermsVersion
}

// EncodeTerms returns analysed terms (with repeats) as backends store them:
// the number of distinct terms, then each distinct term in order of first
// occurrence as its length, its bytes and its count, every number an
// unsigned varint. DecodeTerms gives back the same terms with the same
// counts, each term's repeats together, so a BM25 index built from either
// is the same.
func EncodeTerms(terms []string) []byte {
	seen := make(map[string]int, len(terms))
	var order []string
	for _, t := range terms {
		if seen[t] == 0 {
			order = append(order, t)
		}
		seen[t]++
	}
	n := binary.MaxVarintLen64
	for _, t := range order {
		n += len(t) + 2*binary.MaxVarintLen64
	}
	b := make([]byte, 0, n)
	b = binary.AppendUvarint(b, uint64(len(order)))
	for _, t := range order {
		b = binary.AppendUvarint(b, uint64(len(t)))
		b = append(b, t...)
		b = binary.AppendUvarint(b, uint64(seen[t]))
	}
	return b
}

// maxTermRepeat bounds a term's count in DecodeTerms, so a corrupt row
// cannot ask for an unbounded slice.
const maxTermRepeat = 1 << 20

// DecodeTerms appends to dst the terms b encodes (EncodeTerms), each
// repeated its count. The strings share b's memory, with no copy: b must not
// change while they are in use. Bytes EncodeTerms cannot have made are an
// error (a corrupt row, for the backend to report as internal).
func DecodeTerms(dst []string, b []byte) ([]string, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, errors.New("stored terms: bad count")
	}
	b = b[k:]
	for range n {
		l, k := binary.Uvarint(b)
		if k <= 0 || l > uint64(len(b)-k) {
			return nil, errors.New("stored terms: bad term length")
		}
		b = b[k:]
		t := unsafe.String(unsafe.SliceData(b), int(l))
		b = b[l:]
		tf, k := binary.Uvarint(b)
		if k <= 0 || tf == 0 || tf > maxTermRepeat {
			return nil, errors.New("stored terms: bad count of a term")
		}
		b = b[k:]
		for range tf {
			dst = append(dst, t)
		}
	}
	if len(b) != 0 {
		return nil, errors.New("stored terms: trailing bytes")
	}
	return dst, nil
}
