package abicheck

import (
	"context"
	"debug/dwarf"
	"fmt"
	"strings"

	"github.com/nccomring/libnccomring/internal/quote"
)

// Resolving types within the limits. dwarf.Data.Type builds the whole
// graph reachable from a type, following every reference (a pointer's
// target, a function's parameters) by recursion without a bound, and ties
// cycles into the graph it returns: a typedef whose type is itself comes
// back as a TypedefType whose Type is itself, on which every walk (Size,
// StripTypedefs) loops; a pointer to itself, or an anonymous struct whose
// member is that struct, overflow the stack of whatever walks them next.
//
// The resolver here reads the entries itself and builds the same
// debug/dwarf types (so everything that uses them is unchanged), with
// three rules that make every result a finite tree:
//
//   - A pointer's target is read by name only ("shallow"): a struct, union
//     or class without its members, a function without its parameters.
//     Nothing here looks inside a pointer's target, and every cycle a
//     compiler writes (struct ncclComm { struct ncclComm *next; }) passes
//     through a pointer, so none reaches the result.
//   - A type met again while it is being resolved is a cycle no compiler
//     writes (a type containing itself by value, a typedef naming itself,
//     pointers pointing at each other): a *LimitError naming the entries.
//   - A type's height (the longest chain of references below it) is kept,
//     and one above MaxTypeDepth is a *LimitError: every walk over a
//     result recurses at most that far.
//
// Every entry read counts against MaxTypeEntries, and the context's
// deadline is checked as entries are read.

type typeKey struct {
	off     dwarf.Offset
	shallow bool
}

type resolved struct {
	t      dwarf.Type
	height int
}

type resolver struct {
	ctx     context.Context
	d       *DWARF
	r       *dwarf.Reader
	done    map[typeKey]resolved
	onPath  map[typeKey]int // index in path
	path    []pathStep
	entries int
}

type pathStep struct {
	key  typeKey
	desc string
}

func newResolver(ctx context.Context, d *DWARF) *resolver {
	return &resolver{ctx: ctx, d: d, r: d.data.Reader(), done: map[typeKey]resolved{}, onPath: map[typeKey]int{}}
}

// count charges one entry read against MaxTypeEntries and checks the
// deadline now and then.
func (rs *resolver) count(at dwarf.Offset) error {
	rs.entries++
	if rs.entries > MaxTypeEntries {
		return errLimit("resolving the types took more than %d DWARF entries (MaxTypeEntries), the last at .debug_info+%#x", MaxTypeEntries, at)
	}
	if rs.entries%16 == 0 {
		return checkDone(rs.ctx)
	}
	return nil
}

// entry reads the entry at off; the reader is then at its first child.
func (rs *resolver) entry(off dwarf.Offset) (*dwarf.Entry, error) {
	if err := rs.count(off); err != nil {
		return nil, err
	}
	rs.r.Seek(off)
	e, err := rs.r.Next()
	if err != nil {
		return nil, err
	}
	if e == nil || e.Offset != off {
		return nil, fmt.Errorf("no DWARF entry at .debug_info+%#x", off)
	}
	return e, nil
}

// children reads the direct children of e, the entry just read, whose tag
// is one of tags; nested ones are skipped (by DW_AT_sibling when it points
// forward, else by counting).
func (rs *resolver) children(e *dwarf.Entry, tags ...dwarf.Tag) ([]*dwarf.Entry, error) {
	if !e.Children {
		return nil, nil
	}
	var kids []*dwarf.Entry
	depth := 0
	for {
		kid, err := rs.r.Next()
		if err != nil {
			return nil, err
		}
		if kid == nil || isUnit(kid.Tag) {
			return nil, fmt.Errorf("the children of the DWARF entry at .debug_info+%#x do not end", e.Offset)
		}
		if err := rs.count(kid.Offset); err != nil {
			return nil, err
		}
		if kid.Tag == 0 {
			if depth == 0 {
				return kids, nil
			}
			depth--
			continue
		}
		if depth == 0 {
			for _, t := range tags {
				if kid.Tag == t {
					kids = append(kids, kid)
				}
			}
		}
		if kid.Children {
			if sib, ok := kid.Val(dwarf.AttrSibling).(dwarf.Offset); ok && sib > kid.Offset {
				rs.r.Seek(sib)
			} else {
				depth++
			}
		}
	}
}

