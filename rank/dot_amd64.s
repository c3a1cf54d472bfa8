//go:build amd64 && !purego

#include "textflag.h"

// func dotLanesAVX2Asm(a *float32, rows **float32, n8 int, n int, lanes *float32)
//
// dot's main loop over n rows, eight at a time (then one at a time): Y0..Y7
// hold the eight lanes (s0..s7) of eight rows; each step multiplies eight
// values of a with eight of each row (VMULPS, rounded to float32) and adds
// the products to the lanes (VADDPS), in the order of the Go loop. No FMA:
// a float32 product is not exact, and dot rounds it before adding.
TEXT ·dotLanesAVX2Asm(SB), NOSPLIT, $0-40
	MOVQ a+0(FP), SI
	MOVQ rows+8(FP), R8
	MOVQ n8+16(FP), BX
	MOVQ n+24(FP), CX
	MOVQ lanes+32(FP), DX
	SHLQ $2, BX // bytes per row

loop8:
	CMPQ   CX, $8
	JLT    loop1
	MOVQ   0(R8), DI
	MOVQ   8(R8), R9
	MOVQ   16(R8), R10
	MOVQ   24(R8), R11
	MOVQ   32(R8), R12
	MOVQ   40(R8), R13
	MOVQ   48(R8), R14
	MOVQ   56(R8), R15
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	XORQ   AX, AX

inner8:
	VMOVUPS (SI)(AX*1), Y8
	VMULPS  (DI)(AX*1), Y8, Y9
	VMULPS  (R9)(AX*1), Y8, Y10
	VMULPS  (R10)(AX*1), Y8, Y11
	VMULPS  (R11)(AX*1), Y8, Y12
	VADDPS  Y9, Y0, Y0
	VADDPS  Y10, Y1, Y1
	VADDPS  Y11, Y2, Y2
	VADDPS  Y12, Y3, Y3
	VMULPS  (R12)(AX*1), Y8, Y9
	VMULPS  (R13)(AX*1), Y8, Y10
	VMULPS  (R14)(AX*1), Y8, Y11
	VMULPS  (R15)(AX*1), Y8, Y12
	VADDPS  Y9, Y4, Y4
	VADDPS  Y10, Y5, Y5
	VADDPS  Y11, Y6, Y6
	VADDPS  Y12, Y7, Y7
	ADDQ    $32, AX
	CMPQ    AX, BX
	JLT     inner8

	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	VMOVUPS Y2, 64(DX)
	VMOVUPS Y3, 96(DX)
	VMOVUPS Y4, 128(DX)
	VMOVUPS Y5, 160(DX)
	VMOVUPS Y6, 192(DX)
	VMOVUPS Y7, 224(DX)
	ADDQ    $256, DX
	ADDQ    $64, R8
	SUBQ    $8, CX
	JMP     loop8

loop1:
	TESTQ  CX, CX
	JEQ    done
	MOVQ   0(R8), DI
	VXORPS Y0, Y0, Y0
	XORQ   AX, AX

inner1:
	VMOVUPS (SI)(AX*1), Y8
	VMULPS  (DI)(AX*1), Y8, Y9
	VADDPS  Y9, Y0, Y0
	ADDQ    $32, AX
	CMPQ    AX, BX
	JLT     inner1

	VMOVUPS Y0, (DX)
	ADDQ    $32, DX
	ADDQ    $8, R8
	DECQ    CX
	JMP     loop1

done:
	VZEROUPPER
	RET
