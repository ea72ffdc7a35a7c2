// Package abicheck reads a libnccom build's ring-stage structs from its own
// DWARF and compares them with layout/ (D2) and the ASSUMED ncclComm
// offsets in use (D3, or a layout profile). It is shared by the nccom-abi
// tool, which checks a file an operator names, and by libnccomring's
// self-check, which checks the libnccom.so.2 mapped in its host process
// (NCCOM_RING_ABI_CHECK). Pure Go: debug/elf and debug/dwarf, no cgo.
package abicheck

import (
	"bytes"
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// UnusableError is input that cannot be judged (not ELF, no DWARF, a
// struct missing entirely): what is wrong and what to do about it.
type UnusableError struct {
	What string
	Hint string
}

func (e *UnusableError) Error() string {
	if e.Hint == "" {
		return e.What
	}
	return e.What + "\n  " + e.Hint
}

// Library is a libnccom build opened as ELF.
type Library struct {
	Path string
	File *elf.File

	file   *os.File
	mapped []byte // the whole file mapped read-only, or nil (mmap_*.go)
}

// Open opens path as an ELF file. Anything else is unusable input, with a
// word on what the file seems to be instead.
func Open(path string) (*Library, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, openError(path, err)
	}
	l := &Library{Path: path, file: file, mapped: mapFile(file)}
	var r io.ReaderAt = file
	if l.mapped != nil {
		r = bytes.NewReader(l.mapped)
	}
	if l.File, err = elf.NewFile(r); err != nil {
		l.Close()
		return nil, openError(path, err)
	}
	return l, nil
}

func openError(path string, err error) error {
	var fe *elf.FormatError
	if errors.As(err, &fe) {
		return &UnusableError{
			What: fmt.Sprintf("%s is not an ELF file (%v)", path, err),
			Hint: "give the path of the libnccom shared object itself (e.g. /opt/aws-neuronx/lib/libnccom.so.2), not a linker script (a -dev package's libnccom.so may be one), an archive or a text file",
		}
	}
	return &UnusableError{
		What: fmt.Sprintf("cannot open %s: %v", path, err),
		Hint: "check the path",
	}
}

// Close releases the file and its mapping. What was read from the DWARF
// stays valid: debug/dwarf copies every string it returns, and the types
// hold no bytes of the file.
func (l *Library) Close() error {
	unmapFile(l.mapped)
	l.mapped = nil
	return l.file.Close()
}

// DWARF returns the library's DWARF or says why there is none and where to
// look.
func (l *Library) DWARF() (*dwarf.Data, error) {
	if !l.HasDebugInfo() {
		return nil, &UnusableError{
			What: fmt.Sprintf("%s has no DWARF (.debug_info): it is stripped or was built without -g", l.Path),
			Hint: l.noDWARFHint(),
		}
	}
	d, err := l.typeDWARF()
	if err != nil {
		return nil, &UnusableError{
			What: fmt.Sprintf("%s: cannot read its DWARF: %v", l.Path, err),
			Hint: "rebuild libnccom with -g (DWARF 4 or 5); split DWARF (-gsplit-dwarf, .dwo files) is not read",
		}
	}
	return d, nil
}

// HasDebugInfo says whether the file carries .debug_info itself (a
// stripped library keeps at most a NOBITS placeholder).
func (l *Library) HasDebugInfo() bool {
	for _, name := range []string{".debug_info", ".zdebug_info"} {
		if s := l.File.Section(name); s != nil && s.Type != elf.SHT_NOBITS {
			return true
		}
	}
	return false
}

// typeSections are the DWARF sections types are read from: the entries,
// their abbreviations and strings, and what DWARF 5 forms of attributes
// refer to when an entry is decoded. Line tables, location and range lists
// and call frames are left out: in an optimized build they are as large
// as .debug_info, nothing here reads them, and elf.File.DWARF would load
// them all into memory (the self-check runs inside a training job).
var typeSections = map[string]bool{
	"abbrev": true, "info": true, "str": true,
	"str_offsets": true, "line_str": true, "addr": true, "types": true,
}

