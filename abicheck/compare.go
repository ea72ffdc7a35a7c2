package abicheck

import (
	"debug/dwarf"
	"fmt"

	"github.com/nccomring/libnccomring/layout"
)

// Field statuses, as nccom-abi's table and --json spell them.
const (
	StatusOK      = "ok"
	StatusMoved   = "MOVED"
	StatusResized = "RESIZED"
	StatusBoth    = "MOVED, RESIZED"
	StatusMissing = "MISSING"
)

// SizeCheck is one struct's sizeof against layout/.
type SizeCheck struct {
	Struct       string `json:"struct"`
	FoundAs      string `json:"foundAs"`
	ExpectedSize int    `json:"expectedSize"`      // 0: layout/ documents no size (ncclTopoSystem)
	AtLeast      bool   `json:"atLeast,omitempty"` // layout/ has a prefix view: LIB's may be larger
	ActualSize   int64  `json:"actualSize"`
	OK           bool   `json:"ok"`
	Source       string `json:"-"` // where the expected size comes from, e.g. "D2"
}

// FieldCheck is one expected field against LIB.
type FieldCheck struct {
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

// Report is everything a comparison found.
type Report struct {
	Library    string       `json:"library"`
	BuildID    string       `json:"buildId"`
	OK         bool         `json:"ok"`
	Structs    []SizeCheck  `json:"structs"`
	Fields     []FieldCheck `json:"fields"`
	Mismatches []string     `json:"mismatches"`
}

// MinSizes are layout/'s prefix views: the struct LIB defines holds more
// than the ring stage's fields, so only a smaller one is a finding (D3:
// ncclComm is at least CommMinSize, enablePod's end).
var MinSizes = map[string]int{"ncclComm": layout.CommMinSize}

// ExpectedFields is layout.Fields with the ASSUMED ncclComm fields at the
// offsets in use: D3's, or a layout profile's (NCCOM_RING_LAYOUT).
// Documented fields are never moved.
func ExpectedFields(assumed layout.CommOffsets) []layout.Field {
	at := map[string]int{
		"topo": assumed.Topo, "rank": assumed.Rank, "nRanks": assumed.NRanks,
		"node": assumed.Node, "nNodes": assumed.NNodes, "nChannels": assumed.NChannels,
	}
	fields := append([]layout.Field(nil), layout.Fields...)
	for i, f := range fields {
		if off, ok := at[f.Name]; ok && f.Struct == "ncclComm" && f.Grade == layout.Assumed {
			fields[i].Offset = off
		}
	}
	return fields
}

// Compare compares defs (which must hold every RingStageStructs name) with
// layout.Structs and with the fields layout/ documents, the ASSUMED
// ncclComm fields taken at assumed. The report's Mismatches are phrased
// for nccom-abi, which compares with D3 ("layout/ has ...").
func Compare(defs map[string]*StructDef, assumed layout.CommOffsets) *Report {
	rep := &Report{OK: true, Mismatches: []string{}}
	for _, name := range RingStageStructs {
		sc := compareSize(defs[name])
		if msg := describeSize(sc); msg != "" {
			rep.addMismatch(msg)
		}
		rep.Structs = append(rep.Structs, sc)
	}
	for _, f := range ExpectedFields(assumed) {
		fc := CompareField(defs[f.Struct].Type, f)
		if fc.Status != StatusOK {
			rep.addMismatch(DescribeMismatch(fc))
		}
		rep.Fields = append(rep.Fields, fc)
	}
	return rep
}

func compareSize(def *StructDef) SizeCheck {
	name := def.Name
	sc := SizeCheck{Struct: name, FoundAs: def.Found, ActualSize: def.Type.Size(), OK: true}
	if min, ok := MinSizes[name]; ok {
		sc.ExpectedSize, sc.AtLeast, sc.Source = min, true, "D3"
		sc.OK = sc.ActualSize >= int64(min)
		return sc
	}
	for _, s := range layout.Structs {
		if s.Name == name {
			sc.ExpectedSize, sc.Source = s.Size, s.Source
			sc.OK = sc.ActualSize == int64(s.Size)
		}
	}
	return sc
}

func describeSize(sc SizeCheck) string {
	switch {
	case sc.OK:
		return ""
	case sc.AtLeast:
		return fmt.Sprintf("%s: sizeof is %d, layout/ needs at least %d (%s)", sc.Struct, sc.ActualSize, sc.ExpectedSize, sc.Source)
	default:
		return fmt.Sprintf("%s: sizeof is %d, layout/ has %d (%s)", sc.Struct, sc.ActualSize, sc.ExpectedSize, sc.Source)
	}
}

func (r *Report) addMismatch(msg string) {
	r.OK = false
	r.Mismatches = append(r.Mismatches, msg)
}

// OnlyAssumedDiffer says whether every difference in r is in an ASSUMED
// field (every size and documented field matches).
func (r *Report) OnlyAssumedDiffer() bool { return OnlyAssumedDiffer(r.Structs, r.Fields) }

// OnlyAssumedDiffer says whether every difference among structs and
// fields is in an ASSUMED field.
func OnlyAssumedDiffer(structs []SizeCheck, fields []FieldCheck) bool {
	for _, s := range structs {
		if !s.OK {
			return false
		}
	}
	for _, f := range fields {
		if f.Status != StatusOK && f.Grade != string(layout.Assumed) {
			return false
		}
	}
	return true
}

// CompareField looks f up in st and says how LIB's field differs.
func CompareField(st *dwarf.StructType, f layout.Field) FieldCheck {
	fc := FieldCheck{
		Struct: f.Struct, Field: f.Name, Grade: string(f.Grade),
		ExpectedOffset: f.Offset, ExpectedSize: f.Size,
	}
	loc, err := LookupField(st, f.Name)
	if err != nil {
		fc.Status = StatusMissing
		if name, at, size, typ, ok := leafAt(st, 0, int64(f.Offset), 0); ok {
			fc.Note = fmt.Sprintf("LIB has %s %s at +%d (%d bytes)", CTypeName(typ), QuoteName(name), at, size)
		} else {
			fc.Note = "LIB has nothing at that offset"
		}
		return fc
	}
	fc.ActualOffset, fc.ActualSize = &loc.Offset, &loc.Size
	fc.Type = CTypeName(loc.Type)
	moved := loc.Offset != int64(f.Offset)
	resized := loc.Size != int64(f.Size)
	switch {
	case moved && resized:
		fc.Status = StatusBoth
	case moved:
		fc.Status = StatusMoved
	case resized:
		fc.Status = StatusResized
	default:
		fc.Status = StatusOK
	}
	return fc
}

// DescribeMismatch is nccom-abi's line for a field that differs.
func DescribeMismatch(fc FieldCheck) string {
	name := fmt.Sprintf("%s.%s (%s)", fc.Struct, fc.Field, fc.Grade)
	if fc.Status == StatusMissing {
		return fmt.Sprintf("%s: not in LIB's %s; layout/ has +%d (%d bytes); %s: renamed?",
			name, fc.Struct, fc.ExpectedOffset, fc.ExpectedSize, fc.Note)
	}
	return fmt.Sprintf("%s: LIB has +%d (%d bytes), layout/ has +%d (%d bytes)",
		name, *fc.ActualOffset, *fc.ActualSize, fc.ExpectedOffset, fc.ExpectedSize)
}

// CheckFile opens path and compares its ring-stage structs with layout/,
// the ASSUMED ncclComm fields taken at assumed (ReadStructs: within the
// limits and ReadTimeout).
func CheckFile(path string, assumed layout.CommOffsets) (*Report, error) {
	defs, buildID, err := ReadStructs(path, RingStageStructs)
	if err != nil {
		return nil, err
	}
	rep := Compare(defs, assumed)
	rep.Library, rep.BuildID = path, buildID
	return rep, nil
}
