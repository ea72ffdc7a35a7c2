#include "textflag.h"

// func copyStreaming(dst, src unsafe.Pointer, n int)
//
// Copies n int32s from src to dst (not overlapping): dst's first ints one
// at a time until it is 16-byte aligned, then 64 bytes at a time with
// non-temporal stores (MOVNTDQ), which write whole lines without reading
// them first and without displacing the cache, then the rest one at a
// time, and SFENCE, which orders those stores before any after it.
TEXT ·copyStreaming(SB), NOSPLIT|NOFRAME, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX

head:
	TESTQ CX, CX
	JEQ done
	TESTQ $15, DI
	JEQ body
	MOVL (SI), AX
	MOVL AX, (DI)
	ADDQ $4, SI
	ADDQ $4, DI
	DECQ CX
	JMP head

body:
	CMPQ CX, $16
	JLT tail
	MOVOU 0(SI), X0
	MOVOU 16(SI), X1
	MOVOU 32(SI), X2
	MOVOU 48(SI), X3
	MOVNTO X0, 0(DI)
	MOVNTO X1, 16(DI)
	MOVNTO X2, 32(DI)
	MOVNTO X3, 48(DI)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $16, CX
	JMP body

tail:
	TESTQ CX, CX
	JEQ fence
	MOVL (SI), AX
	MOVL AX, (DI)
	ADDQ $4, SI
	ADDQ $4, DI
	DECQ CX
	JMP tail

fence:
	SFENCE

done:
	RET
