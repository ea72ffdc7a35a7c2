// Package record reads and writes the ring stage's record, version 2 (D25,
// D27, D28): the 64 bytes at +832 of each fragment (include/nccom_ring.h,
// struct nccomRingRecord) that carry, through the AllGather, every per-rank
// fact Postset decides from, so that it decides from the gathered bytes
// alone: the rank's node-order policy and location, its platform,
// enablePod, nKangaRingChannels, its graph's channel count and
// fingerprint, the pod-order setting and TRN3-SwitchV1's preconditions.
// Pure Go; the name and graph hashes are 32-bit FNV-1a over 32-bit words,
// least significant byte first, and the checksum is the header's word-wise
// variant, so the C reference model and every tool compute the same bytes.
package record

import (
	"unsafe"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/nodeorder"
)

// Platform is a rank's platform as Preset resolved it (D14, D28).
type Platform uint8

const (
	Generic  Platform = iota // any platform but TRN3-SwitchV1
	SwitchV1                 // TRN3-SwitchV1
	Unknown                  // NCCOM_RING_PLATFORM named no platform
)

// String is the platform as the WARN texts name it.
func (p Platform) String() string {
	switch p {
	case SwitchV1:
		return "trn3-switchv1"
	case Unknown:
		return "unknown"
	}
	return "generic"
}

// Fields is what one record says.
type Fields struct {
	Rank          int32 // the writer's comm->rank
	Network       bool  // it asks for NCCOM_RING_NODE_ORDER=network
	PodNode       bool  // NCCOM_RING_POD_ORDER=node (D27)
	Platform      Platform
	EnablePod     bool  // comm->enablePod != 0
	KangaChannels int32 // comm->nKangaRingChannels, 0..4
	GraphChannels int32 // graph->nChannels, 1..32
	Location      nodeorder.Location
	Fingerprint   uint32 // of the writer's graph
	JbogID        int32  // with SwitchV1: its preconditions (D27), else 0
	VirtualCore   int32  // nec_get_virtual_core_size()
}

// Kind is what a fragment holds at the record's place (D28).
type Kind uint8

const (
	None       Kind = iota // no magic: another ring stage's fragment
	Valid                  // this library's record, intact
	Unreadable             // the magic, but damaged or of another version
)

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

// words views the record as its 16 words.
func words(r *abi.Record) *[16]uint32 { return (*[16]uint32)(unsafe.Pointer(r)) }

// checksumWord is the checksum's index among the record's words (+28).
const checksumWord = 7

// checksum is the header's version-2 checksum: FNV-1a's arithmetic on
// whole words in four independent lanes, so that the multiplies overlap
// (a record is checked on every Postset, for every rank: D28).
func checksum(r *abi.Record) uint32 {
	w := words(r)
	const p = fnvPrime
	l0 := ((((fnvOffset^w[0])*p^w[4])*p^w[8])*p ^ w[12]) * p
	l1 := ((((fnvOffset^w[1])*p^w[5])*p^w[9])*p ^ w[13]) * p
	l2 := ((((fnvOffset^w[2])*p^w[6])*p^w[10])*p ^ w[14]) * p
	l3 := ((((fnvOffset^w[3])*p^0)*p^w[11])*p ^ w[15]) * p // w[7] is the checksum: 0
	return ((((l0*p)^l1)*p^l2)*p ^ l3) * p
}

// checksumV1 is version 1's checksum (every byte), only so that a record
// of that version can be named as one (D28).
func checksumV1(r *abi.Record) uint32 {
	w := *words(r)
	w[checksumWord] = 0
	return hashWords(fnvOffset, w[:]...)
}

