package store_test

import (
	"math"
	"slices"
	"testing"

	"github.com/memgate/memgate/store"
)

func TestVectorEncoding(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		v    []float32
		want []byte
	}{
		{"Empty", nil, []byte{}},
		{"One", []float32{1}, []byte{0x00, 0x00, 0x80, 0x3f}},
		{"LittleEndian", []float32{-2, 0.5}, []byte{0x00, 0x00, 0x00, 0xc0, 0x00, 0x00, 0x00, 0x3f}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := store.EncodeVector(tc.v)
			if !slices.Equal(b, tc.want) {
				t.Fatalf("EncodeVector(%v) = % x, want % x", tc.v, b, tc.want)
			}
			got, err := store.DecodeVector(b)
			if err != nil || !slices.Equal(got, tc.v) {
				t.Fatalf("DecodeVector(% x) = %v, %v; want %v", b, got, err, tc.v)
			}
		})
	}
	// Bit for bit: a negative zero stays one.
	got, err := store.DecodeVector(store.EncodeVector([]float32{float32(math.Copysign(0, -1))}))
	if err != nil || !math.Signbit(float64(got[0])) {
		t.Fatalf("negative zero read back as %v, %v", got, err)
	}
	into, err := store.DecodeVectorInto(make([]float32, 1, 8), []byte{0x00, 0x00, 0x00, 0xc0, 0x00, 0x00, 0x00, 0x3f})
	if err != nil || !slices.Equal(into, []float32{-2, 0.5}) {
		t.Fatalf("DecodeVectorInto = %v, %v; want [-2 0.5]", into, err)
	}
	if _, err := store.DecodeVector([]byte{1, 2, 3, 4, 5}); err == nil {
		t.Fatal("5 bytes decoded")
	}
}

// FuzzDecodeVector: whatever bytes a row holds, decoding either fails (a
// length not a multiple of 4) or returns what encodes back to them.
func FuzzDecodeVector(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0x00, 0x00, 0x80, 0x3f})
	f.Add([]byte{0xff, 0xff, 0xff, 0x7f, 0x00}) // a NaN and a stray byte
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := store.DecodeVector(b)
		if (err != nil) != (len(b)%4 != 0) {
			t.Fatalf("%d bytes: err %v", len(b), err)
		}
		if err == nil && !slices.Equal(store.EncodeVector(v), b) {
			t.Fatalf("% x does not round-trip", b)
		}
		// DecodeVectorInto gives the same values bit for bit (NaN
		// payloads included), into reused storage longer or shorter
		// than the vector and full of other values.
		for _, n := range []int{0, len(b) / 8, len(b)/4 + 3} {
			dst := make([]float32, n, n+1)
			for i := range dst {
				dst[i] = float32(i) + 0.5
			}
			w, err := store.DecodeVectorInto(dst, b)
			if (err != nil) != (len(b)%4 != 0) {
				t.Fatalf("DecodeVectorInto, %d bytes: err %v", len(b), err)
			}
			if err == nil && (len(w) != len(v) || !slices.Equal(store.EncodeVector(w), b)) {
				t.Fatalf("DecodeVectorInto(% x) = %v, want %v", b, w, v)
			}
		}
	})
}

func TestTermsEncoding(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		terms []string
		want  []string // grouped by first occurrence
	}{
		{"None", nil, nil},
		{"One", []string{"garden"}, []string{"garden"}},
		{"Repeats grouped in order of first occurrence", []string{"b", "a", "b", "c", "a", "b"}, []string{"b", "b", "b", "a", "a", "c"}},
		{"Unicode", []string{"東京", "cafe", "東京"}, []string{"東京", "東京", "cafe"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := store.DecodeTerms(nil, store.EncodeTerms(tc.terms))
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("DecodeTerms(EncodeTerms(%q)) = %q, %v; want %q", tc.terms, got, err, tc.want)
			}
		})
	}
	good := store.EncodeTerms([]string{"a", "bb", "a"})
	for _, bad := range [][]byte{nil, {}, good[:len(good)-1], append(slices.Clone(good), 0), {1, 1, 'a', 0}, {1, 9, 'a', 1}, {200}} {
		if got, err := store.DecodeTerms(nil, bad); err == nil {
			t.Errorf("DecodeTerms(% x) = %q, want an error", bad, got)
		}
	}
}

// BenchmarkContentTerms is what the write path adds to each memory it
// stores for the index's terms (issue 27):
//
//	go test ./store -run '^$' -bench ContentTerms
func BenchmarkContentTerms(b *testing.B) {
	const content = "Message 4217: the garden needs watering on day 3, and the 12 tomatoes are ripe near bed 47."
	b.ReportAllocs()
	for b.Loop() {
		store.ContentTerms(content)
	}
}
