package rank_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/memgate/memgate/embedder/builtin"
	"github.com/memgate/memgate/rank"
)

func TestProbes(t *testing.T) {
	t.Parallel()
	ps := rank.Probes()
	if len(ps) < rank.MinProbes {
		t.Fatalf("%d probes, want at least %d", len(ps), rank.MinProbes)
	}
	seen := map[string]bool{}
	for _, p := range ps {
		if seen[p] {
			t.Errorf("probe %q twice", p)
		}
		seen[p] = true
	}
}

func TestNewCalibrationRefusesUnusableProbes(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	good := make([][]float32, rank.MinProbes)
	for i := range good {
		good[i] = make([]float32, 8)
		for j := range good[i] {
			good[i][j] = float32(rng.NormFloat64())
		}
	}
	if _, err := rank.NewCalibration(good); err != nil {
		t.Fatalf("random probe vectors: %v", err)
	}
	same := make([][]float32, rank.MinProbes)
	for i := range same {
		same[i] = []float32{1, 2, 3}
	}
	short := append([][]float32{{1, 2}}, good[1:]...)
	zero := append([][]float32{make([]float32, 8)}, good[1:]...)
	for name, vs := range map[string][][]float32{"too few": good[:10], "all alike": same, "mixed dimensions": short, "a zero vector": zero} {
		if _, err := rank.NewCalibration(vs); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// The background tells a related memory from an unrelated one on one
// scale whatever the model's cosines look like: shifting every vector by a
// common direction moves all cosines up and squeezes them together, and
// the z-scores stay close.
func TestBackgroundIsTheSharedScale(t *testing.T) {
	t.Parallel()
	shift := func(v []float32) []float32 {
		out := make([]float32, len(v))
		for i, x := range v {
			out[i] = x + 3/float32(math.Sqrt(float64(len(v))))
		}
		return out
	}
	plain := calibrationOf(t, builtin.Vector)
	moved := calibrationOf(t, func(s string) []float32 { return shift(builtin.Vector(s)) })
	q := "Which painter does Alice like?"
	related, unrelated := "Alice's favourite painter is Hokusai.", "The quarterly report is due on Friday."
	z := func(c *rank.Calibration, f func(string) []float32, m string) float64 {
		qv := f(q)
		return c.Background(qv).Z(dot(qv, f(m)) / math.Sqrt(dot(qv, qv)*dot(f(m), f(m))))
	}
	id := func(s string) []float32 { return builtin.Vector(s) }
	sh := func(s string) []float32 { return shift(builtin.Vector(s)) }
	zr, zu := z(plain, id, related), z(plain, id, unrelated)
	mr, mu := z(moved, sh, related), z(moved, sh, unrelated)
	if !(zr > 3.0 && zu < 3.0) {
		t.Fatalf("plain model: related z %.2f, unrelated z %.2f", zr, zu)
	}
	if !(mr > 3.0 && mu < 3.0) || math.Abs(mr-zr) > 0.25*zr {
		t.Fatalf("shifted model: related z %.2f (plain %.2f), unrelated z %.2f (plain %.2f)", mr, zr, mu, zu)
	}
	// Control: the shift really moved the raw cosines.
	if c := dot(sh(q), sh(unrelated)) / math.Sqrt(dot(sh(q), sh(q))*dot(sh(unrelated), sh(unrelated))); c < 0.8 {
		t.Fatalf("shifted unrelated cosine %.2f, want above 0.8", c)
	}
	if bg := plain.Background(make([]float32, builtin.Dim)); bg != (rank.Background{}) {
		t.Errorf("a zero vector has background %+v, want none", bg)
	}
}