// typeDWARF builds the DWARF data from typeSections only. Relocatable
// objects (ET_REL) need their relocations applied to the sections, which
// elf.File.DWARF does: they take that path. A shared library needs none.
func (l *Library) typeDWARF() (*dwarf.Data, error) {
	if l.File.Type == elf.ET_REL {
		return l.File.DWARF()
	}
	sections := map[string][]byte{}
	var types [][]byte
	for _, s := range l.File.Sections {
		suffix := dwarfSuffix(s.Name)
		if !typeSections[suffix] || s.Type == elf.SHT_NOBITS {
			continue
		}
		b, err := l.sectionBytes(s)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", s.Name, err)
		}
		if suffix == "types" {
			types = append(types, b)
		} else {
			sections[suffix] = b
		}
	}
	d, err := dwarf.New(sections["abbrev"], nil, nil, sections["info"], nil, nil, nil, sections["str"])
	if err != nil {
		return nil, err
	}
	for _, name := range []string{"str_offsets", "line_str", "addr"} {
		if b, ok := sections[name]; ok {
			if err := d.AddSection(".debug_"+name, b); err != nil {
				return nil, err
			}
		}
	}
	for i, b := range types {
		if err := d.AddTypes(fmt.Sprintf("types-%d", i), b); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// sectionBytes is s's contents: in place in the mapping when the section
// is stored uncompressed, else read (and decompressed) by debug/elf.
func (l *Library) sectionBytes(s *elf.Section) ([]byte, error) {
	end := s.Offset + s.FileSize
	if l.mapped == nil || s.Flags&elf.SHF_COMPRESSED != 0 || strings.HasPrefix(s.Name, ".zdebug") ||
		end < s.Offset || end > uint64(len(l.mapped)) {
		return s.Data()
	}
	return l.mapped[s.Offset:end:end], nil
}

// dwarfSuffix is "info" for .debug_info and for zlib-compressed
// .zdebug_info (debug/elf decompresses either), "" for other sections.
func dwarfSuffix(name string) string {
	if s, ok := strings.CutPrefix(name, ".debug_"); ok {
		return s
	}
	if s, ok := strings.CutPrefix(name, ".zdebug_"); ok {
		return s
	}
	return ""
}

// noDWARFHint points at the separate debug file a distribution may ship,
// by build ID or .gnu_debuglink, before suggesting a rebuild.
func (l *Library) noDWARFHint() string {
	var where []string
	if id := l.BuildID(); len(id) > 2 {
		where = append(where, filepath.Join("/usr/lib/debug/.build-id", id[:2], id[2:]+".debug"))
	}
	if s := l.File.Section(".gnu_debuglink"); s != nil {
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

// BuildID is the GNU build ID as lowercase hex, "" when the file has none.
// The note is read by hand: debug/elf has no API for notes, and a note is
// only three 4-byte words (name size, descriptor size, type) and two
// padded strings.
func (l *Library) BuildID() string {
	for _, s := range l.File.Sections {
		if s.Type != elf.SHT_NOTE {
			continue
		}
		data, err := s.Data()
		if err != nil {
			continue
		}
		if id, ok := findBuildIDNote(data, l.File.ByteOrder); ok {
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

// ReadStructs opens the library at path and finds the named structs in its
// DWARF: the one way a library is read. A missing file, no DWARF or a
// missing struct is an *UnusableError.
func ReadStructs(path string, names []string) (defs map[string]*StructDef, buildID string, err error) {
	lib, err := Open(path)
	if err != nil {
		return nil, "", err
	}
	defer lib.Close()
	d, err := lib.DWARF()
	if err != nil {
		return nil, "", err
	}
	defs, err = FindRequired(d, names, path)
	if err != nil {
		return nil, "", err
	}
	return defs, lib.BuildID(), nil
}

// FindRequired finds names in d; any missing one makes the input unusable.
func FindRequired(d *dwarf.Data, names []string, path string) (map[string]*StructDef, error) {
	defs, declared, err := FindStructs(d, names)
	if err != nil {
		return nil, &UnusableError{What: fmt.Sprintf("%s: %v", path, err), Hint: "the DWARF is damaged; rebuild libnccom with -g"}
	}
	var missing []string
	for _, n := range names {
		if defs[n] == nil {
			if declared[n] {
				missing = append(missing, n+" (declared only)")
			} else {
				missing = append(missing, n)
			}
		}
	}
	if len(missing) > 0 {
		return nil, &UnusableError{
			What: fmt.Sprintf("%s: no definition of %s in its DWARF", path, strings.Join(missing, ", ")),
			Hint: "is this libnccom? Its translation units that define these structs must be built with -g (not only some of them)",
		}
	}
	return defs, nil
}
