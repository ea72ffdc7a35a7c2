package main

import (
	"bytes"
	"debug/dwarf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/nccomring/libnccomring/layout"
)

const checkUsage = `check [--json] LIB

Finds ncclRing, ncclChannel, ncclTopoRanks, ncclTopoGraph, ncclTopoSystem and
ncclComm in LIB's DWARF (structs and classes, in namespaces or not, typedef'd
anonymous structs, fields inside anonymous unions) and compares each struct's
size and every field the ring stage reads or writes with layout/, the table
of the README's "The ABI". Prints the offsets LIB has for the ASSUMED (D3)
ncclComm fields. ncclComm may be larger than layout/'s prefix view, not
smaller.

Flags:
  --json   one JSON object on stdout instead of the tables (on unusable
           input: {"library", "error", "hint"})

`

// Field statuses, as the table and --json spell them.
const (
	statusOK      = "ok"
	statusMoved   = "MOVED"
	statusResized = "RESIZED"
	statusBoth    = "MOVED, RESIZED"
	statusMissing = "MISSING"
)

// sizeCheck is one struct's sizeof against layout/.
type sizeCheck struct {
	Struct       string `json:"struct"`
	FoundAs      string `json:"foundAs"`
	ExpectedSize int    `json:"expectedSize"`      // 0: layout/ documents no size (ncclTopoSystem)
	AtLeast      bool   `json:"atLeast,omitempty"` // layout/ has a prefix view: LIB's may be larger
	ActualSize   int64  `json:"actualSize"`
	OK           bool   `json:"ok"`
}

// fieldCheck is one layout/ field against LIB.
type fieldCheck struct {
	Struct         string `json:"struct"`
	Field          string `json:"field"`
	Grade          string `json:"grade"`
	ExpectedOffset int    `json:"expectedOffset"`
	ExpectedSize   int    `json:"expectedSize"`
	ActualOffset   *int64 `json:"actualOffset"` // null: LIB's struct has no such field
	ActualSize     *int64 `json:"actualSize"`
	Type           string `json:"type,omitempty"` // its C type in LIB
	Status         string `json:"status"`
	Note           string `json:"note,omitempty"` // for a missing field: what LIB has at that offset
}

// checkReport is everything `check` found; --json prints it as is.
type checkReport struct {
	Library    string       `json:"library"`
	BuildID    string       `json:"buildId"`
	OK         bool         `json:"ok"`
	Structs    []sizeCheck  `json:"structs"`
	Fields     []fieldCheck `json:"fields"`
	Assumed    offsets      `json:"assumed"` // LIB's offsets of the ASSUMED fields, layout/'s order
	Mismatches []string     `json:"mismatches"`
}

// namedOffset and offsets keep layout/'s field order in JSON objects
// (encoding/json sorts map keys).
type namedOffset struct {
	Name   string
	Offset int64
}

type offsets []namedOffset

func (o offsets) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		name, err := json.Marshal(f.Name)
		if err != nil {
			return nil, err
		}
		b.Write(name)
		b.WriteByte(':')
		b.WriteString(strconv.FormatInt(f.Offset, 10))
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// minSizes are layout/'s prefix views: the struct LIB defines holds more
// than the ring stage's fields, so only a smaller one is a finding (D3:
// ncclComm is at least CommMinSize, enablePod's end).
var minSizes = map[string]int{"ncclComm": layout.CommMinSize}

