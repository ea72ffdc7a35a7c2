package main

import (
	"debug/dwarf"
	"flag"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"
	"unsafe"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/abicheck"
	"github.com/nccomring/libnccomring/internal/cli"
)

// dumpRow is one line of a listing.
type dumpRow struct {
	// "member", "hole" (before the next member), "padding" (at the end), or
	// in ncclTopoRanks "record" (a word of the record, D25) or "note"
	// (the record's bytes are not one member of LIB's; Name says why).
	Kind   string `json:"kind"`
	Depth  int    `json:"depth"`
	Type   string `json:"type,omitempty"`
	Name   string `json:"name,omitempty"` // with array dimensions; "" for an anonymous struct or union
	Offset int64  `json:"offset"`
	Size   int64  `json:"size"`
	Bits   int64  `json:"bits,omitempty"` // a bitfield's width
	// Inline is set on a struct or union whose members follow at Depth+1.
	Inline bool `json:"inline,omitempty"`
}

// dumpedStruct is one struct's listing.
type dumpedStruct struct {
	Struct  string    `json:"struct"`
	FoundAs string    `json:"foundAs"`
	Size    int64     `json:"size"`
	Members int       `json:"members"` // its own, as pahole counts them
	Holes   int       `json:"holes"`
	SumHole int64     `json:"sumHoles"`
	Padding int64     `json:"padding"`
	Rows    []dumpRow `json:"rows"`

	open, close string // the listing's first and last lines
}

var dumpCommand = &cli.Command{
	Name:    "dump",
	Summary: "pahole-style listing of structs from LIB's DWARF",
	Usage:   []string{"[--json] LIB [STRUCT...]"},
	Doc: `Lists structs from LIB's DWARF the way pahole does: each member's offset
(from the start of the outermost struct) and size, its type and name, holes
("/* XXX 4 bytes hole */") and the total size. Members of anonymous structs
and unions, and of members whose struct type has no name, are listed inline,
indented. STRUCT names a struct, class or typedef'd struct (any, not only
the ring stage's); the default is the six the ring stage touches:
` + "  ncclRing ncclChannel ncclTopoRanks ncclTopoGraph ncclTopoSystem ncclComm" + `

In ncclTopoRanks (a fragment), the member over +832..+895 is followed by
the words of the ring stage's record (D25, struct nccomRingRecord in
include/nccom_ring.h) that this library keeps there, or by a note saying
which member of LIB is there instead.
`,
	Setup: func(fs *flag.FlagSet) func(*cli.Invocation) int {
		asJSON := fs.Bool("json", false, "the listing as JSON: per struct its rows (member, hole, padding) with depth, name, type, offset and size")
		return func(inv *cli.Invocation) int { return runDump(inv, *asJSON) }
	},
}

func runDump(inv *cli.Invocation, asJSON bool) int {
	ops, stdout, stderr := inv.Operands, inv.Stdout, inv.Stderr
	if len(ops) < 1 {
		return inv.UsageError("give LIB")
	}
	names := ops[1:]
	if len(names) == 0 {
		names = abicheck.RingStageStructs
	}
	dumps, err := dumpLibrary(ops[0], names)
	if err != nil {
		if asJSON {
			writeJSONError(stdout, ops[0], err)
		}
		return reportError(stderr, "dump", err)
	}
	if asJSON {
		if err := writeJSON(stdout, dumps); err != nil {
			return reportError(stderr, "dump", err)
		}
		return cli.ExitOK
	}
	for i, ds := range dumps {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		printDump(stdout, ds)
	}
	return cli.ExitOK
}

func dumpLibrary(path string, names []string) ([]*dumpedStruct, error) {
	defs, _, err := abicheck.ReadStructs(path, names)
	if err != nil {
		return nil, err
	}
	var out []*dumpedStruct
	for _, n := range names {
		out = append(out, dumpStruct(defs[n]))
	}
	return out, nil
}

