package index

import "unsafe"

// The int8 kernel computes, for n consecutive rows of a code slab, the exact
// integer dot product of each row with the quantized query:
//
//	out[i] = Σ_j int32(q[j]) * int32(codes[i*stride+j])   for j < stride
//
// Integer arithmetic makes the result independent of summation order, so
// every implementation (pure Go, AVX2) returns identical values; the fuzz
// test FuzzDots holds them to that. stride is a multiple of strideAlign,
// codes are in [-127, 127] and the query codes are bounded by queryCodeMax,
// so no int32 partial sum can overflow (see queryCodeMax).

// strideAlign is the row alignment of the code slab, in bytes: rows are
// zero-padded to a multiple of it so kernels need no tail loop.
const strideAlign = 32

// dots is the kernel used by searches: the fastest one the CPU supports.
var dots = dotsGeneric

// kernelName names the kernel in use, for benchmarks and tests.
var kernelName = "generic"

// namedKernel is a kernel and its name, for tests and benchmarks.
type namedKernel struct {
	name string
	fn   func(q []int16, codes []int8, stride int, out []int32)
}

// asmKernels lists the assembly kernels this CPU runs, slowest first; the
// last is the one searches use.
var asmKernels []namedKernel

// gatherDots is dots over scattered rows: out[i] is the dot product of q
// with the stride codes rows[i] points to. len(out) is a multiple of 4 and
// rows holds len(out)+gatherAhead pointers to rows of stride codes (the
// last ones may repeat any valid row: a kernel may prefetch them).
var gatherDots = gatherDotsGeneric

// namedGather is a gather kernel and its name, for tests and benchmarks.
type namedGather struct {
	name string
	fn   func(q []int16, rows []*int8, stride int, out []int32)
}

// gatherKernels lists the assembly gather kernels this CPU runs, slowest
// first; the last is gatherDots.
var gatherKernels []namedGather

// gatherAhead is how many pointers past the last row gatherDots may read
// (GATHERAHEAD in kernel_amd64.s).
const gatherAhead = 16

// gatherDotsGeneric runs dots on each row in turn.
func gatherDotsGeneric(q []int16, rows []*int8, stride int, out []int32) {
	for i := range out {
		dots(q, unsafe.Slice(rows[i], stride), stride, out[i:i+1])
	}
}

// boundMask, where the CPU has a SIMD version, sets bit i of mask (bit i%64
// of mask[i/64]) when row i of a block may be in the top k:
// a+e ≥ tau with a = float64(scales[i])·t·float64(d[i]) and
// e = r + (1+r)·rho + roundingMargin, r = float64(resid[i]), evaluated in
// that order, as scan's loop does. len(d) is a multiple of 64. nil: none.
var boundMask func(d []int32, scales, resid []float32, t, rho, tau float64, mask []uint64)

// namedBoundMask is a SIMD boundMask and its name, for tests.
type namedBoundMask struct {
	name string
	fn   func(d []int32, scales, resid []float32, t, rho, tau float64, mask []uint64)
}

// boundMasks lists the SIMD bound checks this CPU runs, slowest first,
// each named as the kernel (kernelName) it is used with; the last is
// boundMask. Tests hold each to the Go loop.
var boundMasks []namedBoundMask

// quantizeBody, where the CPU has a SIMD version, does quantize's second
// pass over v (len(v) a multiple of quantizeBlock): codes[i] =
// clamp(roundToEven(x·k), ±codeMax) and the sum of (x·inv − s·code)², each
// operation in float64 as quantize's loop does, so the codes are the
// loop's bit for bit (the sum may differ in its last bits by the order of
// additions). nil: quantize's loop does it all.
var quantizeBody func(v []float32, k, inv, s float64, codes []int8) (r2 float64)

// quantizeBlock is the number of values quantizeBody handles at a time.
const quantizeBlock = 8