// compareLayout compares defs (which must hold every ringStageStructs name)
// with layout.Structs and layout.Fields.
func compareLayout(defs map[string]*structDef) *checkReport {
	rep := &checkReport{OK: true, Mismatches: []string{}}
	documented := make(map[string]layout.Struct)
	for _, s := range layout.Structs {
		documented[s.Name] = s
	}
	for _, name := range ringStageStructs {
		def := defs[name]
		sc := sizeCheck{Struct: name, FoundAs: def.Found, ActualSize: def.Type.Size(), OK: true}
		if min, ok := minSizes[name]; ok {
			sc.ExpectedSize, sc.AtLeast = min, true
			if sc.ActualSize < int64(min) {
				sc.OK = false
				rep.addMismatch(fmt.Sprintf("%s: sizeof is %d, layout/ needs at least %d (D3)", name, sc.ActualSize, min))
			}
		} else if s, ok := documented[name]; ok {
			sc.ExpectedSize = s.Size
			if sc.ActualSize != int64(s.Size) {
				sc.OK = false
				rep.addMismatch(fmt.Sprintf("%s: sizeof is %d, layout/ has %d (%s)", name, sc.ActualSize, s.Size, s.Source))
			}
		}
		rep.Structs = append(rep.Structs, sc)
	}
	for _, f := range layout.Fields {
		fc := compareField(defs[f.Struct].Type, f)
		if fc.Status != statusOK {
			rep.addMismatch(describeMismatch(fc))
		}
		if f.Grade == layout.Assumed && fc.ActualOffset != nil {
			rep.Assumed = append(rep.Assumed, namedOffset{f.Name, *fc.ActualOffset})
		}
		rep.Fields = append(rep.Fields, fc)
	}
	if rep.Assumed == nil {
		rep.Assumed = offsets{}
	}
	return rep
}

func (r *checkReport) addMismatch(msg string) {
	r.OK = false
	r.Mismatches = append(r.Mismatches, msg)
}

func compareField(st *dwarf.StructType, f layout.Field) fieldCheck {
	fc := fieldCheck{
		Struct: f.Struct, Field: f.Name, Grade: string(f.Grade),
		ExpectedOffset: f.Offset, ExpectedSize: f.Size,
	}
	loc, err := lookupField(st, f.Name)
	if err != nil {
		fc.Status = statusMissing
		if name, at, size, typ, ok := leafAt(st, 0, int64(f.Offset)); ok {
			fc.Note = fmt.Sprintf("LIB has %s %s at +%d (%d bytes)", cTypeName(typ), name, at, size)
		} else {
			fc.Note = "LIB has nothing at that offset"
		}
		return fc
	}
	fc.ActualOffset, fc.ActualSize = &loc.Offset, &loc.Size
	fc.Type = cTypeName(loc.Type)
	moved := loc.Offset != int64(f.Offset)
	resized := loc.Size != int64(f.Size)
	switch {
	case moved && resized:
		fc.Status = statusBoth
	case moved:
		fc.Status = statusMoved
	case resized:
		fc.Status = statusResized
	default:
		fc.Status = statusOK
	}
	return fc
}

func describeMismatch(fc fieldCheck) string {
	name := fmt.Sprintf("%s.%s (%s)", fc.Struct, fc.Field, fc.Grade)
	if fc.Status == statusMissing {
		return fmt.Sprintf("%s: not in LIB's %s; layout/ has +%d (%d bytes); %s: renamed?",
			name, fc.Struct, fc.ExpectedOffset, fc.ExpectedSize, fc.Note)
	}
	return fmt.Sprintf("%s: LIB has +%d (%d bytes), layout/ has +%d (%d bytes)",
		name, *fc.ActualOffset, *fc.ActualSize, fc.ExpectedOffset, fc.ExpectedSize)
}

// advice says what a mismatch means for running libnccomring over LIB.
func advice(rep *checkReport) string {
	onlyAssumed := true
	for _, s := range rep.Structs {
		if !s.OK {
			onlyAssumed = false
		}
	}
	for _, f := range rep.Fields {
		if f.Status != statusOK && f.Grade != string(layout.Assumed) {
			onlyAssumed = false
		}
	}
	if onlyAssumed {
		return "Only ASSUMED (D3) fields differ: write this build's offsets with\n" +
			"  nccom-abi profile LIB > layout.json\n" +
			"and run with NCCOM_RING_LAYOUT=layout.json. Without it, the ring stage\n" +
			"would read and write the wrong bytes of this build's ncclComm."
	}
	return "Documented (D2) sizes or fields differ: this libnccom does not have\n" +
		"libnccom 2.31.24's ring-stage ABI, and no layout file can change that;\n" +
		"do not preload libnccomring over it."
}

func runCheck(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("check")
	jsonOut := fs.Bool("json", false, "")
	ops, code, ok := parseArgs(fs, args, stdout, stderr)
	if !ok {
		return code
	}
	if len(ops) != 1 {
		return usageError(stderr, "check", "give exactly one LIB")
	}
	rep, err := checkLibrary(ops[0])
	if err != nil {
		if *jsonOut {
			writeJSONError(stdout, ops[0], err)
		}
		return reportError(stderr, "check", err)
	}
	if *jsonOut {
		if err := writeJSON(stdout, rep); err != nil {
			return reportError(stderr, "check", err)
		}
	} else {
		printCheck(stdout, rep)
	}
	if !rep.OK {
		return exitFinding
	}
	return exitOK
}

