// Package layout is the one table of the documented sizes and offsets of
// libnccom 2.31.24's ring-stage structs (spec §2-§5, DECISIONS D2 and D3),
// each with the spec's evidence grade.
//
// The named constants are the ones the code uses, and they place abi's
// hand-kept Comm mirror; Fields lists them for tests and tools
// (internal/headercheck checks them against the header and the mirrors
// generated from it; abicheck compares them with a build's DWARF). Apart
// from the header and the files generated from it, no Go code spells these
// numbers.
package layout

// Grade is how firmly the spec places a fact.
type Grade string

const (
	// Confirmed facts are byte-anchored in the binary's DWARF or disassembly.
	Confirmed Grade = "confirmed"
	// Med facts are read from decompiled control flow.
	Med Grade = "MED"
	// Assumed facts are not placed by the spec; D3 keeps upstream NCCL 2.8.x's
	// field order. They are the first thing to check against a real build.
	Assumed Grade = "ASSUMED"
)

// Constants of the ring stage (D2). ncclMinNchannels() is 0 (spec §3), so
// Postset never adds the cyclic copies D10 describes, and no constant says
// so.
const (
	MaxChannels          = 32  // MAXCHANNELS, ncclMaxNchannels()
	MaxLocalRanks        = 256 // NCCL_TOPO_MAX_NODES
	MaxKangaPaths        = 4   // MAX_KANGA_PATHS
	PatternRing          = 4   // NCCL_TOPO_PATTERN_RING
	MaxIntra             = MaxChannels * MaxLocalRanks
	MaxInter             = MaxChannels * 2
	KangaRingWidth       = 64 // ints per comm->kangaRing row
	KangaPathWidth       = 4  // ints per JbogKangaringPath row
	KangaFragmentsPerRow = KangaRingWidth / KangaPathWidth
)

// struct ncclRing.
const (
	RingSize         = 24
	RingPrev         = 0
	RingNext         = 4
	RingUserRanks    = 8
	RingDevUserRanks = 16
)

// struct ncclChannel.
const (
	ChannelSize = 512
	ChannelRing = 0
)

// struct ncclTopoRanks.
const (
	TopoRanksSize              = 960
	TopoRanksRingRecv          = 0
	TopoRanksRingSend          = 128
	TopoRanksRingPrev          = 256
	TopoRanksRingNext          = 384
	TopoRanksTreeToParent      = 512
	TopoRanksTreeToChild0      = 640
	TopoRanksTreeToChild1      = 768
	TopoRanksJbogKangaringPath = 896
)

// struct ncclTopoGraph.
const (
	TopoGraphSize            = 33080
	TopoGraphID              = 0
	TopoGraphPattern         = 4
	TopoGraphCrossNic        = 8
	TopoGraphCollNet         = 12
	TopoGraphMinChannels     = 16
	TopoGraphMaxChannels     = 20
	TopoGraphNChannels       = 24
	TopoGraphSpeedIntra      = 28
	TopoGraphSpeedInter      = 32
	TopoGraphTypeIntra       = 36
	TopoGraphTypeInter       = 40
	TopoGraphSameChannels    = 44
	TopoGraphNHops           = 48
	TopoGraphIntra           = 52
	TopoGraphInter           = 32820
	TopoGraphCrossRackToRack = 33076
)

// struct ncclTopoSystem (prefix view: only nodes[0].count is read).
const (
	TopoSystemNodes0Count = 0
)

// struct ncclComm (prefix view).
const (
	CommChannels           = 0
	CommNKangaRingChannels = 16384
	CommKangaRing          = 16388
	CommNMlaInCycle        = 17412
	CommPeerInfo           = 17544
	CommTopo               = 17552
	CommRank               = 17616
	CommNRanks             = 17620
	CommNode               = 17640
	CommNNodes             = 17644
	CommLocalRanks         = 17648
	CommNChannels          = 17704
	CommEnablePod          = 19208
	// CommMinSize is the least a host must allocate (D3): enablePod's end.
	CommMinSize = 19212
	// CommSize is the prefix view's sizeof: CommMinSize rounded to the 8-byte
	// alignment its pointer fields impose.
	CommSize = 19216
)

// Field is one row of the table: a member of a C struct at a byte offset.
type Field struct {
	Struct string // C struct tag, e.g. "ncclTopoRanks"
	Name   string // C member name, e.g. "ringPrev"
	Offset int    // bytes from the start of the struct
	Size   int    // bytes the member occupies
	Grade  Grade
	Source string // where the fact comes from: spec section or decision id
}

// Struct is one C struct of the table with its sizeof.
type Struct struct {
	Name   string
	Size   int
	Grade  Grade
	Source string
}

// Structs lists the documented struct sizes.
var Structs = []Struct{
	{"ncclRing", RingSize, Confirmed, "spec abstract, D2"},
	{"ncclChannel", ChannelSize, Confirmed, "spec abstract, D2"},
	{"ncclTopoRanks", TopoRanksSize, Confirmed, "spec abstract, D2"},
	{"ncclTopoGraph", TopoGraphSize, Confirmed, "spec abstract, D2"},
	{"ncclComm", CommSize, Assumed, "D3 (at least CommMinSize)"},
}

const (
	intSize = 4
	ptrSize = 8
)

