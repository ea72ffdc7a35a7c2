#include "textflag.h"

// func prefetchFrag(p, last uintptr)
//
// Prefetches the lines of ringRecv, ringSend, ringPrev and ringNext (128
// bytes apart from p) that hold their entries 0 and last/4 (last is a byte
// offset), the second set only when it is other lines than the first:
// PREFETCHT0 retires at once, unlike a load that misses, but each one
// takes a miss buffer until its line is in.
TEXT ·prefetchFrag(SB), NOSPLIT|NOFRAME, $0-16
	MOVQ p+0(FP), AX
	MOVQ last+8(FP), BX
	PREFETCHT0 0(AX)
	PREFETCHT0 128(AX)
	PREFETCHT0 256(AX)
	PREFETCHT0 384(AX)
	MOVQ AX, CX
	ANDQ $63, CX
	ADDQ BX, CX
	CMPQ CX, $64
	JLT  done
	ADDQ AX, BX
	PREFETCHT0 0(BX)
	PREFETCHT0 128(BX)
	PREFETCHT0 256(BX)
	PREFETCHT0 384(BX)
done:
	RET