func isUnit(t dwarf.Tag) bool {
	switch t {
	case dwarf.TagCompileUnit, dwarf.TagPartialUnit, dwarf.TagTypeUnit, dwarf.TagSkeletonUnit:
		return true
	}
	return false
}

// typeOf resolves the type e's DW_AT_type refers to (void when it has
// none), in the mode given.
func (rs *resolver) typeOf(e *dwarf.Entry, shallow bool) (resolved, error) {
	switch v := e.Val(dwarf.AttrType).(type) {
	case dwarf.Offset:
		return rs.resolve(typeKey{v, shallow})
	case uint64:
		off, ok := rs.d.sigs[v]
		if !ok {
			return resolved{}, fmt.Errorf("the DWARF entry at .debug_info+%#x refers to type signature %#x, in no type unit of .debug_info (DWARF 4's .debug_types, from -fdebug-types-section, is not read)", e.Offset, v)
		}
		return rs.resolve(typeKey{off, shallow})
	}
	return resolved{&dwarf.VoidType{}, 1}, nil
}

// resolve reads the type at key.off, deep (a struct with its members) or
// shallow (by name only), once: later calls get the same result.
func (rs *resolver) resolve(key typeKey) (resolved, error) {
	if r, ok := rs.done[key]; ok {
		return r, nil
	}
	if i, ok := rs.onPath[key]; ok {
		return resolved{}, rs.cycle(i, key.off)
	}
	if len(rs.path) >= MaxTypeDepth {
		return resolved{}, errLimit("DWARF types nest more than %d deep (MaxTypeDepth) at .debug_info+%#x, reached through %s", MaxTypeDepth, key.off, rs.chain(0, key.off))
	}
	e, err := rs.entry(key.off)
	if err != nil {
		return resolved{}, err
	}
	rs.onPath[key] = len(rs.path)
	rs.path = append(rs.path, pathStep{key, describeEntry(e)})
	defer func() {
		delete(rs.onPath, key)
		rs.path = rs.path[:len(rs.path)-1]
	}()
	r, err := rs.build(e, key.shallow, rs.r.AddressSize())
	if err != nil {
		return resolved{}, err
	}
	if r.height > MaxTypeDepth {
		return resolved{}, errLimit("DWARF types nest more than %d deep (MaxTypeDepth) below .debug_info+%#x (%s)", MaxTypeDepth, key.off, describeEntry(e))
	}
	rs.done[key] = r
	return r, nil
}

// cycle is the error for a type met again at path[i].
func (rs *resolver) cycle(i int, off dwarf.Offset) error {
	return errLimit("DWARF type cycle at .debug_info+%#x: %s (a type that contains or names itself, or pointers that point to one another: no compiler writes one)",
		off, rs.chain(i, off))
}

// chain spells path[i:] and then off, at most 8 steps.
func (rs *resolver) chain(i int, off dwarf.Offset) string {
	var steps []string
	for _, p := range rs.path[i:] {
		steps = append(steps, fmt.Sprintf("%s at %#x", p.desc, p.key.off))
	}
	if len(steps) > 8 {
		steps = append(append(steps[:3:3], fmt.Sprintf("(%d more)", len(steps)-6)), steps[len(steps)-3:]...)
	}
	for _, p := range rs.path[i:] {
		if p.key.off == off {
			return strings.Join(append(steps, fmt.Sprintf("%s at %#x", p.desc, off)), " -> ")
		}
	}
	return strings.Join(append(steps, fmt.Sprintf("the entry at %#x", off)), " -> ")
}

