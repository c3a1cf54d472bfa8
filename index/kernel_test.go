package index

import (
	"math"
	"math/rand/v2"
	"os"
	"testing"
)

// kernels lists every kernel this CPU can run, the generic one first.
func kernels() map[string]func([]int16, []int8, int, []int32) {
	ks := map[string]func([]int16, []int8, int, []int32){"generic": dotsGeneric}
	for _, k := range asmKernels {
		ks[k.name] = k.fn
	}
	return ks
}

func checkDots(t *testing.T, q []int16, codes []int8, stride, n int) {
	t.Helper()
	want := make([]int32, n)
	dotsGeneric(q, codes, stride, want)
	// Plain reference, independent of the unrolling.
	for i := 0; i < n; i++ {
		var s int64
		for j := 0; j < stride; j++ {
			s += int64(q[j]) * int64(codes[i*stride+j])
		}
		if int64(want[i]) != s {
			t.Fatalf("generic row %d = %d, want %d", i, want[i], s)
		}
	}
	for name, k := range kernels() {
		got := make([]int32, n)
		k(q, codes, stride, got)
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s row %d of %d (stride %d) = %d, want %d", name, i, n, stride, got[i], want[i])
			}
		}
	}
}

func TestDotsKernelsAgree(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for _, stride := range []int{32, 64, 96, 384, 768, 1024} {
		for _, n := range []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 33, 256} {
			qmax := queryCodeMax(stride)
			q := make([]int16, stride)
			for j := range q {
				q[j] = int16(r.IntN(2*qmax+1) - qmax)
			}
			codes := make([]int8, n*stride)
			for j := range codes {
				codes[j] = int8(r.IntN(255) - 127)
			}
			checkDots(t, q, codes, stride, n)
			// Extremes: every product at its largest magnitude, both signs.
			for j := range q {
				q[j] = int16(qmax)
			}
			for j := range codes {
				codes[j] = -127
				if j%3 == 0 {
					codes[j] = 127
				}
			}
			checkDots(t, q, codes, stride, n)
			for j := range codes {
				codes[j] = -127
			}
			checkDots(t, q, codes, stride, n)
			// Zero codes (a zero row, and a zero query): every sum is 0.
			clear(codes)
			checkDots(t, q, codes, stride, n)
			clear(q)
			for j := range codes {
				codes[j] = int8(r.IntN(255) - 127)
			}
			checkDots(t, q, codes, stride, n)
		}
	}
}

// FuzzDots holds the assembly kernels to the pure-Go one, bit for bit.
func FuzzDots(f *testing.F) {
	f.Add([]byte{1, 2, 3}, uint8(1), uint8(5), uint64(7))
	f.Add([]byte{0x80, 0x7f, 0xff}, uint8(12), uint8(4), uint64(0))
	f.Add([]byte{}, uint8(0), uint8(1), uint64(99))
	f.Fuzz(func(t *testing.T, data []byte, strideUnits, rows uint8, seed uint64) {
		stride := strideAlign * (1 + int(strideUnits)%32)
		n := int(rows) % 40
		r := rand.New(rand.NewPCG(seed, uint64(len(data))))
		qmax := queryCodeMax(stride)
		q := make([]int16, stride)
		codes := make([]int8, n*stride)
		for j := range q {
			q[j] = int16(r.IntN(2*qmax+1) - qmax)
		}
		for j := range codes {
			var b byte
			if len(data) > 0 {
				b = data[j%len(data)] ^ byte(r.Uint32())
			} else {
				b = byte(r.Uint32())
			}
			c := int8(b)
			if c == -128 {
				c = -127
			}
			codes[j] = c
		}
		checkDots(t, q, codes, stride, n)
	})
}

// boundMaskGeneric is the reference for boundMask: scan's loop condition.
func boundMaskGeneric(d []int32, scales, resid []float32, t, rho, tau float64, mask []uint64) {
	clear(mask[:len(d)/64])
	for i, di := range d {
		a := float64(scales[i]) * t * float64(di)
		r := float64(resid[i])
		e := r + (1+r)*rho + roundingMargin
		if !(a+e < tau) {
			mask[i/64] |= 1 << (i % 64)
		}
	}
}

// TestBoundMask holds every SIMD bound check the CPU runs to the Go loop,
// bit for bit: random blocks, τ at −∞, τ equal to a row's upper bound (the
// tie keeps the row), zero dot products and extreme codes.
func TestBoundMask(t *testing.T) {
	if boundMask == nil {
		if kernelName != "generic" {
			t.Fatalf("a CPU with the %s kernel but no SIMD bound check", kernelName)
		}
		return // nothing to compare: scan runs the Go loop only
	}
	if got := boundMasks[len(boundMasks)-1].name; got != kernelName {
		t.Fatalf("the %s kernel's scan uses the %s bound check", kernelName, got)
	}
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	for it := range 2000 {
		n := 64 * (1 + r.IntN(4))
		d := make([]int32, n)
		scales := make([]float32, n)
		resid := make([]float32, n)
		for i := range d {
			switch r.IntN(5) {
			case 0:
				d[i] = 0
			case 1:
				d[i] = int32(r.IntN(2)*2-1) * (127 * 32767 * 384)
			default:
				d[i] = int32(r.IntN(4000001) - 2000000)
			}
			scales[i] = float32(r.Float64() * 1e-2)
			resid[i] = float32(r.Float64() * 0.05)
		}
		tq := r.Float64() * 1e-4
		rho := r.Float64() * 1e-4
		var tau float64
		switch it % 3 {
		case 0:
			tau = math.Inf(-1)
		case 1:
			j := r.IntN(n) // a tie: exactly row j's upper bound
			rr := float64(resid[j])
			tau = float64(scales[j])*tq*float64(d[j]) + (rr + (1+rr)*rho + roundingMargin)
		default:
			tau = r.Float64()*0.4 - 0.2
		}
		want := make([]uint64, n/64)
		boundMaskGeneric(d, scales, resid, tq, rho, tau, want)
		for _, m := range boundMasks {
			got := make([]uint64, n/64)
			m.fn(d, scales, resid, tq, rho, tau, got)
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("%s, iteration %d word %d: %064b, want %064b", m.name, it, i, got[i], want[i])
				}
			}
		}
	}
}

// needSIMD answers, for a test that holds a SIMD kernel to its Go loop, a
// CPU or a build without the kernel: in CI a failure, since CI must run
// where both are compared (its -tags purego run, which has no kernels,
// leaves these tests out by name: scripts/test); elsewhere a skip.
func needSIMD(t *testing.T, what string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("no %s in this build or on this CPU: CI must run where it is compared with the Go loop", what)
	}
	t.Skipf("no %s in this build or on this CPU", what)
}
