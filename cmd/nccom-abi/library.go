package main

import (
	"debug/dwarf"
	"debug/elf"
	"errors"
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
)

// library is LIB opened as ELF, with abicheck's errors turned into the
// tool's unusableError.
type library struct{ *abicheck.Library }

func openLibrary(path string) (*library, error) {
	l, err := abicheck.Open(path)
	if err != nil {
		return nil, asUnusable(err)
	}
	return &library{l}, nil
}

// dwarf returns LIB's DWARF or says why there is none and where to look.
func (l *library) dwarf() (*dwarf.Data, error) {
	d, err := l.DWARF()
	return d, asUnusable(err)
}

// requireSharedObject refuses anything but ET_DYN: only a shared object
// has a dynamic symbol table that LD_PRELOAD can act on.
func (l *library) requireSharedObject() error {
	if l.File.Type == elf.ET_DYN {
		return nil
	}
	return &unusableError{
		what: fmt.Sprintf("%s is not a shared object (ELF type %v)", l.Path, l.File.Type),
		hint: "this is not a shared object: give the libnccom.so that the job loads",
	}
}

// readStructs opens the library at path and finds the named structs in its
// DWARF: the one way check, dump and profile read a library.
func readStructs(path string, names []string) (map[string]*structDef, string, error) {
	defs, buildID, err := abicheck.ReadStructs(path, names)
	return defs, buildID, asUnusable(err)
}

// findRequired finds names in d; any missing one makes the input unusable.
func findRequired(d *dwarf.Data, names []string, path string) (map[string]*structDef, error) {
	defs, err := abicheck.FindRequired(d, names, path)
	return defs, asUnusable(err)
}

// asUnusable turns abicheck's *UnusableError into the tool's, which sets
// the exit code (2); other errors, and nil, pass unchanged.
func asUnusable(err error) error {
	var ue *abicheck.UnusableError
	if errors.As(err, &ue) {
		return &unusableError{what: ue.What, hint: ue.Hint}
	}
	return err
}
