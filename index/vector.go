package index

import (
	"math"
)

// Exactness of the vector channel
//
// Every stored vector v (kept as given, in float32, with its float64 norm)
// also has a quantized copy of its direction u = v/‖v‖: one scale s and int8
// codes c with u ≈ s·c, and the residual norm r = ‖u − s·c‖ (rounded up).
// A query q is quantized the same way with a finer, int16 grid: qn = q/‖q‖ ≈
// t·e, ρ = ‖qn − t·e‖. With D = Σ e_j c_j (exact integer arithmetic) the true
// cosine c* = ⟨qn, u⟩ satisfies
//
//	c* − s·t·D = ⟨qn, u − s·c⟩ + s·⟨qn − t·e, c⟩
//	|c* − s·t·D| ≤ ‖qn‖·r + ρ·‖s·c‖ ≤ r + ρ·(1 + r)     (Cauchy–Schwarz, ‖qn‖ = 1)
//
// so with err = r + ρ(1+r) + roundingMargin every vector has an interval
// [lo, hi] = [sDt − err, sDt + err] that contains its exact float32 cosine as
// computed by Cosine. The scan keeps τ, the k-th largest lo among vectors
// that pass the filter: at least k vectors score ≥ τ, so a vector with
// hi < τ scores strictly below k others and cannot be in the top k, whatever
// the tie-break. Every vector with hi ≥ τ is re-scored exactly. The result is
// the exact top k, not an approximation: recall is 1 by construction.

// roundingMargin widens every interval to cover floating-point rounding: of
// the float32 result of Cosine (≤ 2⁻²⁵), of its float64 accumulation (about
// dim·2⁻⁵³) and of the float64 arithmetic of the bound itself. It is orders
// of magnitude larger than all of them together and orders of magnitude
// smaller than a typical quantization error, so it costs nothing.
const roundingMargin = 1e-6

// MaxDim is the largest vector dimension the index accepts. It keeps every
// int32 partial sum of the kernels far from overflow (see queryCodeMax).
const MaxDim = 16384

// codeMax bounds the stored int8 codes: ±127, never −128, so negation and
// every product stay symmetric.
const codeMax = 127

// queryCodeMax is the largest query code magnitude for a given stride: the
// finest int16 grid such that stride·codeMax·max never exceeds int32, so no
// kernel (whatever its order of additions) can overflow.
func queryCodeMax(stride int) int {
	m := (math.MaxInt32) / (codeMax * stride)
	if m > math.MaxInt16 {
		m = math.MaxInt16
	}
	return m
}

// alignStride rounds dim up to the slab row size.
func alignStride(dim int) int {
	return (dim + strideAlign - 1) / strideAlign * strideAlign
}

// dot64 is the float64 dot product of two float32 vectors with a fixed
// association order. Each product of two float32 values is exact in float64,
// so a fused multiply-add gives the same result as separate operations and the
// value is the same on every architecture.
func dot64(a, b []float32) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += float64(a[i]) * float64(b[i])
		s1 += float64(a[i+1]) * float64(b[i+1])
		s2 += float64(a[i+2]) * float64(b[i+2])
		s3 += float64(a[i+3]) * float64(b[i+3])
	}
	for ; i < len(a); i++ {
		s0 += float64(a[i]) * float64(b[i])
	}
	return (s0 + s1) + (s2 + s3)
}

// dot32 is a float32 dot product over eight lanes: faster than dot64, for
// scores that need no exactness guarantee (the content query's cosines,
// which propose nothing).
func dot32(a, b []float32) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
		s4 += a[i+4] * b[i+4]
		s5 += a[i+5] * b[i+5]
		s6 += a[i+6] * b[i+6]
		s7 += a[i+7] * b[i+7]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return float64((s0 + s1) + (s2 + s3) + (s4 + s5) + (s6 + s7))
}

// norm64 is the float64 L2 norm of v, as Cosine computes it.
func norm64(v []float32) float64 { return math.Sqrt(dot64(v, v)) }

// cosineWithNorms is Cosine with both norms already known.
func cosineWithNorms(a, b []float32, na, nb float64) float32 {
	return cosineOfDot(dot64(a, b), na, nb)
}

// cosineOfDot is cosineWithNorms with the dot product d = dot64(a, b)
// already known.
func cosineOfDot(d, na, nb float64) float32 {
	c := float32(d / (na * nb))
	// Rounding can carry a parallel pair just past ±1; clamping moves the
	// value towards the true cosine, so the exactness bound still holds.
	if c > 1 {
		c = 1
	} else if c < -1 {
		c = -1
	}
	return c
}

// Cosine is the exact cosine the index reports: the dot product and norms of
// the float32 inputs accumulated in float64, divided, rounded once to
// float32 and clamped to [-1, 1]. It is deterministic and the same on every
// architecture. a and b must have the same length and non-zero norms.
func Cosine(a, b []float32) float32 {
	return cosineWithNorms(a, b, norm64(a), norm64(b))
}

