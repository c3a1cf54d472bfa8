package rank

import "unsafe"

// dot is a float32 dot product over eight lanes (the background of a query
// costs a few hundred of them per recall; float32 is ample for a
// distribution's mean and deviation). Lane j adds the products of the
// elements i ≡ j (mod 8) in order, the tail goes to lane 0, and the lanes
// are summed in a fixed order; each product is rounded to float32 before
// it is added (the explicit conversion keeps a compiler from fusing it into
// the addition), so the value is the same on every architecture and in
// dotLanes' kernels.
func dot(a, b []float32) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		s0 += float32(a[i] * b[i])
		s1 += float32(a[i+1] * b[i+1])
		s2 += float32(a[i+2] * b[i+2])
		s3 += float32(a[i+3] * b[i+3])
		s4 += float32(a[i+4] * b[i+4])
		s5 += float32(a[i+5] * b[i+5])
		s6 += float32(a[i+6] * b[i+6])
		s7 += float32(a[i+7] * b[i+7])
	}
	for ; i < len(a); i++ {
		s0 += float32(a[i] * b[i])
	}
	return float64((s0 + s1) + (s2 + s3) + (s4 + s5) + (s6 + s7))
}

// dotLanes is dot's main loop over several rows: for each row i (rows[i]
// points to at least n8 values, n8 a multiple of 8) and lane j < 8,
// lanes[8i+j] is dot's s_j before its tail. A kernel must round each
// product before adding it (no fused multiply-add) and keep each lane's
// order: then it returns dotLanesGeneric's values bit for bit
// (TestDotLanes).
var dotLanes = dotLanesGeneric

// dotLanesName names the kernel in use, for tests.
var dotLanesName = "generic"

func dotLanesGeneric(a []float32, rows []*float32, n8 int, lanes []float32) {
	a = a[:n8]
	for r, p := range rows {
		b := unsafe.Slice(p, n8)
		var s0, s1, s2, s3, s4, s5, s6, s7 float32
		for i := 0; i+8 <= n8; i += 8 {
			s0 += float32(a[i] * b[i])
			s1 += float32(a[i+1] * b[i+1])
			s2 += float32(a[i+2] * b[i+2])
			s3 += float32(a[i+3] * b[i+3])
			s4 += float32(a[i+4] * b[i+4])
			s5 += float32(a[i+5] * b[i+5])
			s6 += float32(a[i+6] * b[i+6])
			s7 += float32(a[i+7] * b[i+7])
		}
		l := lanes[8*r : 8*r+8 : 8*r+8]
		l[0], l[1], l[2], l[3], l[4], l[5], l[6], l[7] = s0, s1, s2, s3, s4, s5, s6, s7
	}
}

// dotsBlock is how many rows dots hands dotLanes at a time (its lanes live
// on the stack).
const dotsBlock = 16

// dots calls f(i, dot(a, rows[i][:len(a)])) for each row, in order, with
// dot's values bit for bit, computed several rows at a time.
func dots(a []float32, rows []*float32, f func(i int, d float64)) {
	dotsWith(dotLanes, a, rows, f)
}

// dotsWith is dots with the given dotLanes kernel (tests).
func dotsWith(kernel func([]float32, []*float32, int, []float32), a []float32, rows []*float32, f func(i int, d float64)) {
	n8 := len(a) &^ 7
	var lanes [8 * dotsBlock]float32
	for start := 0; start < len(rows); start += dotsBlock {
		block := rows[start:min(start+dotsBlock, len(rows))]
		if n8 > 0 {
			kernel(a, block, n8, lanes[:8*len(block)])
		}
		for r, p := range block {
			l := lanes[8*r : 8*r+8 : 8*r+8]
			s0 := l[0]
			if n8 < len(a) {
				b := unsafe.Slice(p, len(a))
				for i := n8; i < len(a); i++ {
					s0 += float32(a[i] * b[i])
				}
			}
			f(start+r, float64((s0+l[1])+(l[2]+l[3])+(l[4]+l[5])+(l[6]+l[7])))
		}
	}
}
