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

// MaxCommOffset bounds a profile's offsets and the sizeof(ncclComm) it
// declares: far beyond any ncclComm, so that a typo cannot send the
// library to read and write at random.
const MaxCommOffset = 1 << 20

// MaxProfileSize is the most bytes a layout profile may have: the one
// `nccom-abi profile` writes has about 300. A larger file (or /dev/zero)
// is refused, not read to its end.
const MaxProfileSize = 64 << 10

// Profile is a layout profile, the file `nccom-abi profile LIB` writes
// and NCCOM_RING_LAYOUT names:
//
//	{"ncclComm": {"topo": 17552, "rank": 17616, ...},
//	 "sizeof": {"ncclComm": 19224},
//	 "source": "/opt/.../libnccom.so.2",
//	 "buildId": "9c00176c..."}
type Profile struct {
	Comm     CommOffsets
	CommSize int    // sizeof(ncclComm) in the build it describes
	BuildID  string // that build's GNU build ID, lowercase hex; "" when it has none
	Source   string // the path it was written from, for messages
}

// ParseProfile reads a layout profile and validates it: every one of the
// six fields given (unknown fields in "ncclComm" are an error), the
// build's sizeof(ncclComm) given, at least CommMinSize and at most
// MaxCommOffset, and each offset inside it (Validate, against that
// size). The build ID is read, not checked: that needs the process's
// mapped libnccom (cmd/libnccomring/commlayout.go).
func ParseProfile(data []byte) (Profile, error) {
	var file struct {
		Comm    json.RawMessage `json:"ncclComm"`
		Sizeof  json.RawMessage `json:"sizeof"`
		Source  string          `json:"source"`
		BuildID string          `json:"buildId"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		return Profile{}, fmt.Errorf("not a layout profile: %v", err)
	}
	if file.Comm == nil {
		return Profile{}, fmt.Errorf("no \"ncclComm\" object")
	}
	// Absent fields must be caught: -1 is no offset any field can have.
	o := CommOffsets{-1, -1, -1, -1, -1, -1}
	dec := json.NewDecoder(bytes.NewReader(file.Comm))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		return Profile{}, fmt.Errorf("ncclComm: %v", err)
	}
	if file.Sizeof == nil {
		return Profile{}, fmt.Errorf("no \"sizeof\" object: the profile must say the build's sizeof(ncclComm) (profiles from before issue 21 do not)")
	}
	sizes := struct {
		Comm int `json:"ncclComm"`
	}{-1}
	dec = json.NewDecoder(bytes.NewReader(file.Sizeof))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sizes); err != nil {
		return Profile{}, fmt.Errorf("sizeof: %v", err)
	}
	p := Profile{Comm: o, CommSize: sizes.Comm, BuildID: file.BuildID, Source: file.Source}
	switch {
	case sizes.Comm == -1:
		return p, fmt.Errorf("sizeof.ncclComm is missing")
	case sizes.Comm < CommMinSize || sizes.Comm > MaxCommOffset:
		return p, fmt.Errorf("sizeof.ncclComm %d is outside [%d, %d]: the documented prefix (D3) and the bound on any ncclComm", sizes.Comm, CommMinSize, MaxCommOffset)
	}
	return p, o.validate(sizes.Comm, "sizeof(ncclComm) as the profile declares it")
}

// Inside checks that the profile stays inside a host's ncclComm of size
// bytes, what saying how that size is known (for the message): every field
// ends within it, and, when declared is true (size is the build's own
// sizeof, read from its DWARF), the sizeof the profile declares is no
// larger. The declared sizeof bounds the profile's offsets only; the host
// allocates what its build says, so a profile cannot widen what the
// library reads or writes beyond what is known of that build
// (cmd/libnccomring/commlayout.go, checkProfileBound). The offsets were
// validated (ParseProfile), so no sum overflows.
func (p Profile) Inside(size int, declared bool, what string) error {
	if declared && p.CommSize > size {
		return fmt.Errorf("sizeof.ncclComm %d is more than the %d bytes of %s", p.CommSize, size, what)
	}
	for _, f := range p.Comm.assumedFields() {
		if f.Offset > size-f.Size {
			return fmt.Errorf("ncclComm.%s at +%d (%d bytes) ends past the %d bytes of %s", f.Name, f.Offset, f.Size, size, what)
		}
	}
	return nil
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
func (o CommOffsets) Validate() error { return o.validate(MaxCommOffset, "") }

// validate is Validate with the fields inside [0, size). No sum of an
// offset from the file is formed before it is known to be in range, so
// nothing overflows (an offset of 2^63-4 is out of range, not negative).
func (o CommOffsets) validate(size int, what string) error {
	fields := o.assumedFields()
	for i, f := range fields {
		switch {
		case f.Offset == -1:
			return fmt.Errorf("ncclComm.%s is missing", f.Name)
		case f.Offset < 0 || f.Offset > size-f.Size:
			if what != "" {
				return fmt.Errorf("ncclComm.%s at +%d is outside [0, %d), the %s", f.Name, f.Offset, size, what)
			}
			return fmt.Errorf("ncclComm.%s at +%d is outside [0, %d)", f.Name, f.Offset, size)
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

// overlaps reports whether two fields share a byte. Both are in range
// (at most MaxCommOffset), so the sums cannot overflow.
func overlaps(a, b Field) bool { return a.Offset < b.Offset+b.Size && b.Offset < a.Offset+a.Size }