// tagWords are the words of the tags messages, struct kinds and
// qualifiers name; another tag is spelt as dwarf.Tag prints it, less "Tag".
var tagWords = map[dwarf.Tag]string{
	dwarf.TagTypedef:      "typedef",
	dwarf.TagPointerType:  "pointer",
	dwarf.TagStructType:   "struct",
	dwarf.TagUnionType:    "union",
	dwarf.TagClassType:    "class",
	dwarf.TagArrayType:    "array",
	dwarf.TagConstType:    "const",
	dwarf.TagVolatileType: "volatile",
	dwarf.TagRestrictType: "restrict",
	dwarf.TagMember:       "member",
}

// describeEntry names an entry for messages: "typedef ncclComm",
// "pointer", "anonymous struct".
func describeEntry(e *dwarf.Entry) string {
	word, ok := tagWords[e.Tag]
	if !ok {
		word = strings.TrimPrefix(e.Tag.String(), "Tag")
	}
	name, _ := e.Val(dwarf.AttrName).(string)
	switch {
	case name != "":
		return word + " " + QuoteName(name)
	case e.Tag == dwarf.TagStructType || e.Tag == dwarf.TagUnionType || e.Tag == dwarf.TagClassType:
		return "anonymous " + word
	}
	return word
}

// QuoteName is a name from the file as it may be printed: itself when it
// is plain (printable ASCII but '"' and '\\', at most 200 bytes), else
// quoted by internal/quote (C escapes, \xHH for every other byte, cut
// after 256 bytes with the name's length), so that neither a control
// character (a terminal's escape sequence, C0 or C1: U+009B) nor a
// bidirectional override (U+202E) in a crafted file acts on the
// terminal or the text around it (issue 34, F7).
func QuoteName(s string) string {
	if len(s) > 200 {
		return quote.String(s)
	}
	for i := range len(s) {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return quote.String(s)
		}
	}
	return s
}

