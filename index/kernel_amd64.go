//go:build amd64 && !purego

package index

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// dotsAVX2Asm is the AVX2 kernel (kernel_amd64.s): it sign-extends 16 codes
// to int16 (VPMOVSXBW), multiplies them with the query and adds pairs into
// int32 lanes (VPMADDWD), four rows at a time so each query load serves four
// rows. stride must be a positive multiple of 16 and q must hold stride
// values.
//
//go:noescape
func dotsAVX2Asm(q *int16, codes *int8, stride int, n int, out *int32)

func dotsAVX2(q []int16, codes []int8, stride int, out []int32) {
	n := len(out)
	if n == 0 {
		return
	}
	// Bounds are checked here once so the assembly can trust them.
	_ = q[stride-1]
	_ = codes[n*stride-1]
	dotsAVX2Asm(&q[0], &codes[0], stride, n, &out[0])
}

// dotsVNNIAsm is the AVX-512 VNNI kernel (kernel_amd64.s): VPMOVSXBW
// widens 32 codes to int16 in a zmm and VPDPWSSD multiplies and adds them
// into int32 lanes in one instruction, four rows at a time. stride must be a
// positive multiple of 32 (strideAlign) and q must hold stride values.
//
//go:noescape
func dotsVNNIAsm(q *int16, codes *int8, stride int, n int, out *int32)

func dotsVNNI(q []int16, codes []int8, stride int, out []int32) {
	n := len(out)
	if n == 0 {
		return
	}
	_ = q[stride-1]
	_ = codes[n*stride-1]
	dotsVNNIAsm(&q[0], &codes[0], stride, n, &out[0])
}

// dotsGatherVNNIAsm is dotsVNNIAsm over scattered rows (see gatherDots).
//
//go:noescape
func dotsGatherVNNIAsm(q *int16, rows **int8, stride int, n int, out *int32)

func gatherDotsVNNI(q []int16, rows []*int8, stride int, out []int32) {
	n := len(out)
	if n == 0 {
		return
	}
	if n%4 != 0 || len(rows) < n+gatherAhead || len(q) < stride {
		panic("index: gatherDots: bad arguments")
	}
	dotsGatherVNNIAsm(&q[0], &rows[0], stride, n, &out[0])
}

// dotsGatherAVX2Asm is dotsAVX2Asm over scattered rows (see gatherDots).
//
//go:noescape
func dotsGatherAVX2Asm(q *int16, rows **int8, stride int, n int, out *int32)

func gatherDotsAVX2(q []int16, rows []*int8, stride int, out []int32) {
	n := len(out)
	if n == 0 {
		return
	}
	if n%4 != 0 || stride%strideAlign != 0 || len(rows) < n+gatherAhead || len(q) < stride {
		panic("index: gatherDots: bad arguments")
	}
	dotsGatherAVX2Asm(&q[0], &rows[0], stride, n, &out[0])
}

// boundMaskAsm is scan's bound check in SIMD (see boundMask).
//
//go:noescape
func boundMaskAsm(d *int32, scales *float32, resid *float32, n int, t, rho, tau, one, margin float64, mask *uint8)

func boundMaskAVX512(d []int32, scales, resid []float32, t, rho, tau float64, mask []uint64) {
	checkMaskArgs("boundMask", d, scales, resid, mask)
	boundMaskAsm(&d[0], &scales[0], &resid[0], len(d), t, rho, tau, 1, roundingMargin, (*uint8)(unsafe.Pointer(&mask[0])))
}

// boundMaskAVX2Asm is boundMaskAsm in AVX2, for CPUs without AVX-512.
//
//go:noescape
func boundMaskAVX2Asm(d *int32, scales *float32, resid *float32, n int, t, rho, tau, one, margin float64, mask *uint8)

func boundMaskAVX2(d []int32, scales, resid []float32, t, rho, tau float64, mask []uint64) {
	checkMaskArgs("boundMask", d, scales, resid, mask)
	boundMaskAVX2Asm(&d[0], &scales[0], &resid[0], len(d), t, rho, tau, 1, roundingMargin, (*uint8)(unsafe.Pointer(&mask[0])))
}

// checkMaskArgs checks once what the bound checks' assembly trusts: a
// block of a positive multiple of 64 rows, its scales and residuals, and a
// mask word for every 64 rows.
func checkMaskArgs(name string, d []int32, scales, resid []float32, mask []uint64) {
	n := len(d)
	if n == 0 || n%64 != 0 || len(scales) < n || len(resid) < n || len(mask) < n/64 {
		panic("index: " + name + ": bad arguments")
	}
}

// projDotsAsm is the projected pass's kernel in AVX-512 VNNI (see
// projDots).
//
//go:noescape
func projDotsAsm(q *int8, codes *uint8, d int, n int, bias int32, out *int32)

func projDotsVNNI(q []int8, codes []uint8, d int, out []int32) {
	n := len(out)
	if n == 0 {
		return
	}
	checkProjDotsArgs(q, codes, d, n)
	var sum int32
	for _, x := range q[:d] {
		sum += int32(x)
	}
	projDotsAsm(&q[0], &codes[0], d, n, 128*sum, &out[0])
}

// projDotsAVX2Asm is the projected pass's kernel in AVX2 (see projDots).
//
//go:noescape
func projDotsAVX2Asm(q *int8, codes *uint8, d int, n int, out *int32)

