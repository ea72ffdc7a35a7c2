package abicheck

import (
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/nccomring/libnccomring/layout"
)

// LibnccomSONAME is the SONAME of the library whose ring stage
// libnccomring replaces; the self-check looks for it among the objects
// mapped in the host process.
const LibnccomSONAME = "libnccom.so.2"

// MappedObject is one object mapped in the process, as its program
// headers in memory describe it (cmd/libnccomring/selfcheck.c reads them
// with dl_iterate_phdr): what the loader mapped, whatever its path names
// now.
type MappedObject struct {
	Path        string // as the loader has it
	SONAME      string // its DT_SONAME as mapped; "" when it has none
	SONAMEKnown bool   // false when the SONAME could not be read from memory
	BuildID     string // its GNU build ID as mapped, lowercase hex; "" when it has none
	// Addr is an address inside the first of its PT_LOAD segments that
	// maps part of its file, 0 when unknown: the line of /proc/self/maps
	// that holds it names the device and inode of the file mapped.
	Addr uint64
}

// FindMapped returns the object mapped under soname: by the SONAME read
// from memory, or, for an object whose SONAME could not be read there,
// by its file's (files named like it, libnccom.so*, first; each other
// costs tens of microseconds). Files that cannot be opened as ELF (the
// vDSO's name, a deleted file) are skipped.
func FindMapped(objs []MappedObject, soname string) (MappedObject, bool) {
	for _, o := range objs {
		if o.SONAMEKnown && o.SONAME == soname {
			return o, true
		}
	}
	stem, _, _ := strings.Cut(soname, ".so") // libnccom.so, .so.2, .so.2.31.24
	likely := func(p string) bool { return strings.HasPrefix(filepath.Base(p), stem+".so") }
	for _, pass := range []bool{true, false} {
		for _, o := range objs {
			if !o.SONAMEKnown && likely(o.Path) == pass && hasSONAME(o.Path, soname) {
				return o, true
			}
		}
	}
	return MappedObject{}, false
}

// FindBySONAME returns the first of paths whose file's ELF DT_SONAME is
// soname (FindMapped with nothing read from memory).
func FindBySONAME(paths []string, soname string) (string, bool) {
	objs := make([]MappedObject, len(paths))
	for i, p := range paths {
		objs[i] = MappedObject{Path: p}
	}
	o, ok := FindMapped(objs, soname)
	return o.Path, ok
}

// hasSONAME reads the ELF and section headers, .dynamic (within
// maxDynamic) and the bytes of one string: not all of .dynstr, which in a
// large C++ library of the same process (libtorch) runs to megabytes.
func hasSONAME(path, soname string) bool {
	l, err := Open(path)
	if err != nil {
		return false
	}
	defer l.Close()
	f := l.File
	dyn := f.SectionByType(elf.SHT_DYNAMIC)
	if dyn == nil || dyn.FileSize > maxDynamic || dyn.Flags&elf.SHF_COMPRESSED != 0 || int(dyn.Link) >= len(f.Sections) {
		return false
	}
	vals, err := f.DynValue(elf.DT_SONAME)
	if err != nil || len(vals) == 0 {
		return false
	}
	want := soname + "\x00"
	got := make([]byte, len(want))
	if _, err := f.Sections[dyn.Link].ReadAt(got, int64(vals[0])); err != nil {
		return false
	}
	return string(got) == want
}

// SelfCheck is what libnccomring's self-check found in its host process:
// the libnccom.so.2 mapped there and how its structs compare with the
// layout in use, or why they could not be compared.
type SelfCheck struct {
	Library string  // the libnccom.so.2 checked; "" when none is mapped
	Report  *Report // nil when the layout was not verified
	Why     string  // why not, when Report is nil
	// Warn says that Why is worth a WARN, not an INFO line: the mapped
	// library could not be shown to be the file read (no build ID, another
	// build ID, another file with its build ID, a file that cannot be
	// read), or the file was refused within the limits (limits.go) or did
	// not finish in time. No DWARF, a struct missing or none mapped are
	// INFO.
	Warn bool
	// Weaker, when not "", says why the file read could be shown to be the
	// one mapped by its build ID only, not by its device and inode: worth
	// one WARN, after which the check goes on (MappedStructs.Weaker).
	Weaker string

	assumedSource string // where the ASSUMED offsets in use come from
}

