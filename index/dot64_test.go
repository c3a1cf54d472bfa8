package index

import (
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// dot64Kernels lists every dot64Lanes kernel this CPU runs, the generic
// one first.
func dot64Kernels() []namedDot64Lanes {
	return append([]namedDot64Lanes{{"generic", dot64LanesGeneric}}, asmDot64Lanes...)
}

// randFloat32 draws values that make float64 sums round: wide exponents,
// both signs, zeros of both signs, subnormals, and values that cancel.
func randFloat32(r *rand.Rand) float32 {
	switch r.IntN(10) {
	case 0:
		return 0
	case 1:
		return float32(math.Copysign(0, -1))
	case 2:
		return math.Float32frombits(r.Uint32() & 0x807fffff) // subnormal
	case 3:
		return float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(120)-60)))
	case 4:
		return math.MaxFloat32 * float32(r.Float64()*2-1)
	default:
		return float32(r.NormFloat64())
	}
}

// TestDots64Kernels holds every dot64Lanes kernel, through dots64, to
// dot64, bit for bit: dimensions with and without a tail, row counts with
// and without a remainder of four, values whose sums round.
func TestDots64Kernels(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 6))
	for it := range 400 {
		dim := 1 + r.IntN(600)
		if it%7 == 0 {
			dim = 484 // the built-in embedder's
		}
		n := r.IntN(11)
		a := make([]float32, dim)
		for i := range a {
			a[i] = randFloat32(r)
		}
		rows := make([]*float32, n)
		vecs := make([][]float32, n)
		for i := range rows {
			v := make([]float32, dim)
			for j := range v {
				v[j] = randFloat32(r)
				if it%5 == 0 && r.IntN(2) == 0 {
					v[j] = -a[j] // exact cancellation
				}
			}
			vecs[i], rows[i] = v, &v[0]
		}
		want := make([]float64, n)
		for i, v := range vecs {
			want[i] = dot64(a, v)
		}
		for _, k := range dot64Kernels() {
			got := make([]float64, n)
			dots64With(k.fn, a, rows, got, make([]float64, 4*n))
			for i := range got {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) && !(math.IsNaN(got[i]) && math.IsNaN(want[i])) {
					t.Fatalf("%s: dim %d row %d of %d: %v (%#x), want %v (%#x)", k.name, dim, i, n, got[i], math.Float64bits(got[i]), want[i], math.Float64bits(want[i]))
				}
			}
		}
	}
}

// TestDots64KernelLanes holds each kernel's lanes to the generic kernel's,
// bit for bit, and checks that it adds no value past n4 of a row (NaNs
// follow there).
func TestDots64KernelLanes(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 8))
	for _, k := range dot64Kernels() {
		for _, n := range []int{1, 3, 4, 5, 8, 9} {
			for _, n4 := range []int{4, 8, 12, 480, 484} {
				a := make([]float32, n4+4)
				for i := range a {
					a[i] = randFloat32(r)
				}
				rows := make([]*float32, n)
				for i := range rows {
					v := make([]float32, n4+4)
					for j := range v {
						v[j] = randFloat32(r)
					}
					v[n4], v[n4+1], v[n4+2], v[n4+3] = float32(math.NaN()), float32(math.NaN()), float32(math.NaN()), float32(math.NaN())
					rows[i] = &v[0]
				}
				want := make([]float64, 4*n)
				got := make([]float64, 4*n)
				dot64LanesGeneric(a, rows, n4, want)
				k.fn(a, rows, n4, got)
				for i := range want {
					if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
						t.Fatalf("%s: n %d n4 %d lane %d: %v, want %v", k.name, n, n4, i, got[i], want[i])
					}
				}
			}
		}
	}
}

func BenchmarkDots64(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	const dim, n = 484, 64
	a := make([]float32, dim)
	for i := range a {
		a[i] = float32(r.NormFloat64())
	}
	vecs := make([]float32, n*dim)
	for i := range vecs {
		vecs[i] = float32(r.NormFloat64())
	}
	rows := make([]*float32, n)
	for i := range rows {
		rows[i] = &vecs[i*dim]
	}
	out := make([]float64, n)
	lanes := make([]float64, 4*n)
	b.Run("dot64", func(b *testing.B) {
		for b.Loop() {
			for i := range rows {
				out[i] = dot64(a, unsafe.Slice(rows[i], dim))
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
	})
	for _, k := range dot64Kernels() {
		b.Run("dots64/"+k.name, func(b *testing.B) {
			for b.Loop() {
				dots64With(k.fn, a, rows, out, lanes)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
		})
	}
}
