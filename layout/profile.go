package layout

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// CommOffsets are the byte offsets in ncclComm of the six fields D3
// assumes (topo, a pointer; the rest ints). A libnccom build that places
// them elsewhere is described by a layout profile (`nccom-abi profile LIB`,
// read with NCCOM_RING_LAYOUT); the documented fields are never movable.
type CommOffsets struct {
	Topo      int `json:"topo"`
	Rank      int `json:"rank"`
	NRanks    int `json:"nRanks"`
	Node      int `json:"node"`
	NNodes    int `json:"nNodes"`
	NChannels int `json:"nChannels"`
}

// D3Offsets are the offsets D3 assumes, the default.
var D3Offsets = CommOffsets{CommTopo, CommRank, CommNRanks, CommNode, CommNNodes, CommNChannels}

// MaxCommOffset bounds a profile's offsets: far beyond any ncclComm, so that
// a typo cannot send the library to read and write at random.
const MaxCommOffset = 1 << 20

// ParseProfile reads a layout profile, the JSON `nccom-abi profile` prints
// ({"ncclComm": {"topo": 17552, "rank": 17616, ...}, "source": ...,
// "buildId": ...}), and validates it (Validate). Every one of the six
// fields must be given; unknown fields in "ncclComm" are an error.
func ParseProfile(data []byte) (CommOffsets, error) {
	var file struct {
		Comm json.RawMessage `json:"ncclComm"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		return CommOffsets{}, fmt.Errorf("not a layout profile: %v", err)
	}
	if file.Comm == nil {
		return CommOffsets{}, fmt.Errorf("no \"ncclComm\" object")
	}
	// Absent fields must be caught: -1 is no offset any field can have.
	o := CommOffsets{-1, -1, -1, -1, -1, -1}
	dec := json.NewDecoder(bytes.NewReader(file.Comm))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		return CommOffsets{}, fmt.Errorf("ncclComm: %v", err)
	}
	return o, o.Validate()
}

// assumedFields pairs each field with its name and size.
func (o CommOffsets) assumedFields() []Field {
	return []Field{
		{"ncclComm", "topo", o.Topo, ptrSize, Assumed, "profile"},
		{"ncclComm", "rank", o.Rank, intSize, Assumed, "profile"},
		{"ncclComm", "nRanks", o.NRanks, intSize, Assumed, "profile"},
		{"ncclComm", "node", o.Node, intSize, Assumed, "profile"},
		{"ncclComm", "nNodes", o.NNodes, intSize, Assumed, "profile"},
		{"ncclComm", "nChannels", o.NChannels, intSize, Assumed, "profile"},
	}
}

// Validate checks that every offset is given, in [0, MaxCommOffset),
// aligned to its field's size, clear of every documented ncclComm field
// and of the other five.
func (o CommOffsets) Validate() error {
	fields := o.assumedFields()
	for i, f := range fields {
		switch {
		case f.Offset == -1:
			return fmt.Errorf("ncclComm.%s is missing", f.Name)
		case f.Offset < 0 || f.Offset+f.Size > MaxCommOffset:
			return fmt.Errorf("ncclComm.%s at +%d is outside [0, %d)", f.Name, f.Offset, MaxCommOffset)
		case f.Offset%f.Size != 0:
			return fmt.Errorf("ncclComm.%s at +%d is not aligned to its %d bytes", f.Name, f.Offset, f.Size)
		}
		for _, d := range Fields {
			if d.Struct == "ncclComm" && d.Grade != Assumed && overlaps(f, d) {
				return fmt.Errorf("ncclComm.%s at +%d overlaps the documented ncclComm.%s (+%d, %d bytes), which no profile can move", f.Name, f.Offset, d.Name, d.Offset, d.Size)
			}
		}
		for _, g := range fields[:i] {
			if overlaps(f, g) {
				return fmt.Errorf("ncclComm.%s at +%d overlaps ncclComm.%s at +%d", f.Name, f.Offset, g.Name, g.Offset)
			}
		}
	}
	return nil
}

func overlaps(a, b Field) bool { return a.Offset < b.Offset+b.Size && b.Offset < a.Offset+a.Size }
