package elfcraft

import (
	"debug/dwarf"
	"debug/elf"
	"fmt"
)

// DIE is one debugging information entry to assemble: a tag, attributes
// and children. A reference to another DIE is an attribute whose value is
// that *DIE (DW_FORM_ref4, unit-relative).
type DIE struct {
	Tag      dwarf.Tag
	Attrs    []Attr
	Children []*DIE

	off  uint32 // from the unit's start, once laid out
	code uint64 // its abbreviation
}

// Attr is one attribute. Val is a string (DW_FORM_string), an int64
// (DW_FORM_sdata), a uint64 (DW_FORM_udata), true (DW_FORM_flag_present),
// a *DIE (DW_FORM_ref4) or a []byte (DW_FORM_block1).
type Attr struct {
	Attr dwarf.Attr
	Val  any
}

// DWARF forms used here.
const (
	formBlock1       = 0x0a
	formString       = 0x08
	formSdata        = 0x0d
	formUdata        = 0x0f
	formRef4         = 0x13
	formFlagPresent  = 0x19
	childrenNo       = 0
	childrenYes      = 1
	dwarfVersion     = 4
	unitHeaderLength = 11 // 32-bit DWARF 4: length, version, abbrev offset, address size
)

func form(v any) (uint64, error) {
	switch v.(type) {
	case string:
		return formString, nil
	case int64:
		return formSdata, nil
	case uint64:
		return formUdata, nil
	case bool:
		return formFlagPresent, nil
	case *DIE:
		return formRef4, nil
	case []byte:
		return formBlock1, nil
	}
	return 0, fmt.Errorf("elfcraft: attribute value %T", v)
}

// Unit assembles one DWARF 4 compile unit whose top entry is cu, every
// entry with an abbreviation of its own: the .debug_abbrev and .debug_info
// contents.
func Unit(cu *DIE) (abbrev, info []byte, err error) {
	var all []*DIE
	var walk func(d *DIE)
	walk = func(d *DIE) {
		all = append(all, d)
		for _, c := range d.Children {
			walk(c)
		}
	}
	walk(cu)

	for i, d := range all {
		d.code = uint64(i + 1)
		abbrev = uleb(abbrev, d.code)
		abbrev = uleb(abbrev, uint64(d.Tag))
		if len(d.Children) > 0 {
			abbrev = append(abbrev, childrenYes)
		} else {
			abbrev = append(abbrev, childrenNo)
		}
		for _, a := range d.Attrs {
			f, err := form(a.Val)
			if err != nil {
				return nil, nil, err
			}
			abbrev = uleb(abbrev, uint64(a.Attr))
			abbrev = uleb(abbrev, f)
		}
		abbrev = append(abbrev, 0, 0)
	}
	abbrev = append(abbrev, 0)

	// Lay out (every reference is 4 bytes, so sizes do not depend on
	// offsets), then write.
	off := uint32(unitHeaderLength)
	var layout func(d *DIE)
	layout = func(d *DIE) {
		d.off = off
		off += uint32(len(uleb(nil, d.code)))
		for _, a := range d.Attrs {
			off += uint32(len(value(nil, a.Val)))
		}
		for _, c := range d.Children {
			layout(c)
		}
		if len(d.Children) > 0 {
			off++ // the null entry that ends the children
		}
	}
	layout(cu)
	in := map[*DIE]bool{}
	for _, d := range all {
		in[d] = true
	}
	for _, d := range all {
		for _, a := range d.Attrs {
			if ref, ok := a.Val.(*DIE); ok && !in[ref] {
				return nil, nil, fmt.Errorf("elfcraft: a reference to an entry (tag %v) that is not in the unit", ref.Tag)
			}
		}
	}

	info = make([]byte, unitHeaderLength, off)
	le.PutUint32(info[0:], off-4)
	le.PutUint16(info[4:], dwarfVersion)
	le.PutUint32(info[6:], 0)
	info[10] = 8
	var write func(d *DIE)
	write = func(d *DIE) {
		info = uleb(info, d.code)
		for _, a := range d.Attrs {
			info = value(info, a.Val)
		}
		for _, c := range d.Children {
			write(c)
		}
		if len(d.Children) > 0 {
			info = append(info, 0)
		}
	}
	write(cu)
	return abbrev, info, nil
}

func value(b []byte, v any) []byte {
	switch v := v.(type) {
	case string:
		return append(append(b, v...), 0)
	case int64:
		return sleb(b, v)
	case uint64:
		return uleb(b, v)
	case bool:
		return b
	case *DIE:
		return le.AppendUint32(b, v.off)
	case []byte:
		return append(append(b, byte(len(v))), v...)
	}
	return b
}

func uleb(b []byte, v uint64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			b = append(b, c|0x80)
			continue
		}
		return append(b, c)
	}
}