// build makes the type of e, read just now from a unit of addrSize-byte
// addresses, as dwarf.Data.Type would (attributes, sizes, the
// zero-length-array fix), within the rules above.
func (rs *resolver) build(e *dwarf.Entry, shallow bool, addrSize int) (resolved, error) {
	var typ dwarf.Type
	height := 1
	sub := func(r resolved) {
		if r.height+1 > height {
			height = r.height + 1
		}
	}
	switch e.Tag {
	case dwarf.TagArrayType:
		kids, err := rs.children(e, dwarf.TagSubrangeType, dwarf.TagEnumerationType)
		if err != nil {
			return resolved{}, err
		}
		var dims []int64
		for _, kid := range kids {
			if kid.Tag == dwarf.TagEnumerationType {
				return resolved{}, fmt.Errorf("DWARF entry at .debug_info+%#x: cannot handle enumeration type as array bound", kid.Offset)
			}
			count, ok := kid.Val(dwarf.AttrCount).(int64)
			if !ok {
				count, ok = kid.Val(dwarf.AttrUpperBound).(int64)
				if ok {
					count++
				} else if len(dims) == 0 {
					count = -1
				}
			}
			dims = append(dims, count)
		}
		if len(dims) == 0 {
			dims = []int64{-1}
		}
		elem, err := rs.typeOf(e, shallow)
		if err != nil {
			return resolved{}, err
		}
		height = elem.height + len(dims)
		t := &dwarf.ArrayType{Type: elem.t, Count: dims[0]}
		t.StrideBitSize, _ = e.Val(dwarf.AttrStrideSize).(int64)
		for i := len(dims) - 1; i >= 1; i-- {
			t.Type = &dwarf.ArrayType{Type: t.Type, Count: dims[i]}
		}
		typ = t

	case dwarf.TagBaseType:
		name, _ := e.Val(dwarf.AttrName).(string)
		enc, ok := e.Val(dwarf.AttrEncoding).(int64)
		if !ok {
			return resolved{}, fmt.Errorf("DWARF base type at .debug_info+%#x has no encoding", e.Offset)
		}
		newType, ok := baseTypes[enc]
		if !ok {
			return resolved{}, fmt.Errorf("DWARF base type at .debug_info+%#x has unrecognized encoding %d", e.Offset, enc)
		}
		t := newType()
		if enc == ateComplexFloat && name == "complex" {
			switch size, _ := e.Val(dwarf.AttrByteSize).(int64); size {
			case 8:
				name = "complex float"
			case 16:
				name = "complex double"
			}
		}
		typ = t
		b := t.Basic()
		b.Name = name
		b.BitSize, _ = e.Val(dwarf.AttrBitSize).(int64)
		var err error
		if b.BitOffset, b.DataBitOffset, err = bitOffsets(e, "base type"); err != nil {
			return resolved{}, err
		}

	case dwarf.TagClassType, dwarf.TagStructType, dwarf.TagUnionType:
		t := new(dwarf.StructType)
		t.Kind = tagWords[e.Tag]
		t.StructName, _ = e.Val(dwarf.AttrName).(string)
		t.Incomplete = e.Val(dwarf.AttrDeclaration) != nil
		t.Field = []*dwarf.StructField{}
		typ = t
		if shallow {
			break
		}
		kids, err := rs.children(e, dwarf.TagMember)
		if err != nil {
			return resolved{}, err
		}
		var lastField *dwarf.StructField
		var lastBitSize, lastByteOffset int64
		for _, kid := range kids {
			f := new(dwarf.StructField)
			r, err := rs.typeOf(kid, false)
			if err != nil {
				return resolved{}, err
			}
			f.Type = r.t
			sub(r)
			switch loc := kid.Val(dwarf.AttrDataMemberLoc).(type) {
			case []byte:
				off, ok := plusUconst(loc)
				if !ok {
					return resolved{}, fmt.Errorf("DWARF member at .debug_info+%#x: unexpected location expression", kid.Offset)
				}
				f.ByteOffset = off
			case int64:
				f.ByteOffset = loc
			}
			f.Name, _ = kid.Val(dwarf.AttrName).(string)
			f.ByteSize, _ = kid.Val(dwarf.AttrByteSize).(int64)
			if f.BitOffset, f.DataBitOffset, err = bitOffsets(kid, "member"); err != nil {
				return resolved{}, err
			}
			f.BitSize, _ = kid.Val(dwarf.AttrBitSize).(int64)
			t.Field = append(t.Field, f)
			// DWARF writes a zero-length array as one of length 1: a member
			// at the offset of the one after it (or at the struct's end)
			// has none.
			if lastField != nil && lastBitSize == 0 && lastByteOffset == f.ByteOffset && t.Kind != "union" {
				zeroArray(lastField)
			}
			lastField, lastByteOffset, lastBitSize = f, f.ByteOffset, f.BitSize
		}
		if size, ok := e.Val(dwarf.AttrByteSize).(int64); ok && t.Kind != "union" && lastField != nil && size == lastByteOffset {
			zeroArray(lastField)
		}

	case dwarf.TagConstType, dwarf.TagVolatileType, dwarf.TagRestrictType:
		r, err := rs.typeOf(e, shallow)
		if err != nil {
			return resolved{}, err
		}
		sub(r)
		typ = &dwarf.QualType{Type: r.t, Qual: tagWords[e.Tag]}

	case dwarf.TagEnumerationType:
		// The enumerators are not read: nothing here prints them.
		t := new(dwarf.EnumType)
		t.EnumName, _ = e.Val(dwarf.AttrName).(string)
		typ = t

	case dwarf.TagPointerType:
		t := new(dwarf.PtrType)
		r, err := rs.typeOf(e, true)
		if err != nil {
			return resolved{}, err
		}
		sub(r)
		t.Type = r.t
		typ = t

	case dwarf.TagSubroutineType:
		// By name only: nothing here looks at a function's parameters.
		typ = new(dwarf.FuncType)

	case dwarf.TagTypedef:
		r, err := rs.typeOf(e, shallow)
		if err != nil {
			return resolved{}, err
		}
		sub(r)
		t := &dwarf.TypedefType{Type: r.t}
		t.Name, _ = e.Val(dwarf.AttrName).(string)
		typ = t

	case dwarf.TagUnspecifiedType:
		t := new(dwarf.UnspecifiedType)
		t.Name, _ = e.Val(dwarf.AttrName).(string)
		typ = t

	default:
		t := new(dwarf.UnsupportedType)
		t.Tag = e.Tag
		t.Name, _ = e.Val(dwarf.AttrName).(string)
		typ = t
	}

	size, ok := e.Val(dwarf.AttrByteSize).(int64)
	if !ok {
		size = -1
		switch t := typ.(type) {
		case *dwarf.TypedefType:
			size = t.Type.Size()
		case *dwarf.PtrType:
			size = int64(addrSize)
		}
	}
	typ.Common().ByteSize = size
	return resolved{typ, height}, nil
}

