package rank

import (
	"math"
	"math/rand/v2"
	"testing"
)

// randFloat32 draws values whose float32 products and sums round: wide
// exponents, both signs, zeros, subnormals.
func randFloat32(r *rand.Rand) float32 {
	switch r.IntN(8) {
	case 0:
		return 0
	case 1:
		return float32(math.Copysign(0, -1))
	case 2:
		return math.Float32frombits(r.Uint32() & 0x807fffff) // subnormal
	case 3:
		return float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(60)-30)))
	default:
		return float32(r.NormFloat64())
	}
}

// TestDotLanes holds dots, with every kernel this CPU runs, to dot bit for
// bit: dimensions with and without a tail, row counts across the blocks
// of dots and the eight rows of a kernel step.
func TestDotLanes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	kernels := map[string]func([]float32, []*float32, int, []float32){"generic": dotLanesGeneric, dotLanesName: dotLanes}
	for it := range 300 {
		dim := 1 + r.IntN(600)
		if it%5 == 0 {
			dim = 484 // the built-in embedder's
		}
		n := r.IntN(40)
		a := make([]float32, dim)
		for i := range a {
			a[i] = randFloat32(r)
		}
		rows := make([][]float32, n)
		ptrs := make([]*float32, n)
		for i := range rows {
			rows[i] = make([]float32, dim)
			for j := range rows[i] {
				rows[i][j] = randFloat32(r)
			}
			ptrs[i] = &rows[i][0]
		}
		for name, k := range kernels {
			got := 0
			dotsWith(k, a, ptrs, func(i int, d float64) {
				if i != got {
					t.Fatalf("%s: row %d after %d", name, i, got)
				}
				got++
				if want := dot(a, rows[i]); math.Float64bits(d) != math.Float64bits(want) && !(math.IsNaN(d) && math.IsNaN(want)) {
					t.Fatalf("%s: dim %d row %d of %d: %v, want %v", name, dim, i, n, d, want)
				}
			})
			if got != n {
				t.Fatalf("%s: %d rows of %d", name, got, n)
			}
		}
	}
}

// TestDotUnfused: dot rounds each product to float32 before adding it.
// x = 1+2⁻¹²: x·x = 1+2⁻¹¹+2⁻²⁴ rounds to 1+2⁻¹¹ in float32 (a tie, to
// even), so lane 0, −(1+2⁻¹¹) then + x·x, is 0; fused into the addition,
// the 2⁻²⁴ would remain.
func TestDotUnfused(t *testing.T) {
	x := float32(1 + math.Pow(2, -12))
	a := make([]float32, 16)
	b := make([]float32, 16)
	a[0], b[0] = 1, -float32(1+math.Pow(2, -11))
	a[8], b[8] = x, x
	if d := dot(a, b); d != 0 {
		t.Fatalf("dot = %v, want 0 (the product was fused)", d)
	}
	lanes := make([]float32, 8)
	for name, k := range map[string]func([]float32, []*float32, int, []float32){"generic": dotLanesGeneric, dotLanesName: dotLanes} {
		k(a, []*float32{&b[0]}, 16, lanes)
		if lanes[0] != 0 {
			t.Fatalf("%s: lane 0 = %v, want 0 (the product was fused)", name, lanes[0])
		}
	}
}
