/*
 * refmodel_layout.h - struct layouts of the libnccom 2.31.24 ring stage, written
 * for the independent C reference model from docs/spec/ring-construction.txt
 * and docs/spec/DECISIONS.md (D1, D2, D3) alone, and the ring stage's record
 * (D25, D27) from the words include/nccom_ring.h and docs/errors.md document.
 * It deliberately does not include the project's include/nccom_ring.h: every
 * offset below is typed in and asserted statically, so a disagreement between
 * the two readings shows up as a conformance difference, not as a shared
 * mistake.
 */
#ifndef NCCOM_REFMODEL_LAYOUT_H
#define NCCOM_REFMODEL_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

/* D1 */
typedef enum {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5
} ncclResult_t;

/* D2 constants */
#define REF_MAXCHANNELS 32
#define REF_TOPO_MAX_NODES 256
#define REF_MAX_KANGA_PATHS 4
#define REF_TOPO_PATTERN_RING 4
#define REF_INTRA_ENTRIES (32 * 256) /* graph->intra has 8192 ints */
#define REF_INTER_ENTRIES 64

/* D2: ncclRing, 24 bytes */
struct ncclRing {
  int prev;          /* +0 */
  int next;          /* +4 */
  int *userRanks;    /* +8 */
  int *devUserRanks; /* +16 */
};

/* D2: ncclChannel, 512 bytes; only ring (+0) is interpreted */
struct ncclChannel {
  struct ncclRing ring;      /* +0 */
  unsigned char opaque[488]; /* runtime state, copied as bytes by Preset (D6) */
};

/* D2: ncclTopoRanks, 960 bytes */
struct ncclTopoRanks {
  int ringRecv[32];               /* +0   */
  int ringSend[32];               /* +128 */
  int ringPrev[32];               /* +256 */
  int ringNext[32];               /* +384 */
  int treeToParent[32];           /* +512 (never written here, D5) */
  int treeToChild0[32];           /* +640 (never written here, D5) */
  int treeToChild1[32];           /* +768 (dead, but for its slots 16..31: the record below) */
  int JbogKangaringPath[4][4];    /* +896 fork-added */
};

/* D25, D27, D28: the ring stage's record, version 2, 64 bytes at +832 of a
 * fragment (the slots of channels 16..31 of treeToChild1). Preset writes
 * the whole of it on every successful call (D28), whatever the variables;
 * it carries every per-rank fact Postset decides from. Name and graph
 * hashes are 32-bit FNV-1a; the checksum is the header's word-wise
 * four-lane variant (version 1's hashed the bytes one at a time). */
#define REF_RECORD_OFFSET 832
#define REF_RECORD_MAGIC (-0x2DA5EE32) /* 0xD25A11CE as an int */
#define REF_RECORD_VERSION 2
#define REF_RECORD_NETWORK 0x1  /* NCCOM_RING_NODE_ORDER=network */
#define REF_RECORD_POD_NODE 0x2 /* NCCOM_RING_POD_ORDER=node */
#define REF_RECORD_SWITCHV1 0x4 /* TRN3-SwitchV1: jbogId and virtualCoreSize are the hooks' answers */
#define REF_RECORD_UNKNOWN 0x8  /* NCCOM_RING_PLATFORM named no platform; never with SWITCHV1 */
#define REF_RECORD_ENABLE_POD 0x10 /* comm->enablePod != 0 */
#define REF_RECORD_LEVELS_SHIFT 8 /* flags bits 8..11: the location's level count, 0..8 */
#define REF_RECORD_KANGA_SHIFT 12 /* flags bits 12..14: comm->nKangaRingChannels, 0..4 */
#define REF_RECORD_CHANNELS_SHIFT 16 /* flags bits 16..21: graph->nChannels, 1..32 */
#define REF_MAX_LEVELS 8
struct nccomRingRecord {
  int magic;            /* +0 */
  int version;          /* +4 */
  int rank;             /* +8  the writer's comm->rank */
  int flags;            /* +12 */
  uint32_t fingerprint; /* +16 FNV-1a of nChannels, then inter[0 .. 2 nChannels) */
  int jbogId;           /* +20 */
  int virtualCoreSize;  /* +24 */
  uint32_t checksum;    /* +28 of the 16 words, this one taken as 0 (four lanes, refmodel.c) */
  uint32_t location[REF_MAX_LEVELS]; /* +32 FNV-1a of each name, outermost first; 0 past the count */
};

/* D2: ncclTopoGraph, 33080 bytes */
struct ncclTopoGraph {
  int id;                         /* +0 */
  int pattern;                    /* +4 */
  int crossNic;                   /* +8 */
  int collNet;                    /* +12 */
  int minChannels;                /* +16 */
  int maxChannels;                /* +20 */
  int nChannels;                  /* +24 */
  float speedIntra;               /* +28 */
  float speedInter;               /* +32 */
  int typeIntra;                  /* +36 */
  int typeInter;                  /* +40 */
  int sameChannels;               /* +44 */
  int nHops;                      /* +48 */
  int intra[REF_INTRA_ENTRIES];   /* +52 */
  int inter[REF_INTER_ENTRIES];   /* +32820 */
  int crossracktorack;            /* +33076 fork-added, carried not interpreted */
};

