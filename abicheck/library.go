// Package abicheck reads a libnccom build's ring-stage structs from its own
// DWARF and compares them with layout/ (D2) and the ASSUMED ncclComm
// offsets in use (D3, or a layout profile). It is shared by the nccom-abi
// tool, which checks a file an operator names, and by libnccomring's
// self-check, which checks the libnccom.so.2 mapped in its host process
// (NCCOM_RING_ABI_CHECK). Pure Go: debug/elf and debug/dwarf, no cgo.
package abicheck

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
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
	size   int64    // the file's size when it was opened
	mapped []byte   // the whole file mapped read-only, or nil (mmap_*.go)
	bufs   [][]byte // anonymous mappings holding sections read or decompressed
	used   uint64   // bytes in bufs (MaxDecompressed)
}

// Open opens path as an ELF file. Anything else is unusable input, with a
// word on what the file seems to be instead. The file is opened once,
// without waiting (a FIFO put at the path would block an open for
// reading), and must be a regular file; what is read afterwards comes from
// that open file, whatever the path names by then. Its ELF header and
// section name table are checked against the limits (limits.go) before
// debug/elf reads them.
func Open(path string) (*Library, error) {
	file, size, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	l := &Library{Path: path, file: file, size: size, mapped: mapFile(file, size)}
	if err := checkELFHeaders(l.readerAt(), size); err != nil {
		l.Close()
		return nil, withPath(err, path)
	}
	if l.File, err = elf.NewFile(l.readerAt()); err != nil {
		l.Close()
		return nil, openError(path, err)
	}
	return l, nil
}

func (l *Library) readerAt() io.ReaderAt {
	if l.mapped != nil {
		return bytes.NewReader(l.mapped)
	}
	return l.file
}

