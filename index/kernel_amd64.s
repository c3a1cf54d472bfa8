//go:build amd64 && !purego

#include "textflag.h"

// PREFDIST is how many groups of four rows ahead the loop prefetches. A
// large partition is scanned from memory, not cache; explicit prefetch lets
// one core keep more lines in flight (about 25% faster at 100k × 384 on a
// loaded machine, neutral in cache).
#define PREFDIST 4

// func dotsAVX2Asm(q *int16, codes *int8, stride int, n int, out *int32)
TEXT ·dotsAVX2Asm(SB), NOSPLIT, $0-40
	MOVQ q+0(FP), SI
	MOVQ codes+8(FP), DI
	MOVQ stride+16(FP), BX
	MOVQ n+24(FP), CX
	MOVQ out+32(FP), DX

loop4:
	CMPQ CX, $4
	JLT  tail
	LEAQ (DI)(BX*1), R9
	LEAQ (DI)(BX*2), R10
	LEAQ (R9)(BX*2), R11
	// R12: the same position PREFDIST groups of four rows ahead; each
	// iteration prefetches the 64 bytes of it that the loop will need.
	MOVQ BX, R12
	IMULQ $(4*PREFDIST), R12
	ADDQ DI, R12
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	XORQ AX, AX

inner4:
	PREFETCHT0 (R12)(AX*4)
	VMOVDQU   (SI)(AX*2), Y4
	VPMOVSXBW (DI)(AX*1), Y5
	VPMOVSXBW (R9)(AX*1), Y6
	VPMOVSXBW (R10)(AX*1), Y7
	VPMOVSXBW (R11)(AX*1), Y8
	VPMADDWD  Y4, Y5, Y5
	VPMADDWD  Y4, Y6, Y6
	VPMADDWD  Y4, Y7, Y7
	VPMADDWD  Y4, Y8, Y8
	VPADDD    Y5, Y0, Y0
	VPADDD    Y6, Y1, Y1
	VPADDD    Y7, Y2, Y2
	VPADDD    Y8, Y3, Y3
	ADDQ      $16, AX
	CMPQ      AX, BX
	JLT       inner4

	// Horizontal sums of Y0..Y3 into one xmm of four int32.
	VPHADDD      Y1, Y0, Y0
	VPHADDD      Y3, Y2, Y2
	VPHADDD      Y2, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VMOVDQU      X0, (DX)

	ADDQ $16, DX
	LEAQ (DI)(BX*4), DI
	SUBQ $4, CX
	JMP  loop4

tail:
	TESTQ CX, CX
	JEQ   done
	VPXOR Y0, Y0, Y0
	XORQ  AX, AX

inner1:
	VMOVDQU   (SI)(AX*2), Y4
	VPMOVSXBW (DI)(AX*1), Y5
	VPMADDWD  Y4, Y5, Y5
	VPADDD    Y5, Y0, Y0
	ADDQ      $16, AX
	CMPQ      AX, BX
	JLT       inner1

	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0x4e, X0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0xb1, X0, X1
	VPADDD       X1, X0, X0
	VMOVD        X0, (DX)

	ADDQ $4, DX
	ADDQ BX, DI
	DECQ CX
	JMP  tail

done:
	VZEROUPPER
	RET

// func dotsVNNIAsm(q *int16, codes *int8, stride int, n int, out *int32)
//
// The AVX-512 VNNI kernel: VPMOVSXBW widens 32 codes to int16 in a zmm,
// VPDPWSSD multiplies them with the query and adds the pairs into int32
// lanes in one instruction, four rows at a time. The products and sums are
// the same integers as dotsAVX2Asm's. stride must be a positive multiple of
// 32.
TEXT ·dotsVNNIAsm(SB), NOSPLIT, $0-40
	MOVQ q+0(FP), SI
	MOVQ codes+8(FP), DI
	MOVQ stride+16(FP), BX
	MOVQ n+24(FP), CX
	MOVQ out+32(FP), DX

vloop4:
	CMPQ CX, $4
	JLT  vtail
	LEAQ (DI)(BX*1), R9
	LEAQ (DI)(BX*2), R10
	LEAQ (R9)(BX*2), R11
	MOVQ BX, R12
	IMULQ $(4*PREFDIST), R12
	ADDQ DI, R12
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	XORQ AX, AX

