package main

import (
	"context"
	"debug/elf"
	"fmt"

	"github.com/nccomring/libnccomring/abicheck"
)

// Reading a library's DWARF and comparing it with layout/ live in package
// abicheck, which libnccomring's self-check shares. The tool keeps its
// own short names for them.
type (
	structDef = abicheck.StructDef
	fieldLoc  = abicheck.FieldLoc
)

const (
	statusOK      = abicheck.StatusOK
	statusMissing = abicheck.StatusMissing
)

var (
	ringStageStructs   = abicheck.RingStageStructs
	minSizes           = abicheck.MinSizes
	lookupField        = abicheck.LookupField
	cTypeName          = abicheck.CTypeName
	cDecl              = abicheck.CDecl
	memberOffset       = abicheck.MemberOffset
	anonymousAggregate = abicheck.AnonymousAggregate
	compareField       = abicheck.CompareField
	describeMismatch   = abicheck.DescribeMismatch
	quoteName          = abicheck.QuoteName
)

// library is LIB opened as ELF.
type library struct{ *abicheck.Library }

func openLibrary(path string) (*library, error) {
	l, err := abicheck.Open(path)
	if err != nil {
		return nil, err
	}
	return &library{l}, nil
}

// dwarf returns LIB's DWARF or says why there is none and where to look.
func (l *library) dwarf() (*abicheck.DWARF, error) { return l.DWARF() }

// requireSharedObject refuses anything but ET_DYN: only a shared object
// has a dynamic symbol table that LD_PRELOAD can act on.
func (l *library) requireSharedObject() error {
	if l.File.Type == elf.ET_DYN {
		return nil
	}
	return &unusableError{
		What: fmt.Sprintf("%s is not a shared object (ELF type %v)", l.Path, l.File.Type),
		Hint: "this is not a shared object: give the libnccom.so that the job loads",
	}
}

// readStructs opens the library at path and finds the named structs in its
// DWARF: the one way check, dump and profile read a library.
func readStructs(path string, names []string) (map[string]*structDef, string, error) {
	return abicheck.ReadStructs(path, names)
}

// findRequired finds names in d; any missing one makes the input unusable.
func findRequired(d *abicheck.DWARF, names []string, path string) (map[string]*structDef, error) {
	ctx, cancel := context.WithTimeout(context.Background(), abicheck.ReadTimeout)
	defer cancel()
	return abicheck.FindRequired(ctx, d, names, path)
}
