package index

import (
	"math"
	"testing"
)

// TestQuantizeCodes checks what the scan assumes of quantize beyond the
// bound TestQuantizationBound checks: every code is a nearest grid point of
// its value (computed here with the divisions quantize avoids), within
// ±codeMax, the largest value maps to ±codeMax, and the padding is zero.
func TestQuantizeCodes(t *testing.T) {
	t.Parallel()
	r := newRand(7)
	for _, name := range []string{"gaussian", "outlier", "scaled", "ternary", "aligned"} {
		for _, dim := range []int{1, 2, 3, 31, 384, 484, 1000} {
			gen := distributions[name](r, dim)
			stride := alignStride(dim)
			for range 20 {
				v := gen(r, dim, 0)
				norm, ok := checkVector(v)
				if !ok {
					t.Fatalf("%s dim %d: generated vector rejected", name, dim)
				}
				codes := make([]int8, stride)
				for i := range codes {
					codes[i] = 99 // must be overwritten or cleared
				}
				scale, resid := quantize(v, norm, codes)
				s := float64(scale)
				var top int8
				var r2 float64
				for i, x := range v {
					u := float64(x) / norm
					c := float64(codes[i])
					if c > codeMax || c < -codeMax {
						t.Fatalf("%s dim %d: code %v out of range", name, dim, c)
					}
					if d := math.Abs(u/s - c); d > 0.5+1e-9 && math.Abs(c) < codeMax {
						t.Fatalf("%s dim %d: value %v on a grid of %v coded %v, %v steps away", name, dim, u, s, c, d)
					}
					top = max(top, codes[i], -codes[i])
					e := u - s*c
					r2 += e * e
				}
				if top != codeMax {
					t.Fatalf("%s dim %d: largest code %d, want %d", name, dim, top, codeMax)
				}
				for i := dim; i < stride; i++ {
					if codes[i] != 0 {
						t.Fatalf("%s dim %d: padding code %d is %d", name, dim, i, codes[i])
					}
				}
				if want := math.Sqrt(r2); float64(resid) < want*(1-1e-12) || float64(resid) > want+1e-6 {
					t.Fatalf("%s dim %d: residual %v, the codes leave %v", name, dim, resid, want)
				}
			}
		}
	}
}

// TestCheckVector: checkVector decides finiteness from the norm alone, so
// a NaN or an infinity anywhere, among values of any size, must still be
// refused, and large or tiny finite values accepted.
func TestCheckVector(t *testing.T) {
	t.Parallel()
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	big := make([]float32, MaxDim)
	for i := range big {
		big[i] = math.MaxFloat32
	}
	cases := []struct {
		name string
		v    []float32
		ok   bool
	}{
		{"unit", []float32{1, 0, 0}, true},
		{"negative", []float32{-3, 4}, true},
		{"largest finite, every value, MaxDim of them", big, true},
		{"smallest subnormal", []float32{math.SmallestNonzeroFloat32}, true},
		{"zero", []float32{0, 0, 0}, false},
		{"negative zero", []float32{float32(math.Copysign(0, -1))}, false},
		{"nan first", []float32{nan, 1, 2}, false},
		{"nan last", []float32{1, 2, nan}, false},
		{"nan beside the largest", []float32{math.MaxFloat32, nan}, false},
		{"nan beside an infinity", []float32{inf, nan}, false},
		{"+inf", []float32{1, inf}, false},
		{"-inf", []float32{-inf, 1}, false},
		{"both infinities", []float32{inf, -inf}, false},
	}
	for _, c := range cases {
		norm, ok := checkVector(c.v)
		if ok != c.ok {
			t.Errorf("%s: ok %v, want %v", c.name, ok, c.ok)
			continue
		}
		if ok && !(norm > 0 && !math.IsInf(norm, 0) && norm == norm64(c.v)) {
			t.Errorf("%s: norm %v", c.name, norm)
		}
	}
}

// TestQuantizeKernels: the SIMD body of quantize, where the CPU has one,
// gives the pure-Go loop's codes bit for bit and its residual within a
// float32 step (the sum's order differs), on every distribution and on
// dimensions that do and do not fill whole blocks, including values on a
// rounding tie (half-integers on a grid of step 1).
func TestQuantizeKernels(t *testing.T) {
	if quantizeBody == nil {
		needSIMD(t, "SIMD quantize")
	}
	simd := quantizeBody
	quantizeWith := func(body func([]float32, float64, float64, float64, []int8) float64, v []float32, norm float64, codes []int8) (float32, float32) {
		old := quantizeBody
		quantizeBody = body
		defer func() { quantizeBody = old }()
		return quantize(v, norm, codes)
	}
	r := newRand(11)
	var vs [][]float32
	for _, name := range []string{"gaussian", "outlier", "scaled", "ternary", "aligned"} {
		for _, dim := range []int{8, 9, 16, 31, 384, 484, 1000} {
			gen := distributions[name](r, dim)
			for range 10 {
				vs = append(vs, gen(r, dim, 0))
			}
		}
	}
	ties := make([]float32, 64) // 127 sets the grid step to 1/‖v‖: k·x is x
	ties[0] = 127
	for i := 1; i < len(ties); i++ {
		ties[i] = float32(i%9) - 4.5
	}
	vs = append(vs, ties)
	for _, v := range vs {
		norm, _ := checkVector(v)
		stride := alignStride(len(v))
		a, b := make([]int8, stride), make([]int8, stride)
		sa, ra := quantizeWith(simd, v, norm, a)
		sb, rb := quantizeWith(nil, v, norm, b)
		if sa != sb || string(int8Bytes(a)) != string(int8Bytes(b)) {
			t.Fatalf("dim %d: SIMD codes %v (scale %v), Go %v (scale %v)", len(v), a, sa, b, sb)
		}
		if d := math.Abs(float64(ra) - float64(rb)); d > float64(math.Nextafter32(max(ra, rb), float32(math.Inf(1)))-max(ra, rb)) {
			t.Fatalf("dim %d: SIMD residual %v, Go %v", len(v), ra, rb)
		}
	}
}

func int8Bytes(c []int8) []byte {
	b := make([]byte, len(c))
	for i, x := range c {
		b[i] = byte(x)
	}
	return b
}