vinner4:
	PREFETCHT0 (R12)(AX*4)
	PREFETCHT0 64(R12)(AX*4)
	VMOVDQU16 (SI)(AX*2), Z4
	VPMOVSXBW (DI)(AX*1), Z5
	VPMOVSXBW (R9)(AX*1), Z6
	VPMOVSXBW (R10)(AX*1), Z7
	VPMOVSXBW (R11)(AX*1), Z8
	VPDPWSSD  Z4, Z5, Z0
	VPDPWSSD  Z4, Z6, Z1
	VPDPWSSD  Z4, Z7, Z2
	VPDPWSSD  Z4, Z8, Z3
	ADDQ      $32, AX
	CMPQ      AX, BX
	JLT       vinner4

	// Fold each zmm to a ymm, then as in dotsAVX2Asm.
	VEXTRACTI64X4 $1, Z0, Y4
	VPADDD        Y4, Y0, Y0
	VEXTRACTI64X4 $1, Z1, Y5
	VPADDD        Y5, Y1, Y1
	VEXTRACTI64X4 $1, Z2, Y6
	VPADDD        Y6, Y2, Y2
	VEXTRACTI64X4 $1, Z3, Y7
	VPADDD        Y7, Y3, Y3
	VPHADDD       Y1, Y0, Y0
	VPHADDD       Y3, Y2, Y2
	VPHADDD       Y2, Y0, Y0
	VEXTRACTI128  $1, Y0, X1
	VPADDD        X1, X0, X0
	VMOVDQU       X0, (DX)

	ADDQ $16, DX
	LEAQ (DI)(BX*4), DI
	SUBQ $4, CX
	JMP  vloop4

vtail:
	TESTQ CX, CX
	JEQ   vdone
	VPXORD Z0, Z0, Z0
	XORQ  AX, AX

vinner1:
	VMOVDQU16 (SI)(AX*2), Z4
	VPMOVSXBW (DI)(AX*1), Z5
	VPDPWSSD  Z4, Z5, Z0
	ADDQ      $32, AX
	CMPQ      AX, BX
	JLT       vinner1

	VEXTRACTI64X4 $1, Z0, Y4
	VPADDD        Y4, Y0, Y0
	VEXTRACTI128  $1, Y0, X1
	VPADDD        X1, X0, X0
	VPSHUFD       $0x4e, X0, X1
	VPADDD        X1, X0, X0
	VPSHUFD       $0xb1, X0, X1
	VPADDD        X1, X0, X0
	VMOVD         X0, (DX)

	ADDQ $4, DX
	ADDQ BX, DI
	DECQ CX
	JMP  vtail

vdone:
	VZEROUPPER
	RET

// GATHERAHEAD is how many rows ahead dotsGatherVNNIAsm prefetches: the rows
// of a gather are scattered, so every line must be asked for early.
#define GATHERAHEAD 16

// func dotsGatherVNNIAsm(q *int16, rows **int8, stride int, n int, out *int32)
//
// dotsVNNIAsm over scattered rows: out[i] is the dot product of the query
// with the row rows[i] points to. n is a multiple of 4 and rows holds
// n+GATHERAHEAD valid pointers (the last ones are only prefetched).
TEXT ·dotsGatherVNNIAsm(SB), NOSPLIT, $0-40
	MOVQ q+0(FP), SI
	MOVQ rows+8(FP), R8
	MOVQ stride+16(FP), BX
	MOVQ n+24(FP), CX
	MOVQ out+32(FP), DX

gloop4:
	TESTQ CX, CX
	JEQ   gdone
	MOVQ  0(R8), DI
	MOVQ  8(R8), R9
	MOVQ  16(R8), R10
	MOVQ  24(R8), R11
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	XORQ  AX, AX

ginner4:
	MOVQ       (GATHERAHEAD*8)(R8), R12
	PREFETCHT0 (R12)(AX*1)
	MOVQ       (GATHERAHEAD*8+8)(R8), R12
	PREFETCHT0 (R12)(AX*1)
	MOVQ       (GATHERAHEAD*8+16)(R8), R12
	PREFETCHT0 (R12)(AX*1)
	MOVQ       (GATHERAHEAD*8+24)(R8), R12
	PREFETCHT0 (R12)(AX*1)
	VMOVDQU16  (SI)(AX*2), Z4
	VPMOVSXBW  (DI)(AX*1), Z5
	VPMOVSXBW  (R9)(AX*1), Z6
	VPMOVSXBW  (R10)(AX*1), Z7
	VPMOVSXBW  (R11)(AX*1), Z8
	VPDPWSSD   Z4, Z5, Z0
	VPDPWSSD   Z4, Z6, Z1
	VPDPWSSD   Z4, Z7, Z2
	VPDPWSSD   Z4, Z8, Z3
	ADDQ       $32, AX
	CMPQ       AX, BX
	JLT        ginner4

	VEXTRACTI64X4 $1, Z0, Y4
	VPADDD        Y4, Y0, Y0
	VEXTRACTI64X4 $1, Z1, Y5
	VPADDD        Y5, Y1, Y1
	VEXTRACTI64X4 $1, Z2, Y6
	VPADDD        Y6, Y2, Y2
	VEXTRACTI64X4 $1, Z3, Y7
	VPADDD        Y7, Y3, Y3
	VPHADDD       Y1, Y0, Y0
	VPHADDD       Y3, Y2, Y2
	VPHADDD       Y2, Y0, Y0
	VEXTRACTI128  $1, Y0, X1
	VPADDD        X1, X0, X0
	VMOVDQU       X0, (DX)

	ADDQ $16, DX
	ADDQ $32, R8
	SUBQ $4, CX
	JMP  gloop4

