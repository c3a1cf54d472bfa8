package rank

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// randomProbes returns n random vectors of dim values, the first few of
// one direction (ties among the cosines) and one of another scale.
func randomProbes(n, dim int) [][]float32 {
	r := rand.New(rand.NewPCG(7, uint64(dim)))
	vs := make([][]float32, n)
	for i := range vs {
		vs[i] = make([]float32, dim)
		for j := range vs[i] {
			vs[i][j] = float32(r.NormFloat64())
		}
	}
	copy(vs[1], vs[0])
	for j := range vs[2] {
		vs[2][j] = 3 * vs[0][j]
	}
	return vs
}

// TestMeasureNullIsDot: the null is measured with dots, several probes at
// a time; its z-scores must be those of dot, one pair at a time, bit for
// bit, whatever the dimension (tails of dots' blocks of 8 included).
func TestMeasureNullIsDot(t *testing.T) {
	for _, dim := range []int{7, 8, 384, 484, 1001} {
		c, err := NewCalibration(randomProbes(MinProbes+13, dim))
		if err != nil {
			t.Fatal(err)
		}
		n := len(c.probes)
		var zs []float64
		for i := range n {
			var sum, sq float64
			cos := make([]float64, n)
			for j := range n {
				if j != i {
					cos[j] = dot(c.probes[i], c.probes[j])
					sum += cos[j]
					sq += cos[j] * cos[j]
				}
			}
			m := float64(n - 1)
			bg := Background{Mean: sum / m, SD: math.Sqrt(max(sq/m-(sum/m)*(sum/m), 0))}
			for j := range n {
				if j != i {
					zs = append(zs, bg.Z(cos[j]))
				}
			}
		}
		want := newNull(zs)
		if !slices.Equal(c.null.z, want.z) || c.null.tailZ != want.tailZ || c.null.theta != want.theta {
			t.Fatalf("dim %d: the null differs from dot's", dim)
		}
	}
}

// BenchmarkNewCalibration is a model's calibration from its embedded
// probe set (once per model and process, on its first recall): 201
// probes of 484 dimensions, as the built-in embedder's.
func BenchmarkNewCalibration(b *testing.B) {
	vs := randomProbes(201, 484)
	for b.Loop() {
		if _, err := NewCalibration(vs); err != nil {
			b.Fatal(err)
		}
	}
}