func openError(path string, err error) error {
	var fe *elf.FormatError
	if errors.As(err, &fe) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
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

// Close releases the file, its mapping and the sections read into memory.
// What was read from the DWARF stays valid: debug/dwarf copies every
// string it returns, and the types hold no bytes of the file; the
// *DWARF itself must not be used after Close.
func (l *Library) Close() error {
	for _, b := range l.bufs {
		freeAnon(b)
	}
	l.bufs, l.used = nil, 0
	unmapFile(l.mapped)
	l.mapped = nil
	return l.file.Close()
}

// DWARF returns the library's DWARF or says why there is none and where to
// look. A file beyond the limits is a *LimitError.
func (l *Library) DWARF() (*DWARF, error) { return l.dwarfCtx(context.Background()) }

func (l *Library) dwarfCtx(ctx context.Context) (*DWARF, error) {
	if !l.HasDebugInfo() {
		return nil, &UnusableError{
			What: fmt.Sprintf("%s has no DWARF (.debug_info): it is stripped or was built without -g", l.Path),
			Hint: l.noDWARFHint(),
		}
	}
	if l.File.Type == elf.ET_REL {
		return nil, &UnusableError{
			What: fmt.Sprintf("%s is a relocatable object (ELF type %v), whose DWARF needs its relocations applied", l.Path, l.File.Type),
			Hint: "give the linked libnccom shared object (or its separate debug file)",
		}
	}
	d, err := l.typeDWARF(ctx)
	if err != nil {
		if IsLimit(err) {
			return nil, withPath(err, l.Path)
		}
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
// DWARF 4's .debug_types (-fdebug-types-section) is not read: debug/dwarf
// resolves its types only through Data.Type, whose recursion has no bound
// (a DW_FORM_ref_sig8 into it is an error; DWARF 5 type units, in
// .debug_info, are read).
var typeSections = map[string]bool{
	"abbrev": true, "info": true, "str": true,
	"str_offsets": true, "line_str": true, "addr": true,
}

// typeDWARF builds the DWARF data from typeSections only, each read
// within the limits, after prescan has checked what dwarf.New would parse
// of them.
func (l *Library) typeDWARF(ctx context.Context) (*DWARF, error) {
	sections := map[string][]byte{}
	for _, s := range l.File.Sections {
		suffix := dwarfSuffix(s.Name)
		if !typeSections[suffix] || s.Type == elf.SHT_NOBITS {
			continue
		}
		if _, dup := sections[suffix]; dup {
			continue // the first one, as elf.File.Section finds it
		}
		b, err := l.sectionBytes(ctx, s)
		if err != nil {
			if IsLimit(err) {
				return nil, err
			}
			return nil, fmt.Errorf("reading %s: %w", s.Name, err)
		}
		sections[suffix] = b
	}
	return newDWARF(ctx, sections)
}

// dwarfSuffix is "info" for .debug_info and for zlib-compressed
// .zdebug_info, "" for other sections.
func dwarfSuffix(name string) string {
	if s, ok := strings.CutPrefix(name, ".debug_"); ok {
		return s
	}
	if s, ok := strings.CutPrefix(name, ".zdebug_"); ok {
		return s
	}
	return ""
}

// CheckTables refuses, with a *LimitError, a symbol, string, relocation
// or dynamic table larger than MaxSymbolTable or compressed (no linker
// compresses one): debug/elf reads each whole when asked for symbols.
func (l *Library) CheckTables() error {
	for i, s := range l.File.Sections {
		switch s.Type {
		case elf.SHT_SYMTAB, elf.SHT_DYNSYM, elf.SHT_STRTAB, elf.SHT_REL, elf.SHT_RELA, elf.SHT_DYNAMIC:
		default:
			continue
		}
		switch {
		case s.Flags&elf.SHF_COMPRESSED != 0:
			return &LimitError{Path: l.Path, What: fmt.Sprintf("section %d (%s, %v) is compressed, which no linker writes; not decompressed", i, QuoteName(s.Name), s.Type)}
		case s.FileSize > MaxSymbolTable:
			return &LimitError{Path: l.Path, What: fmt.Sprintf("section %d (%s, %v) declares %d bytes, more than the %d bytes (MaxSymbolTable) read of a table", i, QuoteName(s.Name), s.Type, s.FileSize, MaxSymbolTable)}
		}
	}
	return nil
}

// noDWARFHint points at the separate debug file a distribution may ship,
// by build ID or .gnu_debuglink, before suggesting a rebuild.
func (l *Library) noDWARFHint() string {
	var where []string
	if id := l.BuildID(); len(id) > 2 {
		where = append(where, filepath.Join("/usr/lib/debug/.build-id", id[:2], id[2:]+".debug"))
	}
	if s := l.File.Section(".gnu_debuglink"); s != nil && s.Flags&elf.SHF_COMPRESSED == 0 {
		// A file name, a NUL, padding and a CRC: read its first bytes only.
		data := make([]byte, min(s.FileSize, 4096))
		if n, _ := s.ReadAt(data, 0); n > 0 {
			if name, _, ok := strings.Cut(string(data[:n]), "\x00"); ok && name != "" {
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
		if s.Type != elf.SHT_NOTE || s.Flags&elf.SHF_COMPRESSED != 0 || s.FileSize > maxNote {
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

// ReadTimeout bounds one read of a library by nccom-abi (ReadStructs,
// CheckFile): a real build is read in about a second; a crafted one that
// costs more (a long string scanned at every type reference, say) is
// refused at this deadline rather than read for ever.
const ReadTimeout = 20 * time.Second

// ReadStructs opens the library at path and finds the named structs in its
// DWARF: the one way a library is read. A missing file, no DWARF or a
// missing struct is an *UnusableError; a file beyond the limits
// (limits.go) a *LimitError. It gives up after ReadTimeout.
func ReadStructs(path string, names []string) (defs map[string]*StructDef, buildID string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), ReadTimeout)
	defer cancel()
	lib, err := Open(path)
	if err != nil {
		return nil, "", err
	}
	defer lib.Close()
	defs, err = lib.ReadStructs(ctx, names)
	if err != nil {
		return nil, "", err
	}
	return defs, lib.BuildID(), nil
}

// ReadStructs finds the named structs in l's DWARF, giving up when ctx is
// done (a *LimitError). A panic of debug/dwarf on a damaged file is an
// error too, not the caller's crash.
func (l *Library) ReadStructs(ctx context.Context, names []string) (defs map[string]*StructDef, err error) {
	defer func() {
		if r := recover(); r != nil {
			defs, err = nil, &LimitError{Path: l.Path, What: fmt.Sprintf("internal error reading its DWARF: %v", r)}
		}
	}()
	d, err := l.dwarfCtx(ctx)
	if err != nil {
		return nil, err
	}
	return FindRequired(ctx, d, names, l.Path)
}

// FindRequired finds names in d; any missing one makes the input unusable.
func FindRequired(ctx context.Context, d *DWARF, names []string, path string) (map[string]*StructDef, error) {
	defs, declared, err := FindStructs(ctx, d, names)
	if err != nil {
		if IsLimit(err) {
			return nil, withPath(err, path)
		}
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
