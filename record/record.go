// Package record reads and writes the ring stage's record (D25, D27): the
// 64 bytes at +832 of each fragment (include/nccom_ring.h, struct
// nccomRingRecord) that carry, through the AllGather, what Postset must
// decide from the gathered bytes alone: the rank's node-order policy and
// location, the fingerprint of its graph, and the D27 fields (the
// pod-order setting, TRN3-SwitchV1's preconditions). Pure Go; the hashes
// are 32-bit FNV-1a over 32-bit words, least significant byte first, so
// the C reference model and every tool compute the same bytes.
package record

import (
	"unsafe"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/nodeorder"
)

// Fields is what one record says.
type Fields struct {
	Rank        int32 // the writer's comm->rank
	Network     bool  // it asks for NCCOM_RING_NODE_ORDER=network
	PodNode     bool  // NCCOM_RING_POD_ORDER=node (D27)
	SwitchV1    bool  // TRN3-SwitchV1: JbogID and VirtualCoreSize hold its preconditions (D27)
	Location    nodeorder.Location
	Fingerprint uint32 // of the writer's graph
	JbogID      int32
	VirtualCore int32 // nec_get_virtual_core_size()
}

// Carries reports whether f has anything to carry; a record that carries
// nothing is written as its first word, 0.
func (f *Fields) Carries() bool {
	return f.Network || f.PodNode || f.SwitchV1 || f.Location.Found()
}

// Of returns the record inside fragment frag, in place.
func Of(frag *abi.TopoRanks) *abi.Record {
	return (*abi.Record)(unsafe.Add(unsafe.Pointer(frag), abi.RecordOffset))
}

const (
	fnvOffset = 2166136261
	fnvPrime  = 16777619
)

// hashWords folds words into h, each least significant byte first.
func hashWords(h uint32, words ...uint32) uint32 {
	for _, w := range words {
		for range 4 {
			h = (h ^ (w & 0xff)) * fnvPrime
			w >>= 8
		}
	}
	return h
}

// Fingerprint is the hash of graph's channel count and of the NICs of its
// channels (inter[0 .. 2 nChannels), capped at inter's 64 entries): two
// nodes with the same fingerprint give every channel the same NIC pair, so
// reordering them changes no rank's NICs.
func Fingerprint(graph *abi.TopoGraph) uint32 {
	n := int(graph.NChannels)
	h := hashWords(fnvOffset, uint32(n))
	for i := range min(max(2*n, 0), len(graph.Inter)) {
		h = hashWords(h, uint32(graph.Inter[i]))
	}
	return h
}

// checksum is the hash of the record's 16 words, its checksum taken as 0.
func checksum(r *abi.Record) uint32 {
	h := hashWords(fnvOffset, uint32(r.Magic), uint32(r.Version), uint32(r.Rank), uint32(r.Flags),
		r.Fingerprint, uint32(r.JbogID), uint32(r.VirtualCoreSize), 0)
	return hashWords(h, r.Location[:]...)
}

// Write writes f into frag's record, or only its first word, 0, when f
// carries nothing (nil included).
func Write(frag *abi.TopoRanks, f *Fields) {
	r := Of(frag)
	if f == nil || !f.Carries() {
		r.Magic = 0
		return
	}
	flags := int32(f.Location.Levels)<<abi.RecordLevelsShift | bit(f.Network, abi.RecordNetwork) |
		bit(f.PodNode, abi.RecordPodNode) | bit(f.SwitchV1, abi.RecordSwitchV1)
	*r = abi.Record{Magic: abi.RecordMagic, Version: abi.RecordVersion, Rank: f.Rank, Flags: flags,
		Fingerprint: f.Fingerprint, JbogID: f.JbogID, VirtualCoreSize: f.VirtualCore, Location: f.Location.Hash}
	r.Checksum = checksum(r)
}

func bit(on bool, b int32) int32 {
	if on {
		return b
	}
	return 0
}

// AsksNetwork reports whether frag's record has the magic and the
// network-order flag, without the other checks Read makes. It reads only
// the record's first 16 bytes, so a caller can skip every Read of a job in
// which no fragment's answer is true: none of them holds a valid record
// that asks for the network order.
func AsksNetwork(frag *abi.TopoRanks) bool {
	r := Of(frag)
	return r.Magic == abi.RecordMagic && r.Flags&abi.RecordNetwork != 0
}

// Read returns what frag's record says, and false when it holds none (its
// first word is not the magic) or is not valid: another version, a
// checksum that does not match, a writer rank that is not slot (the rank
// whose slot of the AllGather frag is), a level count above 8 or unused
// location words that are not 0. It reads only the first word of a
// fragment without a record.
func Read(frag *abi.TopoRanks, slot int32) (Fields, bool) {
	r := Of(frag)
	if r.Magic != abi.RecordMagic {
		return Fields{}, false
	}
	levels := r.Flags >> abi.RecordLevelsShift
	known := int32(abi.RecordNetwork | abi.RecordPodNode | abi.RecordSwitchV1)
	if r.Version != abi.RecordVersion || r.Checksum != checksum(r) || r.Rank != slot ||
		levels < 0 || levels > abi.MaxLocationLevels || r.Flags&^(known|int32(0xf)<<abi.RecordLevelsShift) != 0 {
		return Fields{}, false
	}
	for _, h := range r.Location[levels:] {
		if h != 0 {
			return Fields{}, false
		}
	}
	f := Fields{
		Rank: r.Rank, Network: r.Flags&abi.RecordNetwork != 0, PodNode: r.Flags&abi.RecordPodNode != 0,
		SwitchV1: r.Flags&abi.RecordSwitchV1 != 0, Fingerprint: r.Fingerprint, JbogID: r.JbogID, VirtualCore: r.VirtualCoreSize,
	}
	f.Location.Levels, f.Location.Hash = levels, r.Location
	return f, true
}