// dotsGeneric is the pure-Go kernel, used where no assembly kernel applies
// and as the reference the assembly kernels are tested against. Four rows
// share each query load.
func dotsGeneric(q []int16, codes []int8, stride int, out []int32) {
	q = q[:stride]
	i := 0
	for ; i+4 <= len(out); i += 4 {
		rows := codes[i*stride : (i+4)*stride]
		r0 := rows[:len(q)]
		r1 := rows[stride:][:len(q)]
		r2 := rows[2*stride:][:len(q)]
		r3 := rows[3*stride:][:len(q)]
		var s0, s1, s2, s3 int32
		for j, qj := range q {
			w := int32(qj)
			s0 += w * int32(r0[j])
			s1 += w * int32(r1[j])
			s2 += w * int32(r2[j])
			s3 += w * int32(r3[j])
		}
		out[i], out[i+1], out[i+2], out[i+3] = s0, s1, s2, s3
	}
	for ; i < len(out); i++ {
		row := codes[i*stride : i*stride+len(q)]
		var s int32
		for j, qj := range q {
			s += int32(qj) * int32(row[j])
		}
		out[i] = s
	}
}

// dot64Lanes is the main loop of dot64 over several rows: for each row i
// (rows[i] points to at least n4 float32 values, n4 a multiple of 4) and
// each lane j < 4,
//
//	lanes[4i+j] = Σ a[4m+j]·rows[i][4m+j]   for m < n4/4, added in order of m
//
// from +0, each product and sum in float64: dot64's accumulators s0..s3
// before its tail. A product of two float32 values is exact in float64, so
// a kernel may fuse it into the addition (FMA) and still return the same
// values bit for bit; what it must keep is each lane's order of additions.
// dot64LanesGeneric is the reference TestDots64Kernels holds the assembly
// kernels to.
var dot64Lanes = dot64LanesGeneric

// dot64LanesName names the kernel in use, for benchmarks and tests.
var dot64LanesName = "generic"

// asmDot64Lanes lists the assembly dot64Lanes kernels this CPU runs.
var asmDot64Lanes []namedDot64Lanes

type namedDot64Lanes struct {
	name string
	fn   func(a []float32, rows []*float32, n4 int, lanes []float64)
}

func dot64LanesGeneric(a []float32, rows []*float32, n4 int, lanes []float64) {
	a = a[:n4]
	for i, p := range rows {
		b := unsafe.Slice(p, n4)
		var s0, s1, s2, s3 float64
		for m := 0; m+4 <= n4; m += 4 {
			s0 += float64(a[m]) * float64(b[m])
			s1 += float64(a[m+1]) * float64(b[m+1])
			s2 += float64(a[m+2]) * float64(b[m+2])
			s3 += float64(a[m+3]) * float64(b[m+3])
		}
		l := lanes[4*i : 4*i+4 : 4*i+4]
		l[0], l[1], l[2], l[3] = s0, s1, s2, s3
	}
}

// dots64 sets out[i] to dot64(a, rows[i][:len(a)]) for each row, bit for
// bit, several rows at a time (dot64Lanes, then dot64's tail and final
// sums here). lanes is scratch of at least 4·len(rows) values.
func dots64(a []float32, rows []*float32, out, lanes []float64) {
	dots64With(dot64Lanes, a, rows, out, lanes)
}

// dots64With is dots64 with the given dot64Lanes kernel (tests).
func dots64With(kernel func([]float32, []*float32, int, []float64), a []float32, rows []*float32, out, lanes []float64) {
	n := len(rows)
	if n == 0 {
		return
	}
	out = out[:n]
	lanes = lanes[:4*n]
	n4 := len(a) &^ 3
	if n4 > 0 {
		kernel(a, rows, n4, lanes)
	} else {
		clear(lanes)
	}
	for i, p := range rows {
		l := lanes[4*i : 4*i+4 : 4*i+4]
		s0 := l[0]
		if n4 < len(a) {
			b := unsafe.Slice(p, len(a))
			for m := n4; m < len(a); m++ {
				s0 += float64(a[m]) * float64(b[m])
			}
		}
		out[i] = (s0 + l[1]) + (l[2] + l[3])
	}
}
