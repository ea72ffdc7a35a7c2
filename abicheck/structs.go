package abicheck

import (
	"context"
	"debug/dwarf"
	"fmt"
	"strconv"
	"strings"
)

// StructDef is one struct as LIB's DWARF defines it.
type StructDef struct {
	Name  string // the name asked for, e.g. "ncclComm"
	Found string // how it was found, e.g. "struct ncclComm", "class nccl::ncclComm", "typedef ncclTopoRanks"
	Type  *dwarf.StructType
}

// RingStageStructs are the structs the ring stage reads or writes, in the
// order layout/ lists them.
var RingStageStructs = []string{"ncclRing", "ncclChannel", "ncclTopoRanks", "ncclTopoGraph", "ncclTopoSystem", "ncclComm"}

// FindStructs scans d once for definitions of the named structs: a struct
// or class with that name, in a namespace or not, or a typedef with that
// name (or name_t) of a struct, as `typedef struct {...} ncclComm_t` makes.
// Declarations are skipped, since they carry no layout. The first
// definition wins: every translation unit of one library sees the same
// header. declared lists names seen only as declarations, for the message.
//
// The walk descends only into units and namespaces and skips the children
// of everything else (with DW_AT_sibling that is a seek; without, a count
// of nesting, not a recursion), so a 10 MB library costs one pass over its
// top-level entries; it stops as soon as every name is found. It stops
// with a *LimitError past the limits (limits.go) or when ctx is done, and
// resolves the types it finds within them (resolve.go).
func FindStructs(ctx context.Context, d *DWARF, names []string) (found map[string]*StructDef, declared map[string]bool, err error) {
	want := make(map[string]string, 2*len(names)) // DWARF name -> name asked for
	for _, n := range names {
		want[n] = n
		want[n+"_t"] = n
	}
	found = make(map[string]*StructDef, len(names))
	declared = make(map[string]bool)
	rs := newResolver(ctx, d)
	var scope []string // enclosing namespaces of the current entry
	r := d.data.Reader()
	entries, work, maxWork := 0, 0, maxFieldWork(d.infoSize)
	next := func() (*dwarf.Entry, error) {
		e, err := r.Next()
		if err != nil {
			return nil, fmt.Errorf("reading DWARF: %w", err)
		}
		if e == nil {
			return nil, nil
		}
		if work += len(e.Field) + 1; work > maxWork {
			return nil, errLimit(".debug_info decodes to more than %d attributes for its %d bytes (the entry at %#x is past that); a crafted file (entries of attributes that take no bytes)", maxWork, d.infoSize, e.Offset)
		}
		if entries++; entries%256 == 0 {
			if err := checkDone(ctx); err != nil {
				return nil, err
			}
		}
		return e, nil
	}
	// skip passes e's children.
	skip := func(e *dwarf.Entry) error {
		if sib, ok := e.Val(dwarf.AttrSibling).(dwarf.Offset); ok && sib > e.Offset {
			r.Seek(sib)
			return nil
		}
		for depth := 1; depth > 0; {
			kid, err := next()
			if err != nil || kid == nil {
				return err
			}
			switch {
			case kid.Tag == 0:
				depth--
			case kid.Children:
				if sib, ok := kid.Val(dwarf.AttrSibling).(dwarf.Offset); ok && sib > kid.Offset {
					r.Seek(sib)
				} else {
					depth++
				}
			}
		}
		return nil
	}
	for len(found) < len(names) {
		e, err := next()
		if err != nil {
			return nil, nil, err
		}
		if e == nil {
			break
		}
		switch e.Tag {
		case 0: // the end of a unit's or namespace's children
			if len(scope) > 0 {
				scope = scope[:len(scope)-1]
			}
			continue
		case dwarf.TagCompileUnit, dwarf.TagPartialUnit, dwarf.TagTypeUnit:
			scope = scope[:0]
			if e.Children {
				scope = append(scope, "") // the unit itself; its children end with a null entry
			}
			continue
		case dwarf.TagNamespace:
			if e.Children {
				if len(scope) > MaxScopeDepth {
					return nil, nil, errLimit("namespaces nest more than %d deep (MaxScopeDepth) at .debug_info+%#x", MaxScopeDepth, e.Offset)
				}
				ns, _ := e.Val(dwarf.AttrName).(string)
				if ns == "" {
					ns = "(anonymous namespace)"
				}
				scope = append(scope, ns)
			}
			continue
		case dwarf.TagStructType, dwarf.TagClassType, dwarf.TagTypedef:
			name, _ := e.Val(dwarf.AttrName).(string)
			if asked, ok := want[name]; ok && found[asked] == nil {
				if e.Val(dwarf.AttrDeclaration) != nil {
					declared[asked] = true
				} else {
					def, err := structAt(rs, e, asked, qualify(scope, name))
					if err != nil {
						return nil, nil, err
					}
					if def != nil {
						found[asked] = def
					}
				}
			}
		}
		if e.Children {
			if err := skip(e); err != nil {
				return nil, nil, err
			}
		}
	}
	for n := range found {
		delete(declared, n)
	}
	return found, declared, nil
}

