package abicheck

import (
	"context"
	"errors"
	"fmt"
)

// The file a library is read from may be hostile (issue 21): a crafted
// build handed to CI, or a file another user swapped in. Everything this
// package allocates, and every walk it makes, is bounded by the limits
// below before it happens; input beyond one is refused with a
// *LimitError that names the section, the offset and the limit, never a
// hang, a stack overflow or Go's unrecoverable out-of-memory.
//
// The sizes are set from what a real libnccom holds. libnccom 2.31.24 is
// NCCL's host code (about 100,000 lines of C and C++) with Neuron's
// transport: every translation unit describes the headers it includes
// again, so its .debug_info is estimated in the tens of MiB (the 11,000-
// struct stand-in of `make test-abi-tool` has 10 MiB; this is an estimate,
// not a measurement of the real file). A cap ten times that keeps a real
// build well inside it and a compressed-section bomb to a quarter of a
// GiB. A file beyond a cap gets a message naming it; raise the constant
// if a real build ever needs more.
const (
	// MaxSectionSize is the most bytes one DWARF section may hold,
	// uncompressed: a compressed section whose header declares more is
	// refused before it is decompressed, and a stored one is refused too.
	MaxSectionSize = 256 << 20
	// MaxDecompressed is the most bytes all decompressed (or read, when
	// the file cannot be mapped) sections of one library may hold
	// together. They live in an anonymous mapping, not the Go heap, so a
	// failed allocation is an error, not a fatal one.
	MaxDecompressed = 256 << 20
	// MaxUnits is the most compilation and type units .debug_info may
	// have (debug/dwarf keeps one record each, ~100 bytes). A build has
	// one compilation unit per source file: hundreds.
	MaxUnits = 1 << 17
	// MaxAbbrevs and MaxAbbrevAttrs bound the abbreviation tables
	// debug/dwarf parses (one per distinct table offset, kept): all
	// entries of all tables, and all attribute specifications. A
	// compilation unit has ~100 abbreviations of ~5 attributes.
	MaxAbbrevs     = 1 << 19
	MaxAbbrevAttrs = 1 << 22
	// MaxAttrsPerAbbrev bounds one abbreviation's attributes, so that
	// decoding one entry costs a bounded time (real ones have < 30).
	MaxAttrsPerAbbrev = 256
	// MaxTypeDepth bounds how deep the types of one struct nest (a
	// typedef of a const of an array of a struct member...), so every walk
	// over them recurses at most this far. Real nesting is under 40.
	MaxTypeDepth = 256
	// MaxTypeEntries bounds the entries read to resolve the requested
	// structs' types (their members, and their members' types by value;
	// a pointer's target is read by name only). The six ring-stage
	// structs of the stand-ins take a few hundred.
	MaxTypeEntries = 1 << 18
	// MaxScopeDepth bounds nested namespaces (C++ nests a few).
	MaxScopeDepth = 64
	// MaxSymbolTable bounds a symbol, string, relocation or dynamic
	// table that `nccom-abi preload` reads (debug/elf keeps about four
	// bytes per byte of a symbol table); libnccom's are a few MiB.
	MaxSymbolTable = 64 << 20
	// maxElfStrtab bounds .shstrtab, which debug/elf reads whole when it
	// opens a file (real ones are a few hundred bytes); maxNote, a note
	// section read for the build ID; maxDynamic, .dynamic read for the
	// SONAME.
	maxElfStrtab = 1 << 20
	maxNote      = 1 << 20
	maxDynamic   = 1 << 20
)

// maxFieldWork bounds the attributes decoded while scanning a .debug_info
// of n bytes for the structs: real DWARF has under one attribute a byte,
// and a crafted entry of one byte with 256 attributes of no bytes each
// (DW_FORM_flag_present) would otherwise cost 256 per byte.
func maxFieldWork(n int) int { return 2*n + 1<<20 }

// LimitError is input this package stopped reading: beyond one of the
// limits above (a size, a count, a nesting depth, the read's deadline), or
// not what DWARF can be (a type that contains itself). It is one line:
// the file and what was wrong, where.
type LimitError struct {
	Path string
	What string
}

func (e *LimitError) Error() string {
	if e.Path == "" {
		return e.What
	}
	return e.Path + ": " + e.What
}

// errLimit is a *LimitError without the path, until a caller that knows
// the path adds it (withPath).
func errLimit(format string, args ...any) error {
	return &LimitError{What: fmt.Sprintf(format, args...)}
}

// withPath sets the path of a *LimitError in err, if any.
func withPath(err error, path string) error {
	var le *LimitError
	if errors.As(err, &le) && le.Path == "" {
		le.Path = path
	}
	return err
}

// IsLimit reports whether err is a *LimitError: a file this package
// refused to read further, as opposed to one it read and found unusable.
func IsLimit(err error) bool {
	var le *LimitError
	return errors.As(err, &le)
}

// checkDone is a *LimitError when ctx's deadline passed or it was
// cancelled.
func checkDone(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return errLimit("the read did not finish before its deadline")
		}
		return errLimit("the read was cancelled")
	}
	return nil
}