// Write writes f into frag's record, whole (D28).
func Write(frag *abi.TopoRanks, f *Fields) {
	r := Of(frag)
	flags := int32(f.Location.Levels)<<abi.RecordLevelsShift | f.KangaChannels<<abi.RecordKangaShift |
		f.GraphChannels<<abi.RecordChannelsShift | bit(f.Network, abi.RecordNetwork) | bit(f.PodNode, abi.RecordPodNode) |
		bit(f.Platform == SwitchV1, abi.RecordSwitchV1) | bit(f.Platform == Unknown, abi.RecordUnknownPlatform) |
		bit(f.EnablePod, abi.RecordEnablePod)
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

// The flags' fields, as the header lays them out.
const (
	levelsOf   = 0xf
	kangaOf    = 0x7
	channelsOf = 0x3f
	// LevelBits and KangaBits are the level count's and
	// nKangaRingChannels' bits of a flags word.
	LevelBits  = levelsOf << abi.RecordLevelsShift
	KangaBits  = kangaOf << abi.RecordKangaShift
	knownFlags = abi.RecordNetwork | abi.RecordPodNode | abi.RecordSwitchV1 | abi.RecordUnknownPlatform | abi.RecordEnablePod |
		LevelBits | KangaBits | channelsOf<<abi.RecordChannelsShift
)

// Levels, KangaPaths and Channels read a flags word's fields: the
// location's level count, nKangaRingChannels and the graph's channel
// count.
func Levels(flags int32) int32     { return flags >> abi.RecordLevelsShift & levelsOf }
func KangaPaths(flags int32) int32 { return flags >> abi.RecordKangaShift & kangaOf }
func Channels(flags int32) int32   { return flags >> abi.RecordChannelsShift & channelsOf }

// LocationOf is the location in frag's record, read as it lies (Check
// says whether it is valid).
func LocationOf(frag *abi.TopoRanks) nodeorder.Location {
	r := Of(frag)
	return nodeorder.Location{Levels: Levels(r.Flags), Hash: r.Location}
}

// Check classifies frag's record as slot's (the rank whose slot of the
// AllGather frag is): None without the magic; Unreadable when the version,
// the checksum, the writer's rank or a field's range is wrong; else Valid.
// It reads the record's words and nothing else, and allocates nothing:
// Postset runs it on every fragment. version is the record's version word
// when it is another version whose checksum holds (so a WARN can quote
// it), else -1 (damaged, or not as its Preset wrote it).
func Check(frag *abi.TopoRanks, slot int32) (k Kind, version int32) {
	r := Of(frag)
	switch {
	case r.Magic != abi.RecordMagic:
		return None, -1
	case r.Version != abi.RecordVersion || r.Checksum != checksum(r):
		if r.Version == 1 && r.Checksum == checksumV1(r) || r.Version != 1 && r.Checksum == checksum(r) {
			return Unreadable, r.Version
		}
		return Unreadable, -1
	}
	if r.Rank != slot || !FlagsInRange(r.Flags) {
		return Unreadable, -1 // this version, but not as its Preset wrote it
	}
	for _, h := range r.Location[Levels(r.Flags):] {
		if h != 0 {
			return Unreadable, -1
		}
	}
	return Valid, r.Version
}

// Quick is Check's kind from the magic, version, rank and flags alone:
// no checksum, no location words (Postset's quick count, D28).
func Quick(frag *abi.TopoRanks, slot int32) Kind {
	r := Of(frag)
	switch {
	case r.Magic != abi.RecordMagic:
		return None
	case r.Version != abi.RecordVersion || r.Rank != slot || !FlagsInRange(r.Flags):
		return Unreadable
	}
	return Valid
}

// FlagsInRange reports whether a flags word holds only the header's
// fields, each in its range: at most 8 levels and 4 kangaRing paths, 1 to
// 32 channels, not both SwitchV1 and unknown.
func FlagsInRange(f int32) bool {
	levels, kanga, channels := Levels(f), KangaPaths(f), Channels(f)
	return f&^knownFlags == 0 && levels <= abi.MaxLocationLevels && kanga <= 4 && channels >= 1 && channels <= 32 &&
		(f&abi.RecordSwitchV1 == 0 || f&abi.RecordUnknownPlatform == 0)
}

// Decode returns what a record that Check found Valid says.
func Decode(frag *abi.TopoRanks) Fields {
	r := Of(frag)
	f := r.Flags
	fields := Fields{
		Rank: r.Rank, Network: f&abi.RecordNetwork != 0, PodNode: f&abi.RecordPodNode != 0, EnablePod: f&abi.RecordEnablePod != 0,
		KangaChannels: KangaPaths(f), GraphChannels: Channels(f), Location: LocationOf(frag),
		Fingerprint: r.Fingerprint, JbogID: r.JbogID, VirtualCore: r.VirtualCoreSize,
	}
	switch {
	case f&abi.RecordSwitchV1 != 0:
		fields.Platform = SwitchV1
	case f&abi.RecordUnknownPlatform != 0:
		fields.Platform = Unknown
	}
	return fields
}

// Read returns what frag's record says, and false when it is not Valid.
func Read(frag *abi.TopoRanks, slot int32) (Fields, bool) {
	if k, _ := Check(frag, slot); k != Valid {
		return Fields{}, false
	}
	return Decode(frag), true
}
