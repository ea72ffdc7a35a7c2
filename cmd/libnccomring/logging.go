package main

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"runtime"
	"unsafe"
)

// warn prints a WARN line. In libnccom's style (D26) the line names the
// file and line that called warn.
func warn(rank int32, text string) { warnAt(1, rank, text) }

// warnAt is warn naming the line skip frames above its own caller (0: the
// caller of warnAt).
func warnAt(skip int, rank int32, text string) {
	if C.nccomring_log_level < C.NCCOMRING_LOG_WARN {
		return
	}
	logLine(skip+2, C.NCCOMRING_LOG_WARN, 0, rank, text)
}

func infoEnabled(subsys C.int) bool {
	return C.nccomring_log_level >= C.NCCOMRING_LOG_INFO && C.nccomring_log_subsys&subsys != 0
}

func info(subsys C.int, rank int32, text string) {
	if infoEnabled(subsys) {
		logLine(2, C.NCCOMRING_LOG_INFO, subsys, rank, text)
	}
}

// logLine prints one line; skip is runtime.Caller's, from logLine, of the
// line the CCOM style names (1: logLine's caller).
func logLine(skip int, level, subsys C.int, rank int32, text string) {
	file, n, line := sourceLine(skip)
	s := C.CString(text)
	defer C.free(unsafe.Pointer(s))
	C.nccomring_log_at(file, n, line, level, subsys, C.int(rank), s)
}

// sourceLine is the file and line of the caller skip frames above
// sourceLine's caller (0: that caller), as nccomring_log_at takes them:
// the runtime's own bytes of the file name, no copy (they are in the
// binary, not on the Go heap, and not NUL-terminated), and their length.
// Only the CCOM style shows them (D26); in NCCL's the runtime is not asked.
func sourceLine(skip int) (file *C.char, n C.size_t, line C.int) {
	if C.nccomring_log_style != C.NCCOMRING_STYLE_CCOM {
		return nil, 0, 0
	}
	_, f, l, ok := runtime.Caller(skip + 1)
	if !ok || f == "" {
		f, l = "?", 0
	}
	return (*C.char)(unsafe.Pointer(unsafe.StringData(f))), C.size_t(len(f)), C.int(l)
}