/* D2: ncclTopoSystem; only nodes[0].count (int at +0) is read. Prefix view:
 * never allocated or sized by this library. */
struct ncclTopoNodeSetPrefix {
  int count; /* +0 */
};
struct ncclTopoSystem {
  struct ncclTopoNodeSetPrefix nodes[1]; /* nodes[0].count at +0 */
};

/* D2 + D3: ncclComm as a prefix view with padding. Fields marked ASSUMED are
 * D3's assumptions (upstream 2.8.x field order anchored at the nearest
 * documented field); they are the first thing to check against the real
 * library's DWARF. */
struct ncclComm {
  struct ncclChannel channels[32];       /* +0      documented */
  int nKangaRingChannels;                /* +16384  documented (fork) */
  int kangaRing[4][64];                  /* +16388  documented (fork) */
  int nMlaInCycle;                       /* +17412  documented */
  unsigned char pad0[17544 - 17416];
  void *peerInfo;                        /* +17544  documented (pointer) */
  void *topo;                            /* +17552  ASSUMED (D3) */
  unsigned char pad1[17616 - 17560];
  int rank;                              /* +17616  ASSUMED (D3) */
  int nRanks;                            /* +17620  ASSUMED (D3) */
  unsigned char pad2[17640 - 17624];
  int node;                              /* +17640  ASSUMED (D3) */
  int nNodes;                            /* +17644  ASSUMED (D3) */
  int localRanks;                        /* +17648  documented */
  unsigned char pad3[17704 - 17652];
  int nChannels;                         /* +17704  ASSUMED (D3) */
  unsigned char pad4[19208 - 17708];
  int enablePod;                         /* +19208  documented (int) */
};

/* ---- static checks of every documented (and assumed) offset and size ---- */
_Static_assert(sizeof(int) == 4, "int is 4 bytes");
_Static_assert(sizeof(void *) == 8, "LP64 only");
_Static_assert(sizeof(ncclResult_t) == 4, "ncclResult_t is int-sized");

_Static_assert(sizeof(struct ncclRing) == 24, "ncclRing is 24 B");
_Static_assert(offsetof(struct ncclRing, prev) == 0, "ncclRing.prev +0");
_Static_assert(offsetof(struct ncclRing, next) == 4, "ncclRing.next +4");
_Static_assert(offsetof(struct ncclRing, userRanks) == 8, "ncclRing.userRanks +8");
_Static_assert(offsetof(struct ncclRing, devUserRanks) == 16, "ncclRing.devUserRanks +16");

_Static_assert(sizeof(struct ncclChannel) == 512, "ncclChannel is 512 B");
_Static_assert(offsetof(struct ncclChannel, ring) == 0, "ncclChannel.ring +0");

_Static_assert(sizeof(struct ncclTopoRanks) == 960, "ncclTopoRanks is 960 B");
_Static_assert(offsetof(struct ncclTopoRanks, ringRecv) == 0, "ringRecv +0");
_Static_assert(offsetof(struct ncclTopoRanks, ringSend) == 128, "ringSend +128");
_Static_assert(offsetof(struct ncclTopoRanks, ringPrev) == 256, "ringPrev +256");
_Static_assert(offsetof(struct ncclTopoRanks, ringNext) == 384, "ringNext +384");
_Static_assert(offsetof(struct ncclTopoRanks, treeToParent) == 512, "treeToParent +512");
_Static_assert(offsetof(struct ncclTopoRanks, treeToChild0) == 640, "treeToChild0 +640");
_Static_assert(offsetof(struct ncclTopoRanks, treeToChild1) == 768, "treeToChild1 +768");
_Static_assert(offsetof(struct ncclTopoRanks, JbogKangaringPath) == 896, "JbogKangaringPath +896");
_Static_assert(sizeof(((struct ncclTopoRanks *)0)->JbogKangaringPath) == 64, "JbogKangaringPath is 64 B");

_Static_assert(sizeof(struct nccomRingRecord) == 64, "the record is 64 B (D25)");
_Static_assert(REF_RECORD_OFFSET == offsetof(struct ncclTopoRanks, treeToChild1) + 16 * sizeof(int),
               "the record is treeToChild1's slots 16..31");
_Static_assert(REF_RECORD_OFFSET + sizeof(struct nccomRingRecord) == offsetof(struct ncclTopoRanks, JbogKangaringPath),
               "the record ends where JbogKangaringPath starts");