// MappedStructs is the libnccom.so.2 mapped in the process and its
// ring-stage structs as its DWARF gives them (ReadMapped), or why they
// were not read.
type MappedStructs struct {
	Library string                // its path as the loader has it; "" when none is mapped
	BuildID string                // its GNU build ID as mapped
	Defs    map[string]*StructDef // RingStageStructs from the file read; nil when not read
	Why     string                // why not, when Defs is nil
	Warn    bool                  // Why is worth a WARN (SelfCheck.Warn)
	// Weaker, when not "", is why the file read was shown to be the one
	// mapped only by its build ID (and maybe its inode): the device and
	// inode of the file opened could not be compared with the mapping's
	// (no /proc/self/maps, an overlay or btrfs filesystem reporting other
	// numbers).
	Weaker string
}

// ReadMapped finds the libnccom.so.2 among objs (the objects mapped in the
// process) and reads its ring-stage structs from its DWARF.
//
// The file at the library's path is read only when it is the file
// mapped: its GNU build ID must be the one mapped, and its device and
// inode (fstat of the file opened) those of the mapping at obj.Addr in
// /proc/self/maps. A file put at the path after the library was loaded,
// whatever build ID it carries, is not the layout the calls run over.
// Where the device and inode cannot be compared, the build ID vouches
// alone, and Weaker says why. The read stops at ctx's deadline.
func ReadMapped(ctx context.Context, objs []MappedObject) MappedStructs {
	var m MappedStructs
	obj, ok := FindMapped(objs, LibnccomSONAME)
	if !ok {
		m.Why = "no " + LibnccomSONAME + " is mapped in this process"
		return m
	}
	m.Library, m.BuildID = obj.Path, obj.BuildID
	if obj.BuildID == "" {
		m.Why, m.Warn = fmt.Sprintf("%s as mapped has no GNU build ID, so the file at that path cannot be shown to be the library mapped (link libnccom with --build-id)", obj.Path), true
		return m
	}
	lib, err := Open(obj.Path)
	if err != nil {
		m.Why, m.Warn = oneLine(err), true
		return m
	}
	defer lib.Close()
	if id := lib.BuildID(); id != obj.BuildID {
		if id == "" {
			id = "none"
		}
		m.Why, m.Warn = fmt.Sprintf("the file at %s (build ID %s) is not the %s mapped in this process (build ID %s): it was replaced after it was loaded", obj.Path, id, LibnccomSONAME, obj.BuildID), true
		return m
	}
	replaced, weaker := sameFile(lib, obj)
	if replaced != "" {
		m.Why, m.Warn = replaced, true
		return m
	}
	m.Weaker = weaker
	defs, err := lib.ReadStructs(ctx, RingStageStructs)
	if err != nil {
		m.Why, m.Warn = oneLine(err), IsLimit(err)
		return m
	}
	m.Defs = defs
	return m
}

// CommSize is sizeof(ncclComm) in the mapped library's DWARF; false when
// its structs were not read.
func (m *MappedStructs) CommSize() (int, bool) {
	d := m.Defs["ncclComm"]
	if d == nil || d.Type == nil {
		return 0, false
	}
	return int(d.Type.Size()), true
}

// Check compares the structs read with layout/, the ASSUMED ncclComm
// fields taken at assumed. assumedSource names where those offsets come
// from ("D3", "NCCOM_RING_LAYOUT") for the messages.
func (m *MappedStructs) Check(assumed layout.CommOffsets, assumedSource string) SelfCheck {
	sc := SelfCheck{Library: m.Library, Why: m.Why, Warn: m.Warn, Weaker: m.Weaker, assumedSource: assumedSource}
	if m.Defs == nil {
		return sc
	}
	rep := Compare(m.Defs, assumed)
	rep.Library, rep.BuildID = m.Library, m.BuildID
	sc.Report = rep
	return sc
}

// CheckMapped is ReadMapped, then Check.
func CheckMapped(ctx context.Context, objs []MappedObject, assumed layout.CommOffsets, assumedSource string) SelfCheck {
	m := ReadMapped(ctx, objs)
	return m.Check(assumed, assumedSource)
}

