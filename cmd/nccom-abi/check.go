package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/nccomring/libnccomring/abicheck"
	"github.com/nccomring/libnccomring/internal/cli"
	"github.com/nccomring/libnccomring/internal/junit"
	"github.com/nccomring/libnccomring/internal/quote"
	"github.com/nccomring/libnccomring/layout"
)

// checkReport is everything `check` found; --json prints it as is.
type checkReport struct {
	Library    string                `json:"library"`
	BuildID    string                `json:"buildId"`
	OK         bool                  `json:"ok"`
	Structs    []abicheck.SizeCheck  `json:"structs"`
	Fields     []abicheck.FieldCheck `json:"fields"`
	Assumed    offsets               `json:"assumed"` // LIB's offsets of the ASSUMED fields, layout/'s order
	Mismatches []string              `json:"mismatches"`
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

// compareLayout compares defs (which must hold every abicheck.RingStageStructs
// name) with layout/ at D3's offsets: the tool checks a build against the
// documented ABI.
func compareLayout(defs map[string]*abicheck.StructDef) *checkReport {
	return newCheckReport(abicheck.Compare(defs, layout.D3Offsets))
}

// newCheckReport adds the offsets LIB has for the ASSUMED fields.
func newCheckReport(r *abicheck.Report) *checkReport {
	rep := &checkReport{
		Library: r.Library, BuildID: r.BuildID, OK: r.OK,
		Structs: r.Structs, Fields: r.Fields, Assumed: offsets{}, Mismatches: r.Mismatches,
	}
	for _, f := range r.Fields {
		if f.Grade == string(layout.Assumed) && f.ActualOffset != nil {
			rep.Assumed = append(rep.Assumed, namedOffset{f.Field, *f.ActualOffset})
		}
	}
	return rep
}

// advice says what a mismatch means for running libnccomring over LIB.
func advice(rep *checkReport) string {
	if abicheck.OnlyAssumedDiffer(rep.Structs, rep.Fields) {
		return "Only ASSUMED (D3) fields differ: write this build's offsets with\n" +
			"  nccom-abi profile LIB > layout.json\n" +
			"and run with NCCOM_RING_LAYOUT=layout.json. Without it, the ring stage\n" +
			"would read and write the wrong bytes of this build's ncclComm."
	}
	return "Documented (D2) sizes or fields differ: this libnccom does not have\n" +
		"libnccom 2.31.24's ring-stage ABI, and no layout file can change that;\n" +
		"do not preload libnccomring over it."
}

var checkCommand = &cli.Command{
	Name:    "check",
	Summary: "compare LIB's ring-stage structs with layout/ (D2, D3)",
	Usage:   []string{"[--json] [--junit FILE] LIB"},
	Doc: `Finds ncclRing, ncclChannel, ncclTopoRanks, ncclTopoGraph, ncclTopoSystem and
ncclComm in LIB's DWARF (structs and classes, in namespaces or not, typedef'd
anonymous structs, fields inside anonymous unions) and compares each struct's
size and every field the ring stage reads or writes with layout/, the table
of docs/abi-notes.md, "The ABI". Prints the offsets LIB has for the ASSUMED (D3)
ncclComm fields. ncclComm may be larger than layout/'s prefix view, not
smaller.
`,
	Setup: judgeSetup(checkLibrary),
}

func (r *checkReport) passed() bool        { return r.OK }
func (r *checkReport) cases() []junit.Case { return checkCases(r) }
func (r *checkReport) print(w io.Writer)   { printCheck(w, r) }

// checkLibrary opens path and compares its DWARF with layout/ (D3's
// offsets: the tool checks a build against the documented ABI).
func checkLibrary(path string) (*checkReport, error) {
	rep, err := abicheck.CheckFile(path, layout.D3Offsets)
	if err != nil {
		return nil, err
	}
	return newCheckReport(rep), nil
}

func printCheck(w io.Writer, rep *checkReport) {
	fmt.Fprintf(w, "library   %s\n", quote.Visible(rep.Library))
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
		return abicheck.StatusOK
	}
	return "MISMATCH"
}

// writeJSON is every --json document, and profile's (cli.WriteJSON).
func writeJSON(w io.Writer, v any) error { return cli.WriteJSON(w, v) }

// writeJSONError is --json's answer on unusable input, so a tool reading
// stdout gets JSON either way.
func writeJSONError(w io.Writer, path string, err error) {
	out := struct {
		Library string `json:"library"`
		Error   string `json:"error"`
		Hint    string `json:"hint,omitempty"`
	}{Library: path, Error: err.Error()}
	var ue *abicheck.UnusableError
	if errors.As(err, &ue) {
		out.Error, out.Hint = ue.What, ue.Hint
	}
	_ = writeJSON(w, out)
}
