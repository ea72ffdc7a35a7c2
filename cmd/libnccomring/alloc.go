package main

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"unsafe"

	"github.com/nccomring/libnccomring/abi"
)

// cAllocator allocates userRanks with C malloc, so hosts free them with
// free() (D12). It goes through nccomring_malloc, plain C: cgo's C.malloc
// never returns NULL but aborts the process when memory runs out, which
// would make Postset's ncclSystemError path (P16) a crash instead.
type cAllocator struct{}

func (cAllocator) AllocInts(n int) uintptr {
	return uintptr(C.nccomring_malloc(C.size_t(n) * C.size_t(unsafe.Sizeof(C.int(0)))))
}

func (cAllocator) Free(p uintptr) { C.free(abi.Pointer(p)) }