// basicType is a base type: each embeds dwarf.BasicType, whose Basic
// method they share.
type basicType interface {
	dwarf.Type
	Basic() *dwarf.BasicType
}

const ateComplexFloat = 0x03 // DW_ATE_complex_float

// baseTypes makes the type of each base type encoding (DW_ATE_*) read here.
var baseTypes = map[int64]func() basicType{
	0x01:            func() basicType { return new(dwarf.AddrType) },    // DW_ATE_address
	0x02:            func() basicType { return new(dwarf.BoolType) },    // DW_ATE_boolean
	ateComplexFloat: func() basicType { return new(dwarf.ComplexType) }, // DW_ATE_complex_float
	0x04:            func() basicType { return new(dwarf.FloatType) },   // DW_ATE_float
	0x05:            func() basicType { return new(dwarf.IntType) },     // DW_ATE_signed
	0x06:            func() basicType { return new(dwarf.CharType) },    // DW_ATE_signed_char
	0x07:            func() basicType { return new(dwarf.UintType) },    // DW_ATE_unsigned
	0x08:            func() basicType { return new(dwarf.UcharType) },   // DW_ATE_unsigned_char
}

// bitOffsets reads e's bit offset, DWARF 2's or DWARF 4's: at most one of
// them is there. what names e in the error.
func bitOffsets(e *dwarf.Entry, what string) (bitOffset, dataBitOffset int64, err error) {
	bitOffset, haveBit := e.Val(dwarf.AttrBitOffset).(int64)
	dataBitOffset, haveDataBit := e.Val(dwarf.AttrDataBitOffset).(int64)
	if haveBit && haveDataBit {
		return 0, 0, fmt.Errorf("DWARF %s at .debug_info+%#x has duplicate bit offset attributes", what, e.Offset)
	}
	return bitOffset, dataBitOffset, nil
}

// plusUconst reads a DWARF 2 member location, DW_OP_plus_uconst N.
func plusUconst(loc []byte) (int64, bool) {
	const opPlusUconst = 0x23
	if len(loc) < 2 || loc[0] != opPlusUconst {
		return 0, false
	}
	var v uint64
	for i, c := range loc[1:] {
		if i >= 10 {
			return 0, false
		}
		v |= uint64(c&0x7f) << (7 * uint(i))
		if c&0x80 == 0 {
			return int64(v), true
		}
	}
	return 0, false
}

// zeroArray gives f, when it is an array of elements with a size, a copy
// of its type with no elements.
func zeroArray(f *dwarf.StructField) {
	at, ok := f.Type.(*dwarf.ArrayType)
	if !ok || at.Type.Size() == 0 {
		return
	}
	cp := *at
	cp.Count = 0
	f.Type = &cp
}