// Fields lists every documented member.
var Fields = []Field{
	{"ncclRing", "prev", RingPrev, intSize, Confirmed, "spec §2, D2"},
	{"ncclRing", "next", RingNext, intSize, Confirmed, "spec §2, D2"},
	{"ncclRing", "userRanks", RingUserRanks, ptrSize, Confirmed, "spec §3, D2"},
	{"ncclRing", "devUserRanks", RingDevUserRanks, ptrSize, Confirmed, "spec §3, D2"},

	{"ncclChannel", "ring", ChannelRing, RingSize, Confirmed, "spec §2, D2"},

	{"ncclTopoRanks", "ringRecv", TopoRanksRingRecv, MaxChannels * intSize, Confirmed, "spec §2, D2"},
	{"ncclTopoRanks", "ringSend", TopoRanksRingSend, MaxChannels * intSize, Confirmed, "spec §2, D2"},
	{"ncclTopoRanks", "ringPrev", TopoRanksRingPrev, MaxChannels * intSize, Confirmed, "spec §2, D2"},
	{"ncclTopoRanks", "ringNext", TopoRanksRingNext, MaxChannels * intSize, Confirmed, "spec §2, D2"},
	{"ncclTopoRanks", "treeToParent", TopoRanksTreeToParent, MaxChannels * intSize, Confirmed, "D2"},
	{"ncclTopoRanks", "treeToChild0", TopoRanksTreeToChild0, MaxChannels * intSize, Confirmed, "D2"},
	{"ncclTopoRanks", "treeToChild1", TopoRanksTreeToChild1, MaxChannels * intSize, Confirmed, "D2"},
	{"ncclTopoRanks", "JbogKangaringPath", TopoRanksJbogKangaringPath, MaxKangaPaths * KangaPathWidth * intSize, Confirmed, "spec §4, D2"},

	{"ncclTopoGraph", "id", TopoGraphID, intSize, Confirmed, "D2"},
	{"ncclTopoGraph", "pattern", TopoGraphPattern, intSize, Confirmed, "D2"},
	{"ncclTopoGraph", "crossNic", TopoGraphCrossNic, intSize, Confirmed, "D2"},
	{"ncclTopoGraph", "collNet", TopoGraphCollNet, intSize, Confirmed, "D2"},
	{"ncclTopoGraph", "minChannels", TopoGraphMinChannels, intSize, Confirmed, "D2"},
	{"ncclTopoGraph", "maxChannels", TopoGraphMaxChannels, intSize, Confirmed, "D2"},
	{"ncclTopoGraph", "nChannels", TopoGraphNChannels, intSize, Confirmed, "spec §5 (idivl 0x18), D2"},
	{"ncclTopoGraph", "speedIntra", TopoGraphSpeedIntra, intSize, Confirmed, "D2"},
	{"ncclTopoGraph", "speedInter", TopoGraphSpeedInter, intSize, Confirmed, "D2"},
	{"ncclTopoGraph", "typeIntra", TopoGraphTypeIntra, intSize, Confirmed, "D2"},
	{"ncclTopoGraph", "typeInter", TopoGraphTypeInter, intSize, Confirmed, "D2"},
	{"ncclTopoGraph", "sameChannels", TopoGraphSameChannels, intSize, Confirmed, "D2"},
	{"ncclTopoGraph", "nHops", TopoGraphNHops, intSize, Confirmed, "D2"},
	{"ncclTopoGraph", "intra", TopoGraphIntra, MaxIntra * intSize, Confirmed, "spec §5 (0x34), D2"},
	{"ncclTopoGraph", "inter", TopoGraphInter, MaxInter * intSize, Confirmed, "spec §5 (0x8034), D2"},
	{"ncclTopoGraph", "crossracktorack", TopoGraphCrossRackToRack, intSize, Confirmed, "spec §4, D2"},

	{"ncclTopoSystem", "nodes[0].count", TopoSystemNodes0Count, intSize, Confirmed, "spec §5, D2"},

	{"ncclComm", "channels", CommChannels, MaxChannels * ChannelSize, Confirmed, "spec §2, D2"},
	{"ncclComm", "nKangaRingChannels", CommNKangaRingChannels, intSize, Confirmed, "spec §4, D2"},
	{"ncclComm", "kangaRing", CommKangaRing, MaxKangaPaths * KangaRingWidth * intSize, Confirmed, "spec §4, D2"},
	{"ncclComm", "nMlaInCycle", CommNMlaInCycle, intSize, Confirmed, "spec §4, D2"},
	{"ncclComm", "peerInfo", CommPeerInfo, ptrSize, Confirmed, "spec §3, D2"},
	{"ncclComm", "topo", CommTopo, ptrSize, Assumed, "D3"},
	{"ncclComm", "rank", CommRank, intSize, Assumed, "D3"},
	{"ncclComm", "nRanks", CommNRanks, intSize, Assumed, "D3"},
	{"ncclComm", "node", CommNode, intSize, Assumed, "D3"},
	{"ncclComm", "nNodes", CommNNodes, intSize, Assumed, "D3"},
	{"ncclComm", "localRanks", CommLocalRanks, intSize, Confirmed, "spec §2, D2"},
	{"ncclComm", "nChannels", CommNChannels, intSize, Assumed, "D3"},
	{"ncclComm", "enablePod", CommEnablePod, intSize, Confirmed, "spec §3, D2"},
}
