package rank

import (
	"math"
	"slices"
)

// Null is the distribution of one embedder's z-scores between unrelated
// texts: what a memory that has nothing to do with a query scores against
// it, on the scale of Background. It is measured on the probe set itself
// (every probe as a query against the others, each with its own
// leave-one-out background), so a model whose unrelated texts sometimes
// land close together (word-vector averages do) has a heavier tail than
// one that keeps them apart, and the same z-score means less. It is
// immutable and safe for concurrent use.
//
// A partition of N memories is N draws from this null: the chance maximum
// grows with N (about 2.9σ for 3 memories and 4.7σ for 3,000 under a
// normal null), so a memory's vector evidence is judged by Excess, which
// asks how unlikely its z-score is as the best of N unrelated memories.
type Null struct {
	z []float64 // every measured z-score, descending
	// Beyond tailZ (the score of the top TailShare of z) the survival
	// function is the fitted exponential S(z) = TailShare·exp(−(z −
	// tailZ)/theta): the measured scores thin out there, and an
	// exponential tail never claims that a score is less likely than the
	// data can tell.
	tailZ, theta float64
	// A bucket index of z, so that Survival searches a few scores, not
	// all: bucket(x) is non-decreasing along z (it is monotone in x and
	// z descends), and start[b] is the first index of z whose bucket is b
	// or more (start[len(start)-1] = len(z)).
	top, scale float64
	start      []int32
}

// bucketsPer is the mean number of scores per bucket of Null's index.
const bucketsPer = 8

// bucket returns the bucket of a score x: ⌊(top − x)·scale⌋ clamped to the
// buckets. Floating-point subtraction and multiplication by a positive
// number are monotone, and so are the floor and the clamp, so a higher
// score never falls in a later bucket.
func (n *Null) bucket(x float64) int {
	f := (n.top - x) * n.scale
	last := len(n.start) - 2
	switch {
	case !(f > 0): // NaN cannot reach here: Survival returns first
		return 0
	case f >= float64(last):
		return last
	}
	return int(f)
}

// TailShare is the share of the measured null z-scores the exponential tail
// is fitted on.
const TailShare = 0.01

// minTheta keeps the fitted tail from being thinner than a normal
// distribution's at the same point (1/z is its mean excess): a null
// measured on few probes must not make high scores look rarer than a
// normal null would.
func minTheta(z float64) float64 { return 1 / max(z, 1) }

// newNull returns the null of the z-scores zs (consumed).
func newNull(zs []float64) *Null {
	// Descending: sorted ascending (slices.Sort on float64 needs no
	// comparison function: several times faster on the 40,000 scores of
	// a calibration), then reversed. The scores are finite.
	slices.Sort(zs)
	slices.Reverse(zs)
	n := &Null{z: zs}
	k := max(1, int(TailShare*float64(len(zs))))
	n.tailZ = zs[k-1]
	var excess float64
	for _, z := range zs[:k-1] {
		excess += z - n.tailZ
	}
	if k > 1 {
		n.theta = excess / float64(k-1)
	}
	n.theta = max(n.theta, minTheta(n.tailZ))
	buckets := max(1, len(zs)/bucketsPer)
	n.top = zs[0]
	if span := zs[0] - zs[len(zs)-1]; span > 0 {
		n.scale = float64(buckets) / span
	}
	n.start = make([]int32, buckets+1)
	b := 0
	for i, x := range zs {
		for bx := n.bucket(x); b < bx; {
			b++
			n.start[b] = int32(i)
		}
	}
	for b++; b <= buckets; b++ {
		n.start[b] = int32(len(zs))
	}
	return n
}

// Samples returns how many z-scores the null was measured on.
func (n *Null) Samples() int {
	if n == nil {
		return 0
	}
	return len(n.z)
}

// Survival returns the probability that an unrelated memory's z-score is
// at least z. A nil Null is the standard normal distribution.
func (n *Null) Survival(z float64) float64 {
	if math.IsNaN(z) {
		return 1
	}
	if n == nil || len(n.z) == 0 {
		return 0.5 * math.Erfc(z/math.Sqrt2)
	}
	if z > n.tailZ {
		return TailShare * math.Exp(-(z-n.tailZ)/n.theta)
	}
	// The share of measured scores at or above z: the first index whose
	// score is below z (the scores descend). Scores of an earlier bucket
	// than z's are above it and those of a later one below, so only z's
	// own bucket is searched.
	b := n.bucket(z)
	lo, hi := int(n.start[b]), int(n.start[b+1])
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if n.z[m] >= z {
			lo = m + 1
		} else {
			hi = m
		}
	}
	i := lo
	return max(float64(i), 1) / float64(len(n.z))
}

// Excess returns how far z stands out as the best of a partition of
// partition memories, on the normal scale: Φ⁻¹ of the probability that
// the maximum of that many unrelated memories' z-scores stays below z. It
// is about 0 for a z-score the partition's chance maximum reaches half the
// time, and grows by about one for each deviation beyond. It is finite,
// within ±MaxExcess. A partition smaller than 1 counts as 1.
func (n *Null) Excess(z float64, partition int) float64 {
	s := n.Survival(z)
	m := float64(max(partition, 1))
	// P(max ≥ z) = 1 − (1 − s)^m, computed without cancellation.
	p := -math.Expm1(m * math.Log1p(-min(s, 1-1e-16)))
	if !(p > 0) {
		return MaxExcess
	}
	if p >= 1 {
		return -MaxExcess
	}
	return max(-MaxExcess, min(MaxExcess, upperQuantile(p)))
}

// upperQuantile returns x with P(Z ≥ x) = p for a standard normal Z, for p
// in (0, 1), accurate to a few ulps also where p is far below the float64
// resolution of 1 − p (math.Erfcinv works through 1 − p there).
func upperQuantile(p float64) float64 {
	if p > 1e-6 {
		return math.Sqrt2 * math.Erfcinv(2*p)
	}
	// Start from the tail asymptote and polish with Newton steps on
	// log P(Z ≥ x), whose slope is −φ(x)/P(Z ≥ x).
	l := -2 * math.Log(p)
	x := math.Sqrt(l - math.Log(l) - math.Log(2*math.Pi))
	lp := math.Log(p)
	for range 6 {
		s := 0.5 * math.Erfc(x/math.Sqrt2)
		if !(s > 0) {
			break
		}
		phi := math.Exp(-x*x/2) / math.Sqrt(2*math.Pi)
		x -= (math.Log(s) - lp) / (-phi / s)
	}
	return x
}

// MaxExcess bounds Excess.
const MaxExcess = 30.0
