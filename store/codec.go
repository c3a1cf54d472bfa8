package store

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"

	"github.com/memgate/memgate"
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