gdone:
	VZEROUPPER
	RET

// func boundMaskAsm(d *int32, scales *float32, resid *float32, n int, t, rho, tau, one, margin float64, mask *uint8)
//
// The bound check of scan in SIMD, eight rows a step, in float64 with the
// operations of the Go loop in its order: a = (scale·t)·d,
// e = (r + (1+r)·ρ) + margin, and bit i of the mask is a+e ≥ τ (the row
// may be in the top k). n is a positive multiple of 8.
TEXT ·boundMaskAsm(SB), NOSPLIT, $0-80
	MOVQ         d+0(FP), SI
	MOVQ         scales+8(FP), DI
	MOVQ         resid+16(FP), R8
	MOVQ         n+24(FP), CX
	VBROADCASTSD t+32(FP), Z10
	VBROADCASTSD rho+40(FP), Z11
	VBROADCASTSD tau+48(FP), Z12
	VBROADCASTSD one+56(FP), Z13
	VBROADCASTSD margin+64(FP), Z14
	MOVQ         mask+72(FP), DX

bloop:
	VCVTDQ2PD (SI), Z0
	VCVTPS2PD (DI), Z1
	VCVTPS2PD (R8), Z2
	VMULPD    Z10, Z1, Z1
	VMULPD    Z0, Z1, Z1
	VADDPD    Z13, Z2, Z3
	VMULPD    Z11, Z3, Z3
	VADDPD    Z3, Z2, Z3
	VADDPD    Z14, Z3, Z3
	VADDPD    Z3, Z1, Z1
	VCMPPD    $0x1d, Z12, Z1, K1
	KMOVB     K1, (DX)
	ADDQ      $32, SI
	ADDQ      $32, DI
	ADDQ      $32, R8
	INCQ      DX
	SUBQ      $8, CX
	JNZ       bloop
	VZEROUPPER
	RET

// func quantizeAVX2Asm(v *float32, n int, k, inv, s float64, codes *int8) float64
TEXT ·quantizeAVX2Asm(SB), NOSPLIT, $0-56
	MOVQ v+0(FP), SI
	MOVQ n+8(FP), CX
	VBROADCASTSD k+16(FP), Y10
	VBROADCASTSD inv+24(FP), Y11
	VBROADCASTSD s+32(FP), Y12
	MOVQ codes+40(FP), DI
	MOVQ $0x405FC00000000000, AX // 127.0
	MOVQ AX, X13
	VBROADCASTSD X13, Y13
	MOVQ $0xC05FC00000000000, AX // -127.0
	MOVQ AX, X14
	VBROADCASTSD X14, Y14
	VXORPD Y8, Y8, Y8
	VXORPD Y9, Y9, Y9

qloop:
	VCVTPS2PD (SI), Y0
	VCVTPS2PD 16(SI), Y1
	VMULPD    Y10, Y0, Y2
	VMULPD    Y10, Y1, Y3
	VROUNDPD  $0, Y2, Y2
	VROUNDPD  $0, Y3, Y3
	VMINPD    Y13, Y2, Y2
	VMINPD    Y13, Y3, Y3
	VMAXPD    Y14, Y2, Y2
	VMAXPD    Y14, Y3, Y3
	VCVTPD2DQY Y2, X4
	VCVTPD2DQY Y3, X5
	VPACKSSDW X5, X4, X4
	VPACKSSWB X4, X4, X4
	VMOVQ     X4, (DI)
	VMULPD    Y11, Y0, Y0
	VMULPD    Y11, Y1, Y1
	VMULPD    Y12, Y2, Y2
	VMULPD    Y12, Y3, Y3
	VSUBPD    Y2, Y0, Y0
	VSUBPD    Y3, Y1, Y1
	VMULPD    Y0, Y0, Y0
	VMULPD    Y1, Y1, Y1
	VADDPD    Y0, Y8, Y8
	VADDPD    Y1, Y9, Y9
	ADDQ      $32, SI
	ADDQ      $8, DI
	SUBQ      $8, CX
	JNZ       qloop

	VADDPD       Y9, Y8, Y8
	VEXTRACTF128 $1, Y8, X9
	VADDPD       X9, X8, X8
	VUNPCKHPD    X8, X8, X9
	VADDSD       X9, X8, X8
	VMOVSD       X8, ret+48(FP)
	VZEROUPPER
	RET