// roundUp32 returns the smallest float32 ≥ x.
func roundUp32(x float64) float32 {
	f := float32(x)
	if float64(f) < x {
		f = math.Nextafter32(f, float32(math.Inf(1)))
	}
	return f
}

// checkVector reports whether v can be indexed: finite values and a
// non-zero norm.
//
// The norm decides both in one pass: a NaN value makes the sum of squares
// NaN and an infinite one makes it +Inf (every term is ≥ 0, so no Inf − Inf
// can hide it), while finite float32 values can never overflow a float64
// sum of at most MaxDim squares (each < 2²⁵⁶).
func checkVector(v []float32) (norm float64, ok bool) {
	norm = norm64(v)
	if !(norm > 0) || math.IsInf(norm, 0) {
		return 0, false
	}
	return norm, true
}

// quantize writes the int8 codes of v/norm into codes (len(codes) is the
// stride; the padding is zeroed) and returns the scale and the residual
// norm, rounded up. v must be finite (checkVector).
//
// It multiplies where a direct transcription would divide twice per value
// (u = x/norm, u/scale): the codes may differ from those divisions' at a
// rounding tie, which the exactness argument does not care about, since the
// residual is measured against the codes chosen; the products are within
// an ulp or two of the quotients, far inside roundingMargin. Ties round to
// even, by adding and subtracting 1.5·2⁵² (exact for |w| < 2⁵¹; Go never
// reassociates floating-point sums, and the explicit conversion of the
// product keeps it from being fused into the addition, so the codes are the
// same on every architecture and in quantizeBody), which costs two
// additions where math.Round is a function call. The maximum is taken over the bits of |x|,
// which order as the values do for finite floats.
func quantize(v []float32, norm float64, codes []int8) (scale, resid float32) {
	const magic = 0x1.8p52
	var m0, m1 uint32
	i := 0
	for ; i+2 <= len(v); i += 2 {
		m0 = max(m0, math.Float32bits(v[i])&^(1<<31))
		m1 = max(m1, math.Float32bits(v[i+1])&^(1<<31))
	}
	for ; i < len(v); i++ {
		m0 = max(m0, math.Float32bits(v[i])&^(1<<31))
	}
	maxAbs := float64(math.Float32frombits(max(m0, m1)))
	// maxAbs/norm ≥ 1/√dim, so the scale never underflows.
	scale = float32(maxAbs / norm / codeMax)
	s := float64(scale)
	inv := 1 / norm
	k := inv / s // x·k ≈ x/norm/s, the code before rounding
	n := len(v) &^ (quantizeBlock - 1)
	var r0, r1 float64
	if quantizeBody != nil && n > 0 {
		r0 = quantizeBody(v[:n], k, inv, s, codes[:n])
	} else {
		n = 0
	}
	i = n
	for ; i+2 <= len(v); i += 2 {
		x0, x1 := float64(v[i]), float64(v[i+1])
		c0, c1 := clampCode((float64(x0*k)+magic)-magic), clampCode((float64(x1*k)+magic)-magic)
		codes[i], codes[i+1] = int8(c0), int8(c1)
		d0, d1 := x0*inv-s*c0, x1*inv-s*c1
		r0 += d0 * d0
		r1 += d1 * d1
	}
	for ; i < len(v); i++ {
		x := float64(v[i])
		c := clampCode((float64(x*k) + magic) - magic)
		codes[i] = int8(c)
		d := x*inv - s*c
		r0 += d * d
	}
	clear(codes[len(v):])
	return scale, roundUp32(math.Sqrt(r0 + r1))
}

// clampCode bounds a rounded code to ±codeMax. Plain comparisons: the values
// are finite, and math.Max/Min are not inlined.
func clampCode(c float64) float64 {
	if c > codeMax {
		return codeMax
	}
	if c < -codeMax {
		return -codeMax
	}
	return c
}

// qvec is a query vector prepared for the scan.
type qvec struct {
	vec   []float32
	norm  float64
	codes []int16 // stride values, padding zero
	t     float64 // grid step: qn ≈ t·codes
	rho   float64 // ‖qn − t·codes‖, rounded up
}

// prepare quantizes q (already checked) for a partition of the given stride,
// reusing codes' storage.
func prepareQuery(q []float32, norm float64, stride int, codes []int16) qvec {
	if cap(codes) < stride {
		codes = make([]int16, stride)
	}
	codes = codes[:stride]
	emax := float64(queryCodeMax(stride))
	var maxAbs float64
	for _, x := range q {
		if a := math.Abs(float64(x)); a > maxAbs {
			maxAbs = a
		}
	}
	t := maxAbs / norm / emax
	var r2 float64
	for i, x := range q {
		u := float64(x) / norm
		c := math.Round(u / t)
		if c > emax {
			c = emax
		} else if c < -emax {
			c = -emax
		}
		codes[i] = int16(c)
		d := u - t*c
		r2 += d * d
	}
	clear(codes[len(q):])
	return qvec{vec: q, norm: norm, codes: codes, t: t, rho: math.Sqrt(r2) * (1 + 1e-9)}
}
