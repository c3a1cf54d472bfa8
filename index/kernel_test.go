package index

import (
	"math/rand/v2"
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