// func dot64LanesFMAAsm(a *float32, rows **float32, n4 int, n int, lanes *float64)
//
// dot64's main loop over n rows, eight at a time (then four, then one):
// Y0..Y7 hold the four lanes (s0..s3) of eight rows; each step converts
// four values of a and of each row to float64 (exact) and adds lane j's
// product to lane j with VFMADD231PD, in the order of the Go loop. The
// product of two float32 values is exact in float64, so fusing it into the
// addition rounds once, as the Go loop's addition does: the sums are the
// same bit for bit. n4 is a positive multiple of 4.
TEXT ·dot64LanesFMAAsm(SB), NOSPLIT, $0-40
	MOVQ a+0(FP), SI
	MOVQ rows+8(FP), R8
	MOVQ n4+16(FP), BX
	MOVQ n+24(FP), CX
	MOVQ lanes+32(FP), DX
	SHLQ $2, BX

hloop8:
	CMPQ   CX, $8
	JLT    hloop4
	MOVQ   0(R8), DI
	MOVQ   8(R8), R9
	MOVQ   16(R8), R10
	MOVQ   24(R8), R11
	MOVQ   32(R8), R12
	MOVQ   40(R8), R13
	MOVQ   48(R8), R14
	MOVQ   56(R8), R15
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	XORQ   AX, AX

hinner8:
	VCVTPS2PD   (SI)(AX*1), Y8
	VCVTPS2PD   (DI)(AX*1), Y9
	VCVTPS2PD   (R9)(AX*1), Y10
	VCVTPS2PD   (R10)(AX*1), Y11
	VCVTPS2PD   (R11)(AX*1), Y12
	VFMADD231PD Y8, Y9, Y0
	VFMADD231PD Y8, Y10, Y1
	VFMADD231PD Y8, Y11, Y2
	VFMADD231PD Y8, Y12, Y3
	VCVTPS2PD   (R12)(AX*1), Y9
	VCVTPS2PD   (R13)(AX*1), Y10
	VCVTPS2PD   (R14)(AX*1), Y11
	VCVTPS2PD   (R15)(AX*1), Y12
	VFMADD231PD Y8, Y9, Y4
	VFMADD231PD Y8, Y10, Y5
	VFMADD231PD Y8, Y11, Y6
	VFMADD231PD Y8, Y12, Y7
	ADDQ        $16, AX
	CMPQ        AX, BX
	JLT         hinner8

	VMOVUPD Y0, (DX)
	VMOVUPD Y1, 32(DX)
	VMOVUPD Y2, 64(DX)
	VMOVUPD Y3, 96(DX)
	VMOVUPD Y4, 128(DX)
	VMOVUPD Y5, 160(DX)
	VMOVUPD Y6, 192(DX)
	VMOVUPD Y7, 224(DX)
	ADDQ    $256, DX
	ADDQ    $64, R8
	SUBQ    $8, CX
	JMP     hloop8

hloop4:
	CMPQ   CX, $4
	JLT    htail
	MOVQ   0(R8), DI
	MOVQ   8(R8), R9
	MOVQ   16(R8), R10
	MOVQ   24(R8), R11
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	XORQ   AX, AX

hinner4:
	VCVTPS2PD   (SI)(AX*1), Y8
	VCVTPS2PD   (DI)(AX*1), Y9
	VCVTPS2PD   (R9)(AX*1), Y10
	VCVTPS2PD   (R10)(AX*1), Y11
	VCVTPS2PD   (R11)(AX*1), Y12
	VFMADD231PD Y8, Y9, Y0
	VFMADD231PD Y8, Y10, Y1
	VFMADD231PD Y8, Y11, Y2
	VFMADD231PD Y8, Y12, Y3
	ADDQ        $16, AX
	CMPQ        AX, BX
	JLT         hinner4

	VMOVUPD Y0, (DX)
	VMOVUPD Y1, 32(DX)
	VMOVUPD Y2, 64(DX)
	VMOVUPD Y3, 96(DX)
	ADDQ    $128, DX
	ADDQ    $32, R8
	SUBQ    $4, CX
	JMP     hloop4