// dumpStruct lays def out row by row.
func dumpStruct(def *abicheck.StructDef) *dumpedStruct {
	ds := &dumpedStruct{Struct: def.Name, FoundAs: def.Found, Size: def.Type.Size(), Members: len(def.Type.Field)}
	ds.Rows = layoutRows(def.Type, 0, 0, ds)
	if def.Name == "ncclTopoRanks" {
		ds.Rows = annotateRecord(ds.Rows)
	}
	// Spell the head as the source would: a typedef'd anonymous struct as
	// pahole prints it, a typedef of a named struct as that struct.
	ds.open, ds.close = def.Found+" {", "};"
	if typedef, ok := strings.CutPrefix(def.Found, "typedef "); ok {
		if def.Type.StructName == "" {
			ds.open, ds.close = "typedef "+def.Type.Kind+" {", "} "+typedef+";"
		} else {
			ds.open = "/* " + def.Found + " */\n" + def.Type.Kind + " " + abicheck.QuoteName(def.Type.StructName) + " {"
		}
	}
	return ds
}

// layoutRows lists st's members at base, recursing into members whose type
// is an anonymous struct or union (abicheck's types nest at most
// MaxTypeDepth; deeper is not listed). Holes count in structs only: a
// union's members all start at its start.
func layoutRows(st *dwarf.StructType, base int64, depth int, ds *dumpedStruct) []dumpRow {
	if depth > abicheck.MaxTypeDepth {
		return nil
	}
	fields := append([]*dwarf.StructField(nil), st.Field...)
	sort.SliceStable(fields, func(i, j int) bool { return abicheck.MemberOffset(fields[i]) < abicheck.MemberOffset(fields[j]) })
	var rows []dumpRow
	end := base // the first byte after the members so far
	for _, f := range fields {
		off := base + abicheck.MemberOffset(f)
		size := f.Type.Size()
		if st.Kind != "union" && off > end {
			rows = append(rows, dumpRow{Kind: "hole", Depth: depth, Offset: end, Size: off - end})
			if depth == 0 {
				ds.Holes++
				ds.SumHole += off - end
			}
		}
		typ, decl := abicheck.CDecl(f.Type, abicheck.QuoteName(f.Name))
		row := dumpRow{Kind: "member", Depth: depth, Type: typ, Name: decl, Offset: off, Size: size, Bits: f.BitSize}
		inner, inline := abicheck.AnonymousAggregate(f.Type)
		row.Inline = inline
		rows = append(rows, row)
		if inline {
			rows = append(rows, layoutRows(inner, off, depth+1, ds)...)
		}
		if e := off + size; e > end {
			end = e
		}
	}
	if st.Kind != "union" && base+st.Size() > end {
		rows = append(rows, dumpRow{Kind: "padding", Depth: depth, Offset: end, Size: base + st.Size() - end})
		if depth == 0 {
			ds.Padding = base + st.Size() - end
		}
	}
	return rows
}

// recordWords are struct nccomRingRecord's words (include/nccom_ring.h),
// from its Go mirror so that the listing cannot drift from the header.
var recordWords = func() []dumpRow {
	var rows []dumpRow
	t := reflect.TypeOf(abi.Record{})
	for i := range t.NumField() {
		f := t.Field(i)
		typ, name := "int", f.Name
		elem := f.Type
		if elem.Kind() == reflect.Array {
			name = fmt.Sprintf("%s[%d]", name, elem.Len())
			elem = elem.Elem()
		}
		if elem.Kind() == reflect.Uint32 {
			typ = "unsigned"
		}
		// The header's names are the mirror's with a lower-case first
		// letter (JbogID is the one initialism: jbogId).
		name = strings.ToLower(name[:1]) + strings.Replace(name[1:], "ID", "Id", 1)
		rows = append(rows, dumpRow{Kind: "record", Type: typ, Name: name,
			Offset: abi.RecordOffset + int64(f.Offset), Size: int64(f.Type.Size())})
	}
	return rows
}()