// qualify is the C++ name of name in scope ("nccl::ncclComm"), or name.
func qualify(scope []string, name string) string {
	var parts []string
	for _, s := range scope {
		if s != "" {
			parts = append(parts, QuoteName(s))
		}
	}
	return strings.Join(append(parts, QuoteName(name)), "::")
}

// structAt reads the struct at e, or through the typedef at e. It returns
// nil for a typedef of something else (a pointer: upstream's
// `typedef struct ncclComm* ncclComm_t`) or of a struct not defined here.
func structAt(rs *resolver, e *dwarf.Entry, asked, qualified string) (*StructDef, error) {
	r, err := rs.resolve(typeKey{e.Offset, false})
	if err != nil {
		if IsLimit(err) {
			return nil, err
		}
		return nil, fmt.Errorf("reading DWARF type %s at %#x: %w", qualified, e.Offset, err)
	}
	t := r.t
	if e.Tag == dwarf.TagTypedef {
		st, ok := StripTypedefs(t).(*dwarf.StructType)
		if !ok || st.Incomplete || st.Kind == "union" {
			return nil, nil
		}
		found := "typedef " + qualified
		switch st.StructName {
		case "":
		case asked: // typedef struct ncclComm ncclComm: the struct is what counts
			found = st.Kind + " " + strings.TrimSuffix(qualified, "_t")
		default:
			found += " (" + st.Kind + " " + QuoteName(st.StructName) + ")"
		}
		return &StructDef{Name: asked, Found: found, Type: st}, nil
	}
	st, ok := t.(*dwarf.StructType)
	if !ok || st.Incomplete {
		return nil, nil
	}
	return &StructDef{Name: asked, Found: st.Kind + " " + qualified, Type: st}, nil
}

// StripTypedefs looks through typedefs and const/volatile qualifiers, which
// change neither size nor layout. The types FindStructs returns are trees
// at most MaxTypeDepth high; for any other, the walk stops there too (and
// returns what it reached, a typedef, which no caller takes for a struct).
func StripTypedefs(t dwarf.Type) dwarf.Type {
	for range MaxTypeDepth + 1 {
		switch u := t.(type) {
		case *dwarf.TypedefType:
			t = u.Type
		case *dwarf.QualType:
			t = u.Type
		default:
			return t
		}
	}
	return t
}

// AnonymousAggregate is the struct or union type of a member whose type has
// no name (`union { struct { int node; int nNodes; }; ... };`, or
// ncclTopoNode's `struct {...} gpu`): pahole lists their members inline,
// and an unnamed member's fields are reached as if they were the outer
// struct's.
func AnonymousAggregate(t dwarf.Type) (*dwarf.StructType, bool) {
	st, ok := t.(*dwarf.StructType)
	if !ok || st.StructName != "" || st.Incomplete {
		return nil, false
	}
	return st, true
}

// MemberOffset is a member's byte offset in its struct. DWARF 5 gives
// bitfields DW_AT_data_bit_offset instead of a byte offset.
func MemberOffset(f *dwarf.StructField) int64 {
	if f.BitSize > 0 && f.DataBitOffset != 0 {
		return f.DataBitOffset / 8
	}
	return f.ByteOffset
}

// FieldLoc is where a field path lands in a struct.
type FieldLoc struct {
	Offset int64
	Size   int64
	Type   dwarf.Type
}

// LookupField resolves a path such as "rank", "channels", "nodes[0].count"
// in st: members by name (found through unnamed struct and union members,
// whose fields sit at outer + inner offset), [i] into arrays, "." into
// struct members.
func LookupField(st *dwarf.StructType, path string) (FieldLoc, error) {
	loc := FieldLoc{Type: st}
	for i, seg := range strings.Split(path, ".") {
		name, indices, err := splitIndices(seg)
		if err != nil {
			return FieldLoc{}, err
		}
		outer, ok := StripTypedefs(loc.Type).(*dwarf.StructType)
		if !ok {
			return FieldLoc{}, fmt.Errorf("%s is not a struct", strings.Join(strings.Split(path, ".")[:i], "."))
		}
		off, f, ok := findMember(outer, name, 0)
		if !ok {
			return FieldLoc{}, fmt.Errorf("no member %s", name)
		}
		loc.Offset += off
		loc.Type = f.Type
		for _, idx := range indices {
			at, ok := StripTypedefs(loc.Type).(*dwarf.ArrayType)
			if !ok {
				return FieldLoc{}, fmt.Errorf("%s is not an array", name)
			}
			if at.Count >= 0 && idx >= at.Count {
				return FieldLoc{}, fmt.Errorf("%s[%d] is past its %d elements", name, idx, at.Count)
			}
			loc.Offset += idx * at.Type.Size()
			loc.Type = at.Type
		}
	}
	loc.Size = loc.Type.Size()
	return loc, nil
}