htail:
	TESTQ  CX, CX
	JEQ    hdone
	MOVQ   0(R8), DI
	VXORPD Y0, Y0, Y0
	XORQ   AX, AX

hinner1:
	VCVTPS2PD   (SI)(AX*1), Y8
	VCVTPS2PD   (DI)(AX*1), Y9
	VFMADD231PD Y8, Y9, Y0
	ADDQ        $16, AX
	CMPQ        AX, BX
	JLT         hinner1

	VMOVUPD Y0, (DX)
	ADDQ    $32, DX
	ADDQ    $8, R8
	DECQ    CX
	JMP     htail

hdone:
	VZEROUPPER
	RET

// func projMaskAsm(d *int32, scale *float32, resid *float32, n int, t, alpha, beta, gamma, tau float64, mask *uint8)
//
// The bound check of projScan in SIMD (see projMask), eight rows a step,
// in float64 with the operations of projBound in its order:
// a = (s·t)·d, e = ((s·α) + (r·β)) + γ, and bit i of the mask is a+e ≥ τ.
// n is a positive multiple of 8.
TEXT ·projMaskAsm(SB), NOSPLIT, $0-80
	MOVQ         d+0(FP), SI
	MOVQ         scale+8(FP), DI
	MOVQ         resid+16(FP), R8
	MOVQ         n+24(FP), CX
	VBROADCASTSD t+32(FP), Z10
	VBROADCASTSD alpha+40(FP), Z11
	VBROADCASTSD beta+48(FP), Z12
	VBROADCASTSD gamma+56(FP), Z13
	VBROADCASTSD tau+64(FP), Z14
	MOVQ         mask+72(FP), DX

ploop:
	VCVTDQ2PD (SI), Z0
	VCVTPS2PD (DI), Z1
	VCVTPS2PD (R8), Z2
	VMULPD    Z10, Z1, Z3
	VMULPD    Z0, Z3, Z3
	VMULPD    Z11, Z1, Z4
	VMULPD    Z12, Z2, Z5
	VADDPD    Z5, Z4, Z4
	VADDPD    Z13, Z4, Z4
	VADDPD    Z4, Z3, Z3
	VCMPPD    $0x1d, Z14, Z3, K1
	KMOVB     K1, (DX)
	ADDQ      $32, SI
	ADDQ      $32, DI
	ADDQ      $32, R8
	INCQ      DX
	SUBQ      $8, CX
	JNZ       ploop
	VZEROUPPER
	RET

// func projDotsAsm(q *int8, codes *uint8, d int, n int, bias int32, out *int32)
//
// The projected pass's kernel (see projDots): codes offset by 128
// (unsigned), in groups of 16 rows, each group four dimensions at a time
// (64 bytes: the four codes of every row). VPDPBUSD adds the four
// products of each row's unsigned codes with the query's signed quad,
// broadcast, into the row's int32 lane: no widening, no horizontal sums.
// The offset comes off at the end (bias = 128·Σq). Four groups (64 rows)
// at a time. d is a positive multiple of 32, n a positive multiple of 64.
TEXT ·projDotsAsm(SB), NOSPLIT, $0-48
	MOVQ         q+0(FP), SI
	MOVQ         codes+8(FP), DI
	MOVQ         d+16(FP), BX
	MOVQ         n+24(FP), CX
	MOVL         bias+32(FP), AX
	VPBROADCASTD AX, Z9
	MOVQ         out+40(FP), DX
	MOVQ         BX, R8
	SHLQ         $4, R8 // bytes of a group of 16 rows

qloop64:
	LEAQ   (DI)(R8*1), R10
	LEAQ   (DI)(R8*2), R11
	LEAQ   (R10)(R8*2), R12
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	MOVQ   SI, R13
	XORQ   R14, R14