// oneLine spells an error, with its hint, on one log line.
func oneLine(err error) string {
	var ue *UnusableError
	if errors.As(err, &ue) && ue.Hint != "" {
		return ue.What + "; " + strings.ReplaceAll(ue.Hint, "\n  ", "; ")
	}
	return err.Error()
}

// differences lists how the library's structs named in structs differ
// from the layout in use, sizes first, in layout/'s order.
func (sc *SelfCheck) differences(structs []string) []string {
	if sc.Report == nil {
		return nil
	}
	in := make(map[string]bool, len(structs))
	for _, s := range structs {
		in[s] = true
	}
	var out []string
	for _, s := range sc.Report.Structs {
		if !s.OK && in[s.Struct] {
			out = append(out, describeSizeInUse(s))
		}
	}
	for _, f := range sc.Report.Fields {
		if f.Status != StatusOK && in[f.Struct] {
			out = append(out, sc.describeFieldInUse(f))
		}
	}
	return out
}

func describeSizeInUse(s SizeCheck) string {
	if s.AtLeast {
		return fmt.Sprintf("sizeof(%s) %d where the layout in use needs at least %d (%s)", s.Struct, s.ActualSize, s.ExpectedSize, s.Source)
	}
	return fmt.Sprintf("sizeof(%s) %d where the layout in use has %d (%s)", s.Struct, s.ActualSize, s.ExpectedSize, s.Source)
}

func (sc *SelfCheck) describeFieldInUse(f FieldCheck) string {
	grade := "documented, D2"
	if f.Grade == string(layout.Assumed) {
		grade = "ASSUMED, " + sc.assumedSource
	}
	if f.ActualOffset == nil {
		return fmt.Sprintf("no %s.%s where the layout in use has +%d (%d bytes; %s)", f.Struct, f.Field, f.ExpectedOffset, f.ExpectedSize, grade)
	}
	return fmt.Sprintf("%s.%s at +%d (%d bytes) where the layout in use has +%d (%d bytes; %s)",
		f.Struct, f.Field, *f.ActualOffset, *f.ActualSize, f.ExpectedOffset, f.ExpectedSize, grade)
}

// Refusal is the reason not to run an export that reads or writes
// structs over the checked library, "" when they all match (or nothing
// was verified): the library, its first difference in those structs, how
// many more, and what to do.
func (sc *SelfCheck) Refusal(structs []string) string {
	diffs := sc.differences(structs)
	if len(diffs) == 0 {
		return ""
	}
	text := fmt.Sprintf("%s, whose DWARF has %s", sc.Library, diffs[0])
	switch more := len(diffs) - 1; more {
	case 0:
	case 1:
		text += ", and 1 more difference"
	default:
		text += fmt.Sprintf(", and %d more differences", more)
	}
	return text + "; " + sc.advice()
}

// advice is what to do about the library as a whole: a layout profile
// describes it only when every difference is an ASSUMED ncclComm field
// that moved (same size); a documented field or size, or an ASSUMED field
// that is missing or resized, no profile can describe.
func (sc *SelfCheck) advice() string {
	if sc.profileDescribes() {
		return fmt.Sprintf("write its offsets with `nccom-abi profile %s > layout.json` and set NCCOM_RING_LAYOUT=layout.json", sc.Library)
	}
	return fmt.Sprintf("do not preload libnccomring over this build: no layout profile can describe it (`nccom-abi check %s` lists the differences)", sc.Library)
}

func (sc *SelfCheck) profileDescribes() bool {
	if !sc.Report.OnlyAssumedDiffer() {
		return false
	}
	for _, f := range sc.Report.Fields {
		if f.Status != StatusOK && f.Status != StatusMoved {
			return false
		}
	}
	return true
}

// Verified is the one-line summary of a check that compared the layouts,
// for an INFO line.
func (sc *SelfCheck) Verified() string {
	r := sc.Report
	id := ""
	if r.BuildID != "" {
		id = " (build ID " + r.BuildID + ")"
	}
	what := "matches " + sc.Library + id
	if !r.OK {
		what = fmt.Sprintf("differs from %s%s in %d places", sc.Library, id, len(r.Mismatches))
	}
	return fmt.Sprintf("the ring-stage layout in use (ASSUMED offsets from %s) %s: %d structs and %d fields read from its DWARF",
		sc.assumedSource, what, len(r.Structs), len(r.Fields))
}