// findMember finds name among st's members, looking inside unnamed struct
// and union members too (at most MaxTypeDepth deep), and returns its
// offset from st's start.
func findMember(st *dwarf.StructType, name string, depth int) (int64, *dwarf.StructField, bool) {
	if depth > MaxTypeDepth {
		return 0, nil, false
	}
	for _, f := range st.Field {
		if f.Name == name {
			return MemberOffset(f), f, true
		}
	}
	for _, f := range st.Field {
		if f.Name != "" {
			continue
		}
		if inner, ok := StripTypedefs(f.Type).(*dwarf.StructType); ok {
			if off, g, ok := findMember(inner, name, depth+1); ok {
				return MemberOffset(f) + off, g, true
			}
		}
	}
	return 0, nil, false
}

// splitIndices splits "nodes[0][2]" into "nodes" and [0 2].
func splitIndices(seg string) (string, []int64, error) {
	name, rest, hasIndex := strings.Cut(seg, "[")
	if name == "" {
		return "", nil, fmt.Errorf("bad field path segment %q", seg)
	}
	var idx []int64
	for hasIndex {
		num, after, closed := strings.Cut(rest, "]")
		n, err := strconv.ParseInt(num, 10, 64)
		if !closed || err != nil || n < 0 {
			return "", nil, fmt.Errorf("bad index in %q", seg)
		}
		idx = append(idx, n)
		if after == "" {
			break
		}
		if rest, hasIndex = strings.CutPrefix(after, "["); !hasIndex {
			return "", nil, fmt.Errorf("bad field path segment %q", seg)
		}
	}
	return name, idx, nil
}

// leafAt names the member of st that covers byte off (looking into unnamed
// aggregates, not into named struct members, at most MaxTypeDepth deep),
// for "renamed?" hints.
func leafAt(st *dwarf.StructType, base, off int64, depth int) (name string, at, size int64, typ dwarf.Type, ok bool) {
	if depth > MaxTypeDepth {
		return "", 0, 0, nil, false
	}
	for _, f := range st.Field {
		start := base + MemberOffset(f)
		sz := f.Type.Size()
		if off < start || off >= start+sz {
			continue
		}
		if f.Name == "" {
			if inner, isAgg := StripTypedefs(f.Type).(*dwarf.StructType); isAgg {
				if n, a, s, t, found := leafAt(inner, start, off, depth+1); found {
					return n, a, s, t, true
				}
			}
			continue
		}
		return f.Name, start, sz, f.Type, true
	}
	return "", 0, 0, nil, false
}

// CDecl spells a member declaration the C way, as pahole prints it: the
// type, and the name with its array dimensions ("int", "kangaRing[4][64]").
func CDecl(t dwarf.Type, name string) (typ, decl string) {
	return cDecl(t, name, 0)
}

func cDecl(t dwarf.Type, name string, depth int) (typ, decl string) {
	dims := ""
	for ; depth <= MaxTypeDepth; depth++ {
		at, ok := t.(*dwarf.ArrayType)
		if !ok {
			break
		}
		if at.Count < 0 {
			dims += "[]"
		} else {
			dims += "[" + strconv.FormatInt(at.Count, 10) + "]"
		}
		t = at.Type
	}
	return cTypeName(t, depth), name + dims
}

// CTypeName is t's C spelling, close to pahole's ("struct ncclRing",
// "int *", "uint64_t"). Only for display: comparisons use sizes and
// offsets. Names from the file are quoted when they hold control
// characters; past MaxTypeDepth levels the rest is "...".
func CTypeName(t dwarf.Type) string { return cTypeName(t, 0) }

func cTypeName(t dwarf.Type, depth int) string {
	if depth > MaxTypeDepth {
		return "..."
	}
	switch u := t.(type) {
	case *dwarf.StructType:
		if u.StructName == "" {
			return u.Kind + " {...}"
		}
		return u.Kind + " " + QuoteName(u.StructName)
	case *dwarf.EnumType:
		if u.EnumName == "" {
			return "enum {...}"
		}
		return "enum " + QuoteName(u.EnumName)
	case *dwarf.TypedefType:
		return QuoteName(u.Name)
	case *dwarf.QualType:
		return u.Qual + " " + cTypeName(u.Type, depth+1)
	case *dwarf.PtrType:
		if _, ok := u.Type.(*dwarf.FuncType); ok {
			return "function pointer"
		}
		if _, ok := u.Type.(*dwarf.VoidType); ok {
			return "void *"
		}
		return cTypeName(u.Type, depth+1) + " *"
	case *dwarf.ArrayType:
		typ, dims := cDecl(u, "", depth+1)
		return typ + dims
	case *dwarf.VoidType:
		return "void"
	case *dwarf.FuncType:
		return "function"
	default:
		if n := t.Common().Name; n != "" {
			return QuoteName(n)
		}
		return t.String()
	}
}