qinner:
	VPBROADCASTD (R13), Z4
	VMOVDQU32    (DI)(R14*1), Z5
	VMOVDQU32    (R10)(R14*1), Z6
	VMOVDQU32    (R11)(R14*1), Z7
	VMOVDQU32    (R12)(R14*1), Z8
	VPDPBUSD     Z4, Z5, Z0
	VPDPBUSD     Z4, Z6, Z1
	VPDPBUSD     Z4, Z7, Z2
	VPDPBUSD     Z4, Z8, Z3
	ADDQ         $4, R13
	ADDQ         $64, R14
	CMPQ         R14, R8
	JLT          qinner

	VPSUBD    Z9, Z0, Z0
	VPSUBD    Z9, Z1, Z1
	VPSUBD    Z9, Z2, Z2
	VPSUBD    Z9, Z3, Z3
	VMOVDQU32 Z0, (DX)
	VMOVDQU32 Z1, 64(DX)
	VMOVDQU32 Z2, 128(DX)
	VMOVDQU32 Z3, 192(DX)
	ADDQ      $256, DX
	LEAQ      (DI)(R8*4), DI
	SUBQ      $64, CX
	JNZ       qloop64
	VZEROUPPER
	RET

// func boundMaskAVX2Asm(d *int32, scales *float32, resid *float32, n int, t, rho, tau, one, margin float64, mask *uint8)
//
// boundMaskAsm in AVX2: the same operations in the same order, four rows
// to a ymm of float64, two ymm a step; VMOVMSKPD takes each half's four
// comparison bits. n is a positive multiple of 8.
TEXT ·boundMaskAVX2Asm(SB), NOSPLIT, $0-80
	MOVQ         d+0(FP), SI
	MOVQ         scales+8(FP), DI
	MOVQ         resid+16(FP), R8
	MOVQ         n+24(FP), CX
	VBROADCASTSD t+32(FP), Y10
	VBROADCASTSD rho+40(FP), Y11
	VBROADCASTSD tau+48(FP), Y12
	VBROADCASTSD one+56(FP), Y13
	VBROADCASTSD margin+64(FP), Y14
	MOVQ         mask+72(FP), DX

b2loop:
	VCVTDQ2PD (SI), Y0
	VCVTDQ2PD 16(SI), Y4
	VCVTPS2PD (DI), Y1
	VCVTPS2PD 16(DI), Y5
	VCVTPS2PD (R8), Y2
	VCVTPS2PD 16(R8), Y6
	VMULPD    Y10, Y1, Y1
	VMULPD    Y10, Y5, Y5
	VMULPD    Y0, Y1, Y1
	VMULPD    Y4, Y5, Y5
	VADDPD    Y13, Y2, Y3
	VADDPD    Y13, Y6, Y7
	VMULPD    Y11, Y3, Y3
	VMULPD    Y11, Y7, Y7
	VADDPD    Y3, Y2, Y3
	VADDPD    Y7, Y6, Y7
	VADDPD    Y14, Y3, Y3
	VADDPD    Y14, Y7, Y7
	VADDPD    Y3, Y1, Y1
	VADDPD    Y7, Y5, Y5
	VCMPPD    $0x1d, Y12, Y1, Y1
	VCMPPD    $0x1d, Y12, Y5, Y5
	VMOVMSKPD Y1, AX
	VMOVMSKPD Y5, BX
	SHLQ      $4, BX
	ORQ       BX, AX
	MOVB      AX, (DX)
	ADDQ      $32, SI
	ADDQ      $32, DI
	ADDQ      $32, R8
	INCQ      DX
	SUBQ      $8, CX
	JNZ       b2loop
	VZEROUPPER
	RET

// func projMaskAVX2Asm(d *int32, scale *float32, resid *float32, n int, t, alpha, beta, gamma, tau float64, mask *uint8)
//
// projMaskAsm in AVX2, as boundMaskAVX2Asm is boundMaskAsm: two ymm of
// four rows a step. n is a positive multiple of 8.
TEXT ·projMaskAVX2Asm(SB), NOSPLIT, $0-80
	MOVQ         d+0(FP), SI
	MOVQ         scale+8(FP), DI
	MOVQ         resid+16(FP), R8
	MOVQ         n+24(FP), CX
	VBROADCASTSD t+32(FP), Y10
	VBROADCASTSD alpha+40(FP), Y11
	VBROADCASTSD beta+48(FP), Y12
	VBROADCASTSD gamma+56(FP), Y13
	VBROADCASTSD tau+64(FP), Y14
	MOVQ         mask+72(FP), DX

