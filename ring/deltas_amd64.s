#include "textflag.h"

// deltaIota is {0, 1, 2, 3}: the positions of a vector's four ints.
DATA deltaIota<>+0(SB)/4, $0
DATA deltaIota<>+4(SB)/4, $1
DATA deltaIota<>+8(SB)/4, $2
DATA deltaIota<>+12(SB)/4, $3
GLOBL deltaIota<>(SB), RODATA|NOPTR, $16

// POSITIONS sets X4-X7 to the positions q0+0..q0+15 (X10 holds q0+0..3,
// X9 {4, 4, 4, 4}).
#define POSITIONS \
	MOVO X10, X4; \
	MOVO X4, X5; \
	PADDL X9, X5; \
	MOVO X5, X6; \
	PADDL X9, X6; \
	MOVO X6, X7; \
	PADDL X9, X7

// SETUP loads q0 from R9 into X10 = q0+{0,1,2,3}, X9 = {4,4,4,4} and
// X8 = {16,16,16,16}.
#define SETUP \
	MOVL $4, AX; \
	MOVQ AX, X9; \
	PSHUFL $0, X9, X9; \
	MOVO X9, X8; \
	PSLLL $2, X8; \
	MOVQ R9, X10; \
	PSHUFL $0, X10, X10; \
	MOVOU deltaIota<>(SB), X11; \
	PADDL X11, X10

// func encodeDeltas(dst unsafe.Pointer, dstRow uintptr, src *int32, rows, count int, q0 int32)
//
// Sixteen ints at a time: minus their positions (X4-X7), packed to words
// and then to bytes with signed saturation (PACKSSDW, PACKSSWB); the rest
// of each row one at a time, clamped the same way.
TEXT ·encodeDeltas(SB), NOSPLIT, $0-44
	MOVQ dst+0(FP), DI
	MOVQ dstRow+8(FP), R8
	MOVQ src+16(FP), SI
	MOVQ rows+24(FP), DX
	MOVQ count+32(FP), CX
	MOVL q0+40(FP), R9
	SETUP
	MOVQ CX, R11
	ANDQ $-16, R11
	TESTQ DX, DX
	JLE edone

erow:
	POSITIONS
	MOVQ DI, R12
	XORQ R10, R10

evec:
	CMPQ R10, R11
	JGE etail
	MOVOU 0(SI), X0
	MOVOU 16(SI), X1
	MOVOU 32(SI), X2
	MOVOU 48(SI), X3
	PSUBL X4, X0
	PSUBL X5, X1
	PSUBL X6, X2
	PSUBL X7, X3
	PACKSSLW X1, X0
	PACKSSLW X3, X2
	PACKSSWB X2, X0
	MOVOU X0, (R12)
	PADDL X8, X4
	PADDL X8, X5
	PADDL X8, X6
	PADDL X8, X7
	ADDQ $64, SI
	ADDQ $16, R12
	ADDQ $16, R10
	JMP evec

etail:
	CMPQ R10, CX
	JGE enext
	MOVL (SI), AX
	SUBL R9, AX
	SUBL R10, AX
	CMPL AX, $127
	JLE elow
	MOVL $127, AX
elow:
	CMPL AX, $-128
	JGE estore
	MOVL $-128, AX
estore:
	MOVB AX, (R12)
	ADDQ $4, SI
	INCQ R12
	INCQ R10
	JMP etail

enext:
	ADDQ R8, DI
	DECQ DX
	JNZ erow

edone:
	RET

// func decodeDeltas(first, double *int32, src *int8, count int, q0 int32)
//
// Sixteen deltas at a time: each byte doubled into a word and shifted
// right arithmetically (a sign extension), each word likewise into an
// int, plus its position (X4-X7), stored to both; the rest one at a time.
TEXT ·decodeDeltas(SB), NOSPLIT, $0-36
	MOVQ first+0(FP), DI
	MOVQ double+8(FP), DX
	MOVQ src+16(FP), SI
	MOVQ count+24(FP), CX
	MOVL q0+32(FP), R9
	SETUP
	POSITIONS
	MOVQ CX, R11
	ANDQ $-16, R11
	XORQ R10, R10

dvec:
	CMPQ R10, R11
	JGE dtail
	MOVOU (SI), X0
	MOVO X0, X2
	PUNPCKLBW X0, X0
	PUNPCKHBW X2, X2
	PSRAW $8, X0
	PSRAW $8, X2
	MOVO X0, X1
	PUNPCKLWL X0, X0
	PUNPCKHWL X1, X1
	PSRAL $16, X0
	PSRAL $16, X1
	MOVO X2, X3
	PUNPCKLWL X2, X2
	PUNPCKHWL X3, X3
	PSRAL $16, X2
	PSRAL $16, X3
	PADDL X4, X0
	PADDL X5, X1
	PADDL X6, X2
	PADDL X7, X3
	MOVOU X0, 0(DI)
	MOVOU X1, 16(DI)
	MOVOU X2, 32(DI)
	MOVOU X3, 48(DI)
	MOVOU X0, 0(DX)
	MOVOU X1, 16(DX)
	MOVOU X2, 32(DX)
	MOVOU X3, 48(DX)
	PADDL X8, X4
	PADDL X8, X5
	PADDL X8, X6
	PADDL X8, X7
	ADDQ $16, SI
	ADDQ $64, DI
	ADDQ $64, DX
	ADDQ $16, R10
	JMP dvec

dtail:
	CMPQ R10, CX
	JGE ddone
	MOVBLSX (SI), AX
	ADDL R9, AX
	ADDL R10, AX
	MOVL AX, (DI)
	MOVL AX, (DX)
	INCQ SI
	ADDQ $4, DI
	ADDQ $4, DX
	INCQ R10
	JMP dtail

ddone:
	RET