_Static_assert(offsetof(struct nccomRingRecord, magic) == 0, "record.magic +0");
_Static_assert(offsetof(struct nccomRingRecord, version) == 4, "record.version +4");
_Static_assert(offsetof(struct nccomRingRecord, rank) == 8, "record.rank +8");
_Static_assert(offsetof(struct nccomRingRecord, flags) == 12, "record.flags +12");
_Static_assert(offsetof(struct nccomRingRecord, fingerprint) == 16, "record.fingerprint +16");
_Static_assert(offsetof(struct nccomRingRecord, jbogId) == 20, "record.jbogId +20");
_Static_assert(offsetof(struct nccomRingRecord, virtualCoreSize) == 24, "record.virtualCoreSize +24");
_Static_assert(offsetof(struct nccomRingRecord, checksum) == 28, "record.checksum +28");
_Static_assert(offsetof(struct nccomRingRecord, location) == 32, "record.location +32");
_Static_assert((unsigned)REF_RECORD_MAGIC == 0xD25A11CEu, "the magic is 0xD25A11CE");

_Static_assert(sizeof(struct ncclTopoGraph) == 33080, "ncclTopoGraph is 33080 B");
_Static_assert(offsetof(struct ncclTopoGraph, id) == 0, "graph.id +0");
_Static_assert(offsetof(struct ncclTopoGraph, pattern) == 4, "graph.pattern +4");
_Static_assert(offsetof(struct ncclTopoGraph, crossNic) == 8, "graph.crossNic +8");
_Static_assert(offsetof(struct ncclTopoGraph, collNet) == 12, "graph.collNet +12");
_Static_assert(offsetof(struct ncclTopoGraph, minChannels) == 16, "graph.minChannels +16");
_Static_assert(offsetof(struct ncclTopoGraph, maxChannels) == 20, "graph.maxChannels +20");
_Static_assert(offsetof(struct ncclTopoGraph, nChannels) == 24, "graph.nChannels +24");
_Static_assert(offsetof(struct ncclTopoGraph, speedIntra) == 28, "graph.speedIntra +28");
_Static_assert(offsetof(struct ncclTopoGraph, speedInter) == 32, "graph.speedInter +32");
_Static_assert(offsetof(struct ncclTopoGraph, typeIntra) == 36, "graph.typeIntra +36");
_Static_assert(offsetof(struct ncclTopoGraph, typeInter) == 40, "graph.typeInter +40");
_Static_assert(offsetof(struct ncclTopoGraph, sameChannels) == 44, "graph.sameChannels +44");
_Static_assert(offsetof(struct ncclTopoGraph, nHops) == 48, "graph.nHops +48");
_Static_assert(offsetof(struct ncclTopoGraph, intra) == 52, "graph.intra +52");
_Static_assert(offsetof(struct ncclTopoGraph, inter) == 32820, "graph.inter +32820");
_Static_assert(offsetof(struct ncclTopoGraph, crossracktorack) == 33076, "graph.crossracktorack +33076");

_Static_assert(offsetof(struct ncclTopoSystem, nodes) == 0, "sys.nodes +0");
_Static_assert(offsetof(struct ncclTopoNodeSetPrefix, count) == 0, "nodes[0].count +0");

_Static_assert(offsetof(struct ncclComm, channels) == 0, "comm.channels +0");
_Static_assert(sizeof(((struct ncclComm *)0)->channels) == 16384, "comm.channels is 16384 B");
_Static_assert(offsetof(struct ncclComm, nKangaRingChannels) == 16384, "comm.nKangaRingChannels +16384");
_Static_assert(offsetof(struct ncclComm, kangaRing) == 16388, "comm.kangaRing +16388");
_Static_assert(sizeof(((struct ncclComm *)0)->kangaRing) == 1024, "comm.kangaRing is 1024 B");
_Static_assert(offsetof(struct ncclComm, nMlaInCycle) == 17412, "comm.nMlaInCycle +17412");
_Static_assert(offsetof(struct ncclComm, peerInfo) == 17544, "comm.peerInfo +17544");
_Static_assert(offsetof(struct ncclComm, topo) == 17552, "comm.topo +17552 (ASSUMED)");
_Static_assert(offsetof(struct ncclComm, rank) == 17616, "comm.rank +17616 (ASSUMED)");
_Static_assert(offsetof(struct ncclComm, nRanks) == 17620, "comm.nRanks +17620 (ASSUMED)");
_Static_assert(offsetof(struct ncclComm, node) == 17640, "comm.node +17640 (ASSUMED)");
_Static_assert(offsetof(struct ncclComm, nNodes) == 17644, "comm.nNodes +17644 (ASSUMED)");
_Static_assert(offsetof(struct ncclComm, localRanks) == 17648, "comm.localRanks +17648");
_Static_assert(offsetof(struct ncclComm, nChannels) == 17704, "comm.nChannels +17704 (ASSUMED)");
_Static_assert(offsetof(struct ncclComm, enablePod) == 19208, "comm.enablePod +19208");
_Static_assert(sizeof(struct ncclComm) >= 19212, "comm prefix view is at least 19212 B");

#endif /* NCCOM_REFMODEL_LAYOUT_H */