p2loop:
	VCVTDQ2PD (SI), Y0
	VCVTDQ2PD 16(SI), Y6
	VCVTPS2PD (DI), Y1
	VCVTPS2PD 16(DI), Y7
	VCVTPS2PD (R8), Y2
	VCVTPS2PD 16(R8), Y8
	VMULPD    Y10, Y1, Y3
	VMULPD    Y10, Y7, Y9
	VMULPD    Y0, Y3, Y3
	VMULPD    Y6, Y9, Y9
	VMULPD    Y11, Y1, Y4
	VMULPD    Y11, Y7, Y15
	VMULPD    Y12, Y2, Y5
	VMULPD    Y12, Y8, Y8
	VADDPD    Y5, Y4, Y4
	VADDPD    Y8, Y15, Y15
	VADDPD    Y13, Y4, Y4
	VADDPD    Y13, Y15, Y15
	VADDPD    Y4, Y3, Y3
	VADDPD    Y15, Y9, Y9
	VCMPPD    $0x1d, Y14, Y3, Y3
	VCMPPD    $0x1d, Y14, Y9, Y9
	VMOVMSKPD Y3, AX
	VMOVMSKPD Y9, BX
	SHLQ      $4, BX
	ORQ       BX, AX
	MOVB      AX, (DX)
	ADDQ      $32, SI
	ADDQ      $32, DI
	ADDQ      $32, R8
	INCQ      DX
	SUBQ      $8, CX
	JNZ       p2loop
	VZEROUPPER
	RET

// func dotsGatherAVX2Asm(q *int16, rows **int8, stride int, n int, out *int32)
//
// dotsAVX2Asm over scattered rows, as dotsGatherVNNIAsm is dotsVNNIAsm:
// four rows at a time, 32 codes of each a step (two ymm of 16), the four
// rows GATHERAHEAD ahead prefetched as it goes. n is a multiple of 4,
// stride of 32, and rows holds n+GATHERAHEAD valid pointers.
TEXT ·dotsGatherAVX2Asm(SB), NOSPLIT, $0-40
	MOVQ q+0(FP), SI
	MOVQ rows+8(FP), R8
	MOVQ stride+16(FP), BX
	MOVQ n+24(FP), CX
	MOVQ out+32(FP), DX

g2loop4:
	TESTQ CX, CX
	JEQ   g2done
	MOVQ  0(R8), DI
	MOVQ  8(R8), R9
	MOVQ  16(R8), R10
	MOVQ  24(R8), R11
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	XORQ  AX, AX

g2inner4:
	MOVQ       (GATHERAHEAD*8)(R8), R12
	PREFETCHT0 (R12)(AX*1)
	MOVQ       (GATHERAHEAD*8+8)(R8), R12
	PREFETCHT0 (R12)(AX*1)
	MOVQ       (GATHERAHEAD*8+16)(R8), R12
	PREFETCHT0 (R12)(AX*1)
	MOVQ       (GATHERAHEAD*8+24)(R8), R12
	PREFETCHT0 (R12)(AX*1)
	VMOVDQU    (SI)(AX*2), Y4
	VMOVDQU    32(SI)(AX*2), Y9
	VPMOVSXBW  (DI)(AX*1), Y5
	VPMOVSXBW  (R9)(AX*1), Y6
	VPMOVSXBW  (R10)(AX*1), Y7
	VPMOVSXBW  (R11)(AX*1), Y8
	VPMOVSXBW  16(DI)(AX*1), Y10
	VPMOVSXBW  16(R9)(AX*1), Y11
	VPMOVSXBW  16(R10)(AX*1), Y12
	VPMOVSXBW  16(R11)(AX*1), Y13
	VPMADDWD   Y4, Y5, Y5
	VPMADDWD   Y4, Y6, Y6
	VPMADDWD   Y4, Y7, Y7
	VPMADDWD   Y4, Y8, Y8
	VPMADDWD   Y9, Y10, Y10
	VPMADDWD   Y9, Y11, Y11
	VPMADDWD   Y9, Y12, Y12
	VPMADDWD   Y9, Y13, Y13
	VPADDD     Y5, Y0, Y0
	VPADDD     Y6, Y1, Y1
	VPADDD     Y7, Y2, Y2
	VPADDD     Y8, Y3, Y3
	VPADDD     Y10, Y0, Y0
	VPADDD     Y11, Y1, Y1
	VPADDD     Y12, Y2, Y2
	VPADDD     Y13, Y3, Y3
	ADDQ       $32, AX
	CMPQ       AX, BX
	JLT        g2inner4

	VPHADDD      Y1, Y0, Y0
	VPHADDD      Y3, Y2, Y2
	VPHADDD      Y2, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VMOVDQU      X0, (DX)

	ADDQ $16, DX
	ADDQ $32, R8
	SUBQ $4, CX
	JMP  g2loop4

g2done:
	VZEROUPPER
	RET

