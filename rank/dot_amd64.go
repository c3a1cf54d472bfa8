//go:build amd64 && !purego

package rank

import "golang.org/x/sys/cpu"

// dotLanesAVX2Asm is dotLanes in AVX2 (dot_amd64.s): eight rows at a time,
// each row's eight lanes in one ymm of float32, multiplied (VMULPS, each
// product rounded to float32) and added (VADDPS), as dot's loop does. n8
// is a positive multiple of 8.
//
//go:noescape
func dotLanesAVX2Asm(a *float32, rows **float32, n8 int, n int, lanes *float32)

func dotLanesAVX2(a []float32, rows []*float32, n8 int, lanes []float32) {
	n := len(rows)
	if n == 0 {
		return
	}
	if n8 <= 0 || n8%8 != 0 || len(a) < n8 || len(lanes) < 8*n {
		panic("rank: dotLanes: bad arguments")
	}
	dotLanesAVX2Asm(&a[0], &rows[0], n8, n, &lanes[0])
}

func init() {
	if cpu.X86.HasAVX2 {
		dotLanes, dotLanesName = dotLanesAVX2, "avx2"
	}
}
