package rank

import (
	"bufio"
	_ "embed"
	"errors"
	"math"
	"strings"

	"github.com/memgate/memgate"
)

// ProbeVersion names the probe set (probes.txt): a calibration made from
// another version is not this one, and is made again.
const ProbeVersion = "probes-v1"

// MinProbes is the least number of probe vectors a calibration needs.
const MinProbes = 100

//go:embed probes.txt
var probesText string

// Probes returns the probe set: short statements of the kind a memory
// service holds, about made-up people on everyday topics, unrelated to each
// other on purpose (see "Calibration" in the package comment). The slice is
// new on each call.
func Probes() []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(probesText))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		out = append(out, l)
	}
	return out
}

// Calibration is one embedder's probe set, embedded once: what puts that
// embedder's cosines on the scale every embedder shares. It is immutable
// and safe for concurrent use.
type Calibration struct {
	probes [][]float32 // unit length
	ptrs   []*float32  // to each probe's first value, for dots
	null   *Null
}

// NewCalibration returns the calibration of the model that embedded the
// probe set as vectors (at least MinProbes, one dimension, finite, none
// zero, and not all one direction).
func NewCalibration(vectors [][]float32) (*Calibration, error) {
	if len(vectors) < MinProbes {
		return nil, errors.New("rank: a calibration needs at least 100 probe vectors")
	}
	dim := len(vectors[0])
	if dim == 0 {
		return nil, errors.New("rank: probe vectors must not be empty")
	}
	c := &Calibration{}
	for _, v := range vectors {
		if len(v) != dim {
			return nil, errors.New("rank: probe vectors must have one dimension")
		}
		u := unit(v)
		if u == nil {
			return nil, errors.New("rank: probe vectors must be finite and non-zero")
		}
		c.probes = append(c.probes, u)
		c.ptrs = append(c.ptrs, &u[0])
	}
	if bg := c.Background(c.probes[0]); !(bg.SD > 1e-6) {
		return nil, errors.New("rank: the probe vectors do not vary")
	}
	c.null = c.measureNull()
	return c, nil
}

// measureNull measures the model's null (see Null): each probe is a query
// against the others, with the background of those others.
func (c *Calibration) measureNull() *Null {
	n := len(c.probes)
	cos := make([]float64, n*n)
	for i := range n {
		// dots is dot several rows at a time, bit for bit.
		dots(c.probes[i], c.ptrs[i+1:], func(k int, d float64) {
			j := i + 1 + k
			cos[i*n+j], cos[j*n+i] = d, d
		})
	}
	zs := make([]float64, 0, n*(n-1))
	for i := range n {
		row := cos[i*n : (i+1)*n]
		var sum, sq float64
		for j, d := range row {
			if j != i {
				sum += d
				sq += d * d
			}
		}
		m := float64(n - 1)
		bg := Background{Mean: sum / m, SD: math.Sqrt(max(sq/m-(sum/m)*(sum/m), 0))}
		if !(bg.SD > 1e-9) {
			continue
		}
		for j, d := range row {
			if j != i {
				zs = append(zs, bg.Z(d))
			}
		}
	}
	if len(zs) == 0 {
		return nil
	}
	return newNull(zs)
}

// Null returns the model's null distribution of z-scores (see Null).
func (c *Calibration) Null() *Null { return c.null }

// Dim returns the dimension of the calibrated model's vectors.
func (c *Calibration) Dim() int { return len(c.probes[0]) }

// Background returns the distribution of the cosines of a query vector q
// with the probes: their mean and standard deviation. A memory's vector
// evidence is how many deviations its cosine with q stands above that
// mean. A vector of another dimension, or a zero one, has no background
// (the zero Background).
func (c *Calibration) Background(q []float32) Background {
	u := unit(q)
	if u == nil || len(u) != c.Dim() {
		return Background{}
	}
	var sum, sq float64
	dots(u, c.ptrs, func(_ int, d float64) {
		sum += d
		sq += d * d
	})
	n := float64(len(c.probes))
	mean := sum / n
	return Background{Mean: mean, SD: math.Sqrt(max(sq/n-mean*mean, 0))}
}

// unit returns v scaled to unit length, nil if it is zero or not finite.
func unit(v []float32) []float32 {
	n := norm(v)
	if !(n > 0) || math.IsInf(n, 0) || math.IsNaN(n) {
		return nil
	}
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) / n)
	}
	return out
}

// Background is memgate.ProbeBackground (the callers' contract).
type Background = memgate.ProbeBackground

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}