// func projDotsAVX2Asm(q *int8, codes *uint8, d int, n int, out *int32)
//
// projDotsAsm in AVX2, without VPDPBUSD: a group of 16 rows four
// dimensions at a time, as two ymm of eight rows. The codes lose their
// offset (XOR 0x80: the signed code), take the sign of the query's code
// (VPSIGNB), and VPMADDUBSW multiplies them with the query's absolute
// values: every |product| ≤ 127·127, so the pairs it adds into int16 never
// saturate. VPMADDWD with ones adds each row's two pairs into its int32
// lane. Four groups (64 rows) at a time. d is a positive multiple of 32,
// n a positive multiple of 64.
TEXT ·projDotsAVX2Asm(SB), NOSPLIT, $0-40
	MOVQ         q+0(FP), SI
	MOVQ         codes+8(FP), DI
	MOVQ         d+16(FP), BX
	MOVQ         n+24(FP), CX
	MOVQ         out+32(FP), DX
	MOVQ         BX, R8
	SHLQ         $4, R8 // bytes of a group of 16 rows
	MOVL         $0x80808080, AX
	MOVQ         AX, X14
	VPBROADCASTD X14, Y14 // the offset, in every byte
	MOVL         $0x00010001, AX
	MOVQ         AX, X15
	VPBROADCASTD X15, Y15 // int16 ones

a64loop:
	LEAQ  (DI)(R8*1), R10
	LEAQ  (DI)(R8*2), R11
	LEAQ  (R10)(R8*2), R12
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7
	MOVQ  SI, R13
	XORQ  R9, R9

ainner:
	VPBROADCASTD (R13), Y8
	VPABSB       Y8, Y9
	VPXOR        (DI)(R9*1), Y14, Y10
	VPXOR        32(DI)(R9*1), Y14, Y11
	VPXOR        (R10)(R9*1), Y14, Y12
	VPXOR        32(R10)(R9*1), Y14, Y13
	VPSIGNB      Y8, Y10, Y10
	VPSIGNB      Y8, Y11, Y11
	VPSIGNB      Y8, Y12, Y12
	VPSIGNB      Y8, Y13, Y13
	VPMADDUBSW   Y10, Y9, Y10
	VPMADDUBSW   Y11, Y9, Y11
	VPMADDUBSW   Y12, Y9, Y12
	VPMADDUBSW   Y13, Y9, Y13
	VPMADDWD     Y15, Y10, Y10
	VPMADDWD     Y15, Y11, Y11
	VPMADDWD     Y15, Y12, Y12
	VPMADDWD     Y15, Y13, Y13
	VPADDD       Y10, Y0, Y0
	VPADDD       Y11, Y1, Y1
	VPADDD       Y12, Y2, Y2
	VPADDD       Y13, Y3, Y3
	VPXOR        (R11)(R9*1), Y14, Y10
	VPXOR        32(R11)(R9*1), Y14, Y11
	VPXOR        (R12)(R9*1), Y14, Y12
	VPXOR        32(R12)(R9*1), Y14, Y13
	VPSIGNB      Y8, Y10, Y10
	VPSIGNB      Y8, Y11, Y11
	VPSIGNB      Y8, Y12, Y12
	VPSIGNB      Y8, Y13, Y13
	VPMADDUBSW   Y10, Y9, Y10
	VPMADDUBSW   Y11, Y9, Y11
	VPMADDUBSW   Y12, Y9, Y12
	VPMADDUBSW   Y13, Y9, Y13
	VPMADDWD     Y15, Y10, Y10
	VPMADDWD     Y15, Y11, Y11
	VPMADDWD     Y15, Y12, Y12
	VPMADDWD     Y15, Y13, Y13
	VPADDD       Y10, Y4, Y4
	VPADDD       Y11, Y5, Y5
	VPADDD       Y12, Y6, Y6
	VPADDD       Y13, Y7, Y7
	ADDQ         $4, R13
	ADDQ         $64, R9
	CMPQ         R9, R8
	JLT          ainner

	VMOVDQU Y0, (DX)
	VMOVDQU Y1, 32(DX)
	VMOVDQU Y2, 64(DX)
	VMOVDQU Y3, 96(DX)
	VMOVDQU Y4, 128(DX)
	VMOVDQU Y5, 160(DX)
	VMOVDQU Y6, 192(DX)
	VMOVDQU Y7, 224(DX)
	ADDQ    $256, DX
	LEAQ    (DI)(R8*4), DI
	SUBQ    $64, CX
	JNZ     a64loop
	VZEROUPPER
	RET