// annotateRecord puts the record's words (D25) after the member of
// ncclTopoRanks whose bytes hold all of +832..+895 (treeToChild1 in
// libnccom 2.31.24), one level deeper; when no member does, a note naming
// what LIB has at +832.
func annotateRecord(rows []dumpRow) []dumpRow {
	first, size := int64(abi.RecordOffset), int64(unsafe.Sizeof(abi.Record{}))
	for i, r := range rows {
		if r.Kind != "member" || r.Inline || r.Offset > first || r.Offset+r.Size < first+size {
			continue
		}
		words := make([]dumpRow, len(recordWords))
		for j, w := range recordWords {
			w.Depth = r.Depth + 1
			words[j] = w
		}
		return append(rows[:i+1], append(words, rows[i+1:]...)...)
	}
	what := "nothing"
	for _, r := range rows {
		if r.Kind == "member" && !r.Inline && r.Offset <= first && first < r.Offset+r.Size {
			what = fmt.Sprintf("%s at +%d (%d bytes)", r.Name, r.Offset, r.Size)
		}
	}
	note := fmt.Sprintf("the ring stage's record (D25) needs +%d..+%d inside one member; LIB has %s there", first, first+size-1, what)
	return append(rows, dumpRow{Kind: "note", Name: note, Offset: first, Size: size})
}

// printDump prints ds in pahole's shape: an inline aggregate opens with
// "union {" and closes with "} name;" carrying its offset and size.
func printDump(w io.Writer, ds *dumpedStruct) {
	fmt.Fprintln(w, ds.open)
	var open []dumpRow // inline aggregates not yet closed
	closeTo := func(depth int) {
		for len(open) > 0 && open[len(open)-1].Depth >= depth {
			r := open[len(open)-1]
			open = open[:len(open)-1]
			printLine(w, r.Depth, "}", r.Name, r.Offset, r.Size)
		}
	}
	inRecord := false
	for _, r := range ds.Rows {
		closeTo(r.Depth)
		inRecord = inRecord && r.Kind == "record"
		switch r.Kind {
		case "hole":
			fmt.Fprintf(w, "\n%s/* XXX %d bytes hole */\n\n", indent(r.Depth), r.Size)
		case "padding":
			fmt.Fprintf(w, "\n%s/* XXX %d bytes padding */\n", indent(r.Depth), r.Size)
		case "record":
			if !inRecord {
				fmt.Fprintf(w, "%s/* libnccomring's record (D25), struct nccomRingRecord: */\n", indent(r.Depth))
				inRecord = true
			}
			fmt.Fprintf(w, "%s/* %-8s %-18s %5d %5d */\n", indent(r.Depth), r.Type, r.Name+";", r.Offset, r.Size)
			continue
		case "note":
			fmt.Fprintf(w, "\n%s/* XXX %s */\n", indent(r.Depth), r.Name)
		case "member":
			if r.Inline {
				fmt.Fprintf(w, "%s%s {\n", indent(r.Depth), strings.TrimSuffix(r.Type, " {...}"))
				open = append(open, r)
				continue
			}
			name := r.Name
			if r.Bits > 0 {
				name = fmt.Sprintf("%s:%d", name, r.Bits)
			}
			printLine(w, r.Depth, r.Type, name, r.Offset, r.Size)
		}
	}
	closeTo(0)
	fmt.Fprintf(w, "\n\t/* size: %d, members: %d, holes: %d, sum holes: %d, padding: %d */\n%s\n",
		ds.Size, ds.Members, ds.Holes, ds.SumHole, ds.Padding, ds.close)
}

func printLine(w io.Writer, depth int, typ, name string, off, size int64) {
	col := 26 - 8*depth // keep the names' column as pahole does for its first levels
	if col < 8 {
		col = 8
	}
	decl := fmt.Sprintf("%-*s %s;", col, typ, name)
	if typ == "}" { // the end of an inline aggregate: "};" or "} gpu;"
		decl = strings.TrimSpace("} "+name) + ";"
	}
	width := 48 - 8*depth
	if width < 0 {
		width = 0
	}
	fmt.Fprintf(w, "%s%-*s /* %5d %5d */\n", indent(depth), width, decl, off, size)
}

func indent(depth int) string { return strings.Repeat("\t", depth+1) }