func sleb(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// DebugSections are .debug_abbrev and .debug_info holding unit.
func DebugSections(cu *DIE) ([]Section, error) {
	abbrev, info, err := Unit(cu)
	if err != nil {
		return nil, err
	}
	return []Section{{Name: ".debug_abbrev", Data: abbrev}, {Name: ".debug_info", Data: info}}, nil
}

// Helpers for the entries the tests build.

// CU is a compile unit entry with children.
func CU(children ...*DIE) *DIE {
	return &DIE{Tag: dwarf.TagCompileUnit, Attrs: []Attr{{dwarf.AttrName, "crafted.c"}}, Children: children}
}

// Base is a signed integer type of size bytes.
func Base(name string, size int64) *DIE {
	return &DIE{Tag: dwarf.TagBaseType, Attrs: []Attr{
		{dwarf.AttrName, name}, {dwarf.AttrByteSize, size}, {dwarf.AttrEncoding, int64(5)}}}
}

// Struct is a struct type (name "" for an anonymous one) of size bytes.
func Struct(name string, size int64, members ...*DIE) *DIE {
	d := &DIE{Tag: dwarf.TagStructType, Children: members}
	if name != "" {
		d.Attrs = append(d.Attrs, Attr{dwarf.AttrName, name})
	}
	d.Attrs = append(d.Attrs, Attr{dwarf.AttrByteSize, size})
	return d
}

// Member is a struct member (name "" for an anonymous one) at off.
func Member(name string, typ *DIE, off int64) *DIE {
	d := &DIE{Tag: dwarf.TagMember}
	if name != "" {
		d.Attrs = append(d.Attrs, Attr{dwarf.AttrName, name})
	}
	d.Attrs = append(d.Attrs, Attr{dwarf.AttrType, typ}, Attr{dwarf.AttrDataMemberLoc, off})
	return d
}

// Typedef names typ (nil: filled in later, for cycles).
func Typedef(name string, typ *DIE) *DIE {
	d := &DIE{Tag: dwarf.TagTypedef, Attrs: []Attr{{dwarf.AttrName, name}}}
	if typ != nil {
		d.Attrs = append(d.Attrs, Attr{dwarf.AttrType, typ})
	}
	return d
}

// Pointer points at typ (nil: filled in later, for cycles).
func Pointer(typ *DIE) *DIE {
	d := &DIE{Tag: dwarf.TagPointerType, Attrs: []Attr{{dwarf.AttrByteSize, int64(8)}}}
	if typ != nil {
		d.Attrs = append(d.Attrs, Attr{dwarf.AttrType, typ})
	}
	return d
}

// SetType sets (or adds) d's DW_AT_type.
func (d *DIE) SetType(typ *DIE) {
	for i, a := range d.Attrs {
		if a.Attr == dwarf.AttrType {
			d.Attrs[i].Val = typ
			return
		}
	}
	d.Attrs = append(d.Attrs, Attr{dwarf.AttrType, typ})
}

// RingStageStubs are the five ring-stage structs other than ncclComm as
// bare definitions (a name and a size), so that a crafted ncclComm is
// what a reader reaches.
func RingStageStubs() []*DIE {
	return []*DIE{
		Struct("ncclRing", 24), Struct("ncclChannel", 512), Struct("ncclTopoRanks", 960),
		Struct("ncclTopoGraph", 33080), Struct("ncclTopoSystem", 4),
	}
}

// The three type cycles of issue 21, each a unit whose ncclComm a reader
// must reach through the cycle.

// SelfTypedef is `typedef ncclComm ncclComm`: a typedef whose type is
// itself (with a byte size, so that nothing asks its target for one).
func SelfTypedef() *DIE {
	td := Typedef("ncclComm", nil)
	td.Attrs = append(td.Attrs, Attr{dwarf.AttrByteSize, int64(19216)})
	td.SetType(td)
	return CU(append(RingStageStubs(), td)...)
}

// PointerCycle is an ncclComm whose member topo is a pointer to a pointer
// to the first pointer.
func PointerCycle() *DIE {
	a, b := Pointer(nil), Pointer(nil)
	a.SetType(b)
	b.SetType(a)
	comm := Struct("ncclComm", 19216, Member("topo", a, 17552))
	return CU(append(RingStageStubs(), comm, a, b)...)
}

// AnonymousMemberCycle is an ncclComm whose unnamed member is an
// anonymous struct whose unnamed member is that struct again.
func AnonymousMemberCycle() *DIE {
	anon := Struct("", 8)
	anon.Children = []*DIE{Member("", anon, 0)}
	comm := Struct("ncclComm", 19216, Member("", anon, 17552))
	return CU(append(RingStageStubs(), comm, anon)...)
}

// TypedefChain is ncclComm reached through n typedefs, each naming the
// next: a chain with no cycle, deeper than any compiler writes.
func TypedefChain(n int) *DIE {
	comm := Struct("ncclCommBody", 19216)
	children := []*DIE{comm}
	next := comm
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("ncclComm%d", i)
		if i == n-1 {
			name = "ncclComm"
		}
		td := Typedef(name, next)
		children = append(children, td)
		next = td
	}
	return CU(append(RingStageStubs(), children...)...)
}

// WithDWARF is base (nil: Minimal) with cu's .debug_abbrev and .debug_info.
func WithDWARF(base []byte, cu *DIE, extra ...Section) ([]byte, error) {
	secs, err := DebugSections(cu)
	if err != nil {
		return nil, err
	}
	if base == nil {
		base = Minimal()
	}
	return AddSections(base, append(secs, extra...)...)
}

// Bomb is a file whose .debug_info is a compressed section declaring
// size bytes uncompressed and expanding to expands of them: zstd (RLE
// blocks, 4 bytes per 128 KiB) or zlib (.zdebug_info when zdebug, else
// SHF_COMPRESSED; about 1 KiB per MiB). A valid .debug_abbrev comes with
// it, so a reader that decompresses gets that far.
func Bomb(base []byte, typ elf.CompressionType, size, expands uint64, zdebug bool) ([]byte, error) {
	if base == nil {
		base = Minimal()
	}
	abbrev, _, err := Unit(CU())
	if err != nil {
		return nil, err
	}
	info := Section{Name: ".debug_info", Flags: elf.SHF_COMPRESSED}
	switch {
	case zdebug:
		info = Section{Name: ".zdebug_info", Data: Zdebug(size, ZlibZeros(expands))}
	case typ == elf.COMPRESS_ZSTD:
		info.Data = Compressed(typ, size, ZstdZeros(expands))
	default:
		info.Data = Compressed(typ, size, ZlibZeros(expands))
	}
	return AddSections(base, Section{Name: ".debug_abbrev", Data: abbrev}, info)
}
