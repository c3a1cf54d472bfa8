package wordvec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestCosines holds Cosines to Cosine bit for bit: runs of valid words of
// every length modulo four, words out of range or of a zero vector among
// them, a zero and a wrong-length v.
func TestCosines(t *testing.T) {
	tb := Default()
	r := rand.New(rand.NewPCG(1, 2))
	zero := -1
	for i := range tb.Len() {
		if tb.codeNorms()[i] == 0 {
			zero = i
			break
		}
	}
	vs := [][]float32{make([]float32, Dim), make([]float32, Dim-1), tb.Vector(tb.Len() - 1)}
	for range 20 {
		v := make([]float32, Dim)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		vs = append(vs, v)
	}
	for _, v := range vs {
		for n := range 13 {
			is := make([]int, n)
			for k := range is {
				switch r.IntN(8) {
				case 0:
					is[k] = -1
				case 1:
					is[k] = tb.Len()
				case 2:
					if zero >= 0 {
						is[k] = zero
					}
				default:
					is[k] = r.IntN(tb.Len())
				}
			}
			out := make([]float64, n)
			tb.Cosines(is, v, out)
			for k, i := range is {
				if want := tb.Cosine(i, v); math.Float64bits(out[k]) != math.Float64bits(want) {
					t.Fatalf("word %d (%d of %d), len(v) %d: %v, want %v", i, k, n, len(v), out[k], want)
				}
			}
		}
	}
}

func BenchmarkCosines(b *testing.B) {
	tb := Default()
	r := rand.New(rand.NewPCG(1, 2))
	v := make([]float32, Dim)
	for j := range v {
		v[j] = float32(r.NormFloat64())
	}
	is := make([]int, 400)
	for k := range is {
		is[k] = r.IntN(tb.Len())
	}
	out := make([]float64, len(is))
	b.Run("Cosine", func(b *testing.B) {
		for b.Loop() {
			for k, i := range is {
				out[k] = tb.Cosine(i, v)
			}
		}
	})
	b.Run("Cosines", func(b *testing.B) {
		for b.Loop() {
			tb.Cosines(is, v, out)
		}
	})
}
