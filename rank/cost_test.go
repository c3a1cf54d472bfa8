package rank_test

import (
	"testing"

	"github.com/memgate/memgate/embedder/builtin"
)

// BenchmarkBackground is the background of one query vector of the
// built-in embedder against its calibration's probes (once per recall).
func BenchmarkBackground(b *testing.B) {
	c := builtinCal()
	q := builtin.Vector("when did Alice go to Lisbon with the camera")
	for b.Loop() {
		c.Background(q)
	}
}

// BenchmarkExcess is Null.Excess over z-scores across the null's range
// (once per candidate with a vector: hundreds per recall).
func BenchmarkExcess(b *testing.B) {
	n := builtinCal().Null()
	zs := make([]float64, 256)
	for i := range zs {
		zs[i] = -3 + 9*float64(i)/float64(len(zs))
	}
	i := 0
	for b.Loop() {
		n.Excess(zs[i%len(zs)], 1000)
		i++
	}
}