func projDotsAVX2(q []int8, codes []uint8, d int, out []int32) {
	n := len(out)
	if n == 0 {
		return
	}
	checkProjDotsArgs(q, codes, d, n)
	projDotsAVX2Asm(&q[0], &codes[0], d, n, &out[0])
}

// checkProjDotsArgs checks once what the projected kernels' assembly
// trusts: groups of 64 rows of d codes, d a multiple of 32, and d query
// codes. Codes, the query's and the rows', are within ±codeMax (prepare
// and project clamp them), as the AVX2 kernel needs: it negates them.
func checkProjDotsArgs(q []int8, codes []uint8, d, n int) {
	if n%64 != 0 || d <= 0 || d%32 != 0 || len(q) < d || len(codes) < n*d {
		panic("index: projDots: bad arguments")
	}
}

// projMaskAsm is projScan's bound check in SIMD (see projMask).
//
//go:noescape
func projMaskAsm(d *int32, scale *float32, resid *float32, n int, t, alpha, beta, gamma, tau float64, mask *uint8)

func projMaskAVX512(d []int32, scale, resid []float32, t, alpha, beta, gamma, tau float64, mask []uint64) {
	checkMaskArgs("projMask", d, scale, resid, mask)
	projMaskAsm(&d[0], &scale[0], &resid[0], len(d), t, alpha, beta, gamma, tau, (*uint8)(unsafe.Pointer(&mask[0])))
}

// projMaskAVX2Asm is projMaskAsm in AVX2, for CPUs without AVX-512.
//
//go:noescape
func projMaskAVX2Asm(d *int32, scale *float32, resid *float32, n int, t, alpha, beta, gamma, tau float64, mask *uint8)

func projMaskAVX2(d []int32, scale, resid []float32, t, alpha, beta, gamma, tau float64, mask []uint64) {
	checkMaskArgs("projMask", d, scale, resid, mask)
	projMaskAVX2Asm(&d[0], &scale[0], &resid[0], len(d), t, alpha, beta, gamma, tau, (*uint8)(unsafe.Pointer(&mask[0])))
}

// quantizeAVX2Asm is quantizeBody in AVX2 (kernel_amd64.s): eight values
// at a time, converted to float64, multiplied, rounded (VROUNDPD, nearest
// even), clamped, packed to int8, and their residuals squared and summed in
// eight float64 lanes. n must be a positive multiple of 8.
//
//go:noescape
func quantizeAVX2Asm(v *float32, n int, k, inv, s float64, codes *int8) float64

func quantizeAVX2(v []float32, k, inv, s float64, codes []int8) float64 {
	n := len(v)
	if n == 0 || n%quantizeBlock != 0 || len(codes) < n {
		panic("index: quantizeBody: bad arguments")
	}
	return quantizeAVX2Asm(&v[0], n, k, inv, s, &codes[0])
}

func init() {
	if cpu.X86.HasAVX2 {
		quantizeBody = quantizeAVX2
		asmKernels = append(asmKernels, namedKernel{"avx2", dotsAVX2})
		dots, kernelName = dotsAVX2, "avx2"
		gatherKernels = append(gatherKernels, namedGather{"avx2", gatherDotsAVX2})
		gatherDots = gatherDotsAVX2
		boundMasks = append(boundMasks, namedBoundMask{"avx2", boundMaskAVX2})
		projMasks = append(projMasks, namedProjMask{"avx2", projMaskAVX2})
		projDotsKernels = append(projDotsKernels, namedProjDots{"avx2", projDotsAVX2})
		projDots = projDotsAVX2
		boundMask, projMask = boundMaskAVX2, projMaskAVX2
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		asmDot64Lanes = append(asmDot64Lanes, namedDot64Lanes{"fma", dot64LanesFMA})
		dot64Lanes, dot64LanesName = dot64LanesFMA, "fma"
	}
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VNNI {
		asmKernels = append(asmKernels, namedKernel{"vnni", dotsVNNI})
		dots, kernelName = dotsVNNI, "vnni"
		gatherKernels = append(gatherKernels, namedGather{"vnni", gatherDotsVNNI})
		gatherDots = gatherDotsVNNI
		boundMasks = append(boundMasks, namedBoundMask{"vnni", boundMaskAVX512})
		projMasks = append(projMasks, namedProjMask{"vnni", projMaskAVX512})
		boundMask, projMask = boundMaskAVX512, projMaskAVX512
		projDotsKernels = append(projDotsKernels, namedProjDots{"vnni", projDotsVNNI})
		projDots = projDotsVNNI
	}
}

// dot64LanesFMAAsm is dot64Lanes in AVX2 with FMA (kernel_amd64.s): eight
// rows at a time, each row's four lanes in one ymm of float64, the query's
// four values converted once for the eight rows. n4 is a positive multiple
// of 4.
//
//go:noescape
func dot64LanesFMAAsm(a *float32, rows **float32, n4 int, n int, lanes *float64)

func dot64LanesFMA(a []float32, rows []*float32, n4 int, lanes []float64) {
	n := len(rows)
	if n == 0 {
		return
	}
	if n4 <= 0 || n4%4 != 0 || len(a) < n4 || len(lanes) < 4*n {
		panic("index: dot64Lanes: bad arguments")
	}
	dot64LanesFMAAsm(&a[0], &rows[0], n4, n, &lanes[0])
}