// checkLibrary opens path and compares its DWARF with layout/.
func checkLibrary(path string) (*checkReport, error) {
	defs, buildID, err := readStructs(path, ringStageStructs)
	if err != nil {
		return nil, err
	}
	rep := compareLayout(defs)
	rep.Library, rep.BuildID = path, buildID
	return rep, nil
}

// findRequired finds names in d; any missing one makes the input unusable.
func findRequired(d *dwarf.Data, names []string, path string) (map[string]*structDef, error) {
	defs, declared, err := findStructs(d, names)
	if err != nil {
		return nil, &unusableError{what: fmt.Sprintf("%s: %v", path, err), hint: "the DWARF is damaged; rebuild libnccom with -g"}
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
		return nil, &unusableError{
			what: fmt.Sprintf("%s: no definition of %s in its DWARF", path, strings.Join(missing, ", ")),
			hint: "is this libnccom? Its translation units that define these structs must be built with -g (not only some of them)",
		}
	}
	return defs, nil
}

func printCheck(w io.Writer, rep *checkReport) {
	fmt.Fprintf(w, "library   %s\n", rep.Library)
	if rep.BuildID != "" {
		fmt.Fprintf(w, "build ID  %s\n", rep.BuildID)
	}
	fmt.Fprintln(w)

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STRUCT\tFOUND AS\tSIZE\tLAYOUT/\tSTATUS")
	for _, s := range rep.Structs {
		want := "-"
		switch {
		case s.AtLeast:
			want = fmt.Sprintf(">= %d", s.ExpectedSize)
		case s.ExpectedSize > 0:
			want = strconv.Itoa(s.ExpectedSize)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", s.Struct, s.FoundAs, s.ActualSize, want, okWord(s.OK))
	}
	tw.Flush()
	fmt.Fprintln(w)

	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "FIELD\tGRADE\tLAYOUT/\tLIB\tTYPE IN LIB\tSTATUS")
	for _, f := range rep.Fields {
		actual := "-"
		if f.ActualOffset != nil {
			actual = fmt.Sprintf("+%d (%d)", *f.ActualOffset, *f.ActualSize)
		}
		fmt.Fprintf(tw, "%s.%s\t%s\t+%d (%d)\t%s\t%s\t%s\n", f.Struct, f.Field, f.Grade,
			f.ExpectedOffset, f.ExpectedSize, actual, f.Type, f.Status)
	}
	tw.Flush()
	fmt.Fprintln(w)

	var assumed []string
	for _, a := range rep.Assumed {
		assumed = append(assumed, fmt.Sprintf("%s +%d", a.Name, a.Offset))
	}
	fmt.Fprintf(w, "ASSUMED (D3) ncclComm fields in this build: %s\n", strings.Join(assumed, ", "))
	if rep.OK {
		fmt.Fprintf(w, "ok: %d sizes and %d fields match layout/\n", len(rep.Structs), len(rep.Fields))
		return
	}
	noun := "mismatches"
	if len(rep.Mismatches) == 1 {
		noun = "mismatch"
	}
	fmt.Fprintf(w, "\n%d %s:\n", len(rep.Mismatches), noun)
	for _, m := range rep.Mismatches {
		fmt.Fprintf(w, "  %s\n", m)
	}
	fmt.Fprintf(w, "\n%s\n", advice(rep))
}

func okWord(ok bool) string {
	if ok {
		return statusOK
	}
	return "MISMATCH"
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// writeJSONError is --json's answer on unusable input, so a tool reading
// stdout gets JSON either way.
func writeJSONError(w io.Writer, path string, err error) {
	out := struct {
		Library string `json:"library"`
		Error   string `json:"error"`
		Hint    string `json:"hint,omitempty"`
	}{Library: path, Error: err.Error()}
	var ue *unusableError
	if errors.As(err, &ue) {
		out.Error, out.Hint = ue.what, ue.hint
	}
	_ = writeJSON(w, out)
}
