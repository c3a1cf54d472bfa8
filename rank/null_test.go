package rank

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// TestSurvivalBuckets holds Survival's bucketed search to a count of the
// measured scores at or above z: at every measured score, just above and
// below it, between, beyond both ends and at ±Inf, on nulls with many
// equal scores, few scores, one score and all scores equal.
func TestSurvivalBuckets(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	sets := map[string][]float64{"one": {0.5}, "equal": {1, 1, 1, 1, 1, 1, 1, 1, 1, 1}}
	for _, n := range []int{2, 7, 100, 5000, 40000} {
		zs := make([]float64, n)
		for i := range zs {
			zs[i] = r.NormFloat64()
			if i%5 == 0 {
				zs[i] = math.Round(zs[i]*8) / 8 // runs of equal scores
			}
		}
		sets[string(rune('a'+len(sets)))] = zs
	}
	for name, zs := range sets {
		n := newNull(append([]float64(nil), zs...))
		probes := []float64{math.Inf(1), math.Inf(-1), n.top + 1, n.z[len(n.z)-1] - 1}
		for _, x := range n.z {
			probes = append(probes, x, math.Nextafter(x, math.Inf(1)), math.Nextafter(x, math.Inf(-1)))
		}
		for range 2000 {
			probes = append(probes, n.z[len(n.z)-1]+(n.top-n.z[len(n.z)-1])*r.Float64())
		}
		for _, z := range probes {
			want := TailShare * math.Exp(-(z-n.tailZ)/n.theta)
			if !(z > n.tailZ) {
				// The scores descend: count those at or above z.
				count := sort.Search(len(n.z), func(i int) bool { return n.z[i] < z })
				want = max(float64(count), 1) / float64(len(n.z))
			}
			if got := n.Survival(z); got != want {
				t.Fatalf("%s: Survival(%v) = %v, want %v", name, z, got, want)
			}
		}
	}
}
