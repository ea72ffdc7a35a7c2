package main

import (
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// library is LIB opened as ELF.
type library struct {
	path string
	file *elf.File
}

// openLibrary opens path as an ELF file. Anything else is unusable input,
// with a word on what the file seems to be instead.
func openLibrary(path string) (*library, error) {
	f, err := elf.Open(path)
	if err == nil {
		return &library{path: path, file: f}, nil
	}
	var fe *elf.FormatError
	if errors.As(err, &fe) {
		return nil, &unusableError{
			what: fmt.Sprintf("%s is not an ELF file (%v)", path, err),
			hint: "give the path of the libnccom shared object itself (e.g. /opt/aws-neuronx/lib/libnccom.so.2), not a linker script (a -dev package's libnccom.so may be one), an archive or a text file",
		}
	}
	return nil, &unusableError{
		what: fmt.Sprintf("cannot open %s: %v", path, err),
		hint: "check the path",
	}
}

func (l *library) Close() error { return l.file.Close() }

// requireSharedObject refuses anything but ET_DYN: only a shared object
// has a dynamic symbol table that LD_PRELOAD can act on.
func (l *library) requireSharedObject() error {
	if l.file.Type == elf.ET_DYN {
		return nil
	}
	return &unusableError{
		what: fmt.Sprintf("%s is not a shared object (ELF type %v)", l.path, l.file.Type),
		hint: "this is not a shared object: give the libnccom.so that the job loads",
	}
}

// dwarf returns LIB's DWARF or says why there is none and where to look.
func (l *library) dwarf() (*dwarf.Data, error) {
	if !l.hasDebugInfo() {
		return nil, &unusableError{
			what: fmt.Sprintf("%s has no DWARF (.debug_info): it is stripped or was built without -g", l.path),
			hint: l.noDWARFHint(),
		}
	}
	d, err := l.file.DWARF()
	if err != nil {
		return nil, &unusableError{
			what: fmt.Sprintf("%s: cannot read its DWARF: %v", l.path, err),
			hint: "rebuild libnccom with -g (DWARF 4 or 5); split DWARF (-gsplit-dwarf, .dwo files) is not read",
		}
	}
	return d, nil
}

func (l *library) hasDebugInfo() bool {
	for _, name := range []string{".debug_info", ".zdebug_info"} {
		if s := l.file.Section(name); s != nil && s.Type != elf.SHT_NOBITS {
			return true
		}
	}
	return false
}

// noDWARFHint points at the separate debug file a distribution may ship,
// by build ID or .gnu_debuglink, before suggesting a rebuild.
func (l *library) noDWARFHint() string {
	var where []string
	if id := l.buildID(); len(id) > 2 {
		where = append(where, filepath.Join("/usr/lib/debug/.build-id", id[:2], id[2:]+".debug"))
	}
	if s := l.file.Section(".gnu_debuglink"); s != nil {
		if data, err := s.Data(); err == nil {
			if name, _, ok := strings.Cut(string(data), "\x00"); ok && name != "" {
				where = append(where, name+" (.gnu_debuglink)")
			}
		}
	}
	hint := "build libnccom with -g (and do not strip it)"
	if len(where) > 0 {
		hint += ", or run nccom-abi on its separate debug file if one is installed: " + strings.Join(where, ", ")
		for _, w := range where {
			if _, err := os.Stat(w); err == nil {
				hint += "\n  " + w + " exists on this machine"
			}
		}
	}
	return hint
}

// buildID is the GNU build ID as lowercase hex, "" when LIB has none. The
// note is read by hand: debug/elf has no API for notes, and a note is only
// three 4-byte words (name size, descriptor size, type) and two padded
// strings.
func (l *library) buildID() string {
	for _, s := range l.file.Sections {
		if s.Type != elf.SHT_NOTE {
			continue
		}
		data, err := s.Data()
		if err != nil {
			continue
		}
		if id, ok := findBuildIDNote(data, l.file.ByteOrder); ok {
			return id
		}
	}
	return ""
}

const ntGNUBuildID = 3 // NT_GNU_BUILD_ID

func findBuildIDNote(data []byte, order binary.ByteOrder) (string, bool) {
	align4 := func(n uint32) uint32 { return (n + 3) &^ 3 }
	for len(data) >= 12 {
		nameSize := order.Uint32(data[0:])
		descSize := order.Uint32(data[4:])
		typ := order.Uint32(data[8:])
		rest := data[12:]
		if uint64(align4(nameSize))+uint64(align4(descSize)) > uint64(len(rest)) {
			return "", false
		}
		name := rest[:nameSize]
		desc := rest[align4(nameSize) : align4(nameSize)+descSize]
		if typ == ntGNUBuildID && string(name) == "GNU\x00" {
			return hex.EncodeToString(desc), true
		}
		data = rest[align4(nameSize)+align4(descSize):]
	}
	return "", false
}

// readStructs opens the library at path and finds the named structs in its
// DWARF: the one way check, dump and profile read a library. A missing
// file, no DWARF or a missing struct is an *unusableError.
func readStructs(path string, names []string) (defs map[string]*structDef, buildID string, err error) {
	lib, err := openLibrary(path)
	if err != nil {
		return nil, "", err
	}
	defer lib.Close()
	d, err := lib.dwarf()
	if err != nil {
		return nil, "", err
	}
	defs, err = findRequired(d, names, path)
	if err != nil {
		return nil, "", err
	}
	return defs, lib.buildID(), nil
}
