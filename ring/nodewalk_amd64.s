#include "textflag.h"

// CHAIN is one step of one channel's chain: next's fragment (at AX +
// next*stride; R14 holds the offset), its channel-0 head against head0,
// its ringPrev (at prevOff from CX) against the rank before it in its row
// (rowPrev), any mismatch ORed into R13; then next becomes its ringNext
// (at nextOff from CX).
#define CHAIN(next, prevOff, nextOff, rowPrev) \
	MOVQ next, R14; \
	IMULQ BX, R14; \
	MOVL (AX)(R14*1), R15; \
	XORL R8, R15; \
	ORL R15, R13; \
	MOVL prevOff(CX)(R14*1), R15; \
	XORL rowPrev, R15; \
	ORL R15, R13; \
	MOVL nextOff(CX)(R14*1), next

// func walkQuadSteps(base uintptr, stride int, coff uintptr, out unsafe.Pointer, row uintptr, left int, next *[4]int32, head0 int32, size uint32, recv, send *[4]int32) bool
//
// walkQuadStepsGeneric (nodewalk.go), with the four chains, the rows and
// the loop's constants in registers:
//   AX base   BX stride   CX base+coff (channel c's entry of the first
//   fragment's arrays)   DX out (channels c, c+1 at DX, DX+DI)
//   SI cd (channels c+2, c+3 at SI, SI+DI)   DI row   R8 head0
//   R9-R12 the four next ranks   R13 the step's mismatches   R14, R15 scratch
//   X0, X1 the head's ringRecv and ringSend on channels c..c+3
// and the end of the rows (out + 4*left) in a local. A rank's fragment is
// at AX + rank*stride: the next ranks are loaded with MOVL, which clears
// the upper half, and checked below size, so they are used as they are.
TEXT ·walkQuadSteps(SB), NOSPLIT, $8-81
	MOVQ base+0(FP), AX
	MOVQ stride+8(FP), BX
	MOVQ coff+16(FP), CX
	ADDQ AX, CX
	MOVQ out+24(FP), DX
	MOVQ row+32(FP), DI
	LEAQ (DX)(DI*2), SI
	MOVQ left+40(FP), R8
	TESTQ R8, R8
	JLE ok
	LEAQ (DX)(R8*4), R8
	MOVQ R8, end-8(SP)
	MOVQ recv+64(FP), R13
	MOVOU (R13), X0
	MOVQ send+72(FP), R13
	MOVOU (R13), X1
	MOVL head0+56(FP), R8
	MOVQ next+48(FP), R13
	MOVL 0(R13), R9
	MOVL 4(R13), R10
	MOVL 8(R13), R11
	MOVL 12(R13), R12

loop:
	// Each next must be a rank before it is a fragment's index.
	MOVL size+60(FP), R13
	CMPL R9, R13
	JCC fail
	CMPL R10, R13
	JCC fail
	CMPL R11, R13
	JCC fail
	CMPL R12, R13
	JCC fail
	ADDQ $4, DX
	ADDQ $4, SI
	MOVL R9, (DX)
	MOVL R10, (DX)(DI*1)
	MOVL R11, (SI)
	MOVL R12, (SI)(DI*1)
	XORL R13, R13

	// Channel c, and its ringRecv and ringSend on channels c..c+3 against
	// the head's (X0, X1): R14 is still its fragment's offset.
	CHAIN(R9, 256, 384, -4(DX))
	MOVOU (CX)(R14*1), X2
	PCMPEQL X0, X2
	MOVOU 128(CX)(R14*1), X3
	PCMPEQL X1, X3
	PAND X3, X2
	PMOVMSKB X2, R15
	XORL $0xffff, R15
	ORL R15, R13
	CHAIN(R10, 260, 388, -4(DX)(DI*1))
	CHAIN(R11, 264, 392, -4(SI))
	CHAIN(R12, 268, 396, -4(SI)(DI*1))

	TESTL R13, R13
	JNE fail
	CMPQ DX, end-8(SP)
	JNE loop

	MOVQ next+48(FP), R13
	MOVL R9, 0(R13)
	MOVL R10, 4(R13)
	MOVL R11, 8(R13)
	MOVL R12, 12(R13)
ok:
	MOVB $1, ret+80(FP)
	RET

fail:
	MOVB $0, ret+80(FP)
	RET
