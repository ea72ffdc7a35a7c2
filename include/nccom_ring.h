/*
 * nccom_ring.h - public C ABI of libnccomring, the host-side ring stage of
 * libnccom 2.31.24 (AWS Neuron's NCCL fork).
 *
 * Source of truth: docs/spec/ring-construction.txt ("spec") and
 * docs/spec/DECISIONS.md (D1..D24). Every size and offset below is asserted
 * with _Static_assert / static_assert at the end of this file, so a drifted
 * definition fails to compile.
 *
 * Evidence grades, as in the spec:
 *   confirmed - byte-anchored in libnccom.so.2.31.24's DWARF (gdb ptype /o)
 *   MED       - read from decompiled control flow
 *   ASSUMED   - not placed by the spec; D3 keeps upstream NCCL 2.8.x's field
 *               order. Check these against your libnccom build's DWARF first.
 *
 * Structs are prefix views: they hold the documented fields at the documented
 * offsets with opaque padding between. Hosts allocate them zeroed
 * (calloc(1, sizeof(struct ncclComm))).
 *
 * Who touches what: every field below is marked R (the library reads it),
 * W (it writes it), RW, or "-" (neither: never read, never written; it may
 * hold anything). Units are ranks (global, 0..nRanks-1) unless a comment
 * says NIC or count. The host allocates and owns every struct and buffer;
 * the only memory the library allocates is the userRanks buffers Postset
 * mallocs, which the host then owns and frees with free() (D12). What the
 * library checks is listed with each function (docs/errors.md has every
 * check); what it cannot check is the caller's promise, marked PROMISE.
 *
 * Compiles cleanly as C11 and as C++17 with -Wall -Wextra -Werror.
 *
 * C++ hosts: by default the four functions are declared extern "C". A C++
 * translation unit that defines NCCOM_RING_CXX_LINKAGE before including this
 * header gets them with C++ linkage instead, as upstream NCCL's own headers
 * declare them; it then references the mangled names
 * (_Z14ncclTopoPresetP8ncclCommP13ncclTopoGraphP13ncclTopoRanks, ...), which
 * libnccomring.so exports as aliases of the C entry points. The macro has no
 * effect in C. Types, constants and hook typedefs are the same either way.
 */
#ifndef NCCOM_RING_H
#define NCCOM_RING_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* This library's version: the one source of it (the SONAME's major, the
 * tools' --version and nccomring_version() all come from here). */
#define NCCOMRING_VERSION "0.9.0"
#define NCCOMRING_VERSION_MAJOR 0

/* Constants (spec §2-§4; D2). */
#define MAXCHANNELS 32            /* channel cap after doubling (ncclMaxNchannels) */
#define NCCL_TOPO_MAX_NODES 256   /* max local ranks per node (intra stride bound) */
#define MAX_KANGA_PATHS 4         /* kangaRing rows, "paths.size() <= MAX_KANGA_PATHS" */
#define NCCL_TOPO_PATTERN_RING 4  /* the only pattern the fork builds (spec §1) */
#define NCCOM_RING_MAX_INTRA (MAXCHANNELS * NCCL_TOPO_MAX_NODES) /* graph->intra[8192] */
#define NCCOM_RING_MAX_INTER (MAXCHANNELS * 2)                   /* graph->inter[64] */
#define NCCOM_RING_KANGA_WIDTH 64 /* ints per comm->kangaRing row */

/* Result codes (D1). */
typedef enum {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5
} ncclResult_t;

/* One channel's ring wiring, 24 bytes (confirmed). prev/next are ranks, -1
 * where Preset leaves a local segment end for Postset to stitch. userRanks
 * holds comm->nRanks ints (the traversal order starting at this rank); Postset
 * mallocs it when NULL and the host frees it (D12). devUserRanks belongs to the
 * device runtime and is never touched. */
struct ncclRing {
  int prev;           /* +0  W: Preset (local predecessor or -1), then Postset (stitched); never read */
  int next;           /* +4  W: Preset (local successor or -1), then Postset (stitched); never read */
  int *userRanks;     /* +8  RW: Postset reads the pointer; NULL: it mallocs nRanks ints and stores
                       *     the pointer (host-owned from then on, free() it); non-NULL: PROMISE room
                       *     for nRanks ints, filled in place. Preset keeps each channel's pointer. */
  int *devUserRanks;  /* +16 -: device runtime's; Preset's channel copy keeps each channel's own */
};

/* 512 bytes (confirmed); only the ring at +0 is the ring stage's. */
struct ncclChannel {
  struct ncclRing ring;      /* +0 */
  char opaque[512 - 24];     /* runtime state: W only by Preset's doubling, which copies channel
                              * c - n verbatim into channel c for n <= c < min(2n, 32) (D6);
                              * never read; Postset does not touch it */
};

/* One rank's ring fragment, 960 bytes (confirmed), exchanged by AllGather.
 * The host allocates it (one per rank in the AllGather buffer; it need not
 * be zeroed). Preset W this rank's; Postset R every rank's, never W.
 * The four ring arrays are written whole by Preset: entries c < n =
 * graph->nChannels hold ranks, entries n <= c < 32 hold -1 (D23: a
 * fragment's channel count is its number of leading ringRecv >= 0). */
struct ncclTopoRanks {
  int ringRecv[MAXCHANNELS];       /* +0   W/R channel head (enters the node from the network) */
  int ringSend[MAXCHANNELS];       /* +128 W/R channel tail (leaves the node to the network) */
  int ringPrev[MAXCHANNELS];       /* +256 W/R local predecessor, -1 at the head */
  int ringNext[MAXCHANNELS];       /* +384 W/R local successor, -1 at the tail */
  int treeToParent[MAXCHANNELS];   /* +512 -: dead tree region, never read or written ... */
  int treeToChild0[MAXCHANNELS];   /* +640 -: dead */
  int treeToChild1[MAXCHANNELS];   /* +768 -: dead, but for its slots of channels 16..31 (+832..+895),
                                    * which hold the ring stage's record (D25, struct
                                    * nccomRingRecord below): Preset W, Postset R */
  int JbogKangaringPath[MAX_KANGA_PATHS][4]; /* +896 fork-added (D7): only on TRN3-SwitchV1 (D14),
                                    * Preset W rows k < comm->nKangaRingChannels and Postset R
                                    * them (D13); elsewhere, and the other rows, neither */
};

/* The ring stage's record, version 2 (D25, D27, D28): 64 bytes that
 * travel in each fragment through the AllGather, at +832 of struct
 * ncclTopoRanks (the tree slots of channels 16..31 of treeToChild1, which no
 * Preset that fills trees for at most 16 channels writes and no Postset
 * reads). Preset W the whole record on every call, whatever the variables,
 * so that no record of an earlier communicator survives; it carries every
 * per-rank fact Postset decides from (D28): the policy, the location, the
 * platform, enablePod, nKangaRingChannels, the graph's channel count and
 * fingerprint, SwitchV1's preconditions. Postset R every rank's and takes
 * one as valid only when magic, version and checksum hold, rank is its
 * slot's and every field is in range; a fragment without the magic is
 * another ring stage's, one with it but not valid "unreadable". Words are
 * ints (or unsigned where said); name hashes are 32-bit FNV-1a over the
 * name's bytes. */
#define NCCOM_RING_RECORD_OFFSET 832
#define NCCOM_RING_RECORD_MAGIC (-0x2DA5EE32) /* 0xD25A11CE: negative, so neither a rank nor -1 */
#define NCCOM_RING_RECORD_VERSION 2
#define NCCOM_RING_RECORD_NETWORK 0x1   /* flags: this rank asks NCCOM_RING_NODE_ORDER=network */
#define NCCOM_RING_RECORD_POD_NODE 0x2  /* flags: NCCOM_RING_POD_ORDER=node (D27) */
#define NCCOM_RING_RECORD_SWITCHV1 0x4  /* flags: platform TRN3-SwitchV1; jbogId and virtualCoreSize are set */
#define NCCOM_RING_RECORD_PLATFORM_UNKNOWN 0x8 /* flags: NCCOM_RING_PLATFORM named no platform (D28);
                                         * never with NCCOM_RING_RECORD_SWITCHV1 */
#define NCCOM_RING_RECORD_ENABLE_POD 0x10 /* flags: comm->enablePod is non-zero (D28) */
#define NCCOM_RING_RECORD_LEVELS_SHIFT 8 /* flags bits 8..11: names in the location, 0 (none)..8 */
#define NCCOM_RING_RECORD_KANGA_SHIFT 12 /* flags bits 12..14: comm->nKangaRingChannels, 0..4 */
#define NCCOM_RING_RECORD_CHANNELS_SHIFT 16 /* flags bits 16..21: graph->nChannels, 1..32 */
#define NCCOM_RING_MAX_LOCATION_LEVELS 8
/* The checksum (version 2) is FNV-1a's arithmetic on whole words, in four
 * lanes so that the multiplies overlap: lane k starts at 2166136261 and
 * takes words k, k+4, k+8, k+12 of the record (the checksum word as 0) as
 * lane = (lane ^ word) * 16777619; the checksum is
 * ((((lane0 * 16777619) ^ lane1) * 16777619 ^ lane2) * 16777619 ^ lane3) * 16777619,
 * all modulo 2^32. (Version 1 hashed the 64 bytes one at a time.) */
struct nccomRingRecord {
  int magic;            /* +0  NCCOM_RING_RECORD_MAGIC */
  int version;          /* +4  NCCOM_RING_RECORD_VERSION */
  int rank;             /* +8  the writer's comm->rank: its slot in allTopoRanks */
  int flags;            /* +12 NCCOM_RING_RECORD_* bits and the location's level count */
  unsigned fingerprint; /* +16 hash of the writer's graph: nChannels, then inter[0 .. 2 nChannels) */
  int jbogId;           /* +20 with NCCOM_RING_RECORD_SWITCHV1: neuronTrnSwitchV1JbogId(rank), else 0 */
  int virtualCoreSize;  /* +24 with NCCOM_RING_RECORD_SWITCHV1: nec_get_virtual_core_size(), else 0 */
  unsigned checksum;    /* +28 of the 16 words, this one taken as 0 (above) */
  unsigned location[NCCOM_RING_MAX_LOCATION_LEVELS]; /* +32 hash of each name, outermost
                         * first; 0 past the level count */
};

/* The searched ring graph, 33080 bytes (confirmed), one per node, host-owned.
 * intra is indexed [c * localRanks + i] and holds global ranks; inter[2c] is
 * the NIC a channel enters on, inter[2c+1] the NIC it leaves on.
 * Only nChannels, intra and inter are read (by Preset and GetNetDev);
 * nothing in the graph is ever written. The other fields are not read: the
 * fork builds rings only (spec §1), so a graph whose pattern is not 4
 * (e.g. 3, a tree) is wired as a ring without a word, and minChannels and
 * maxChannels do not bound anything (nChannels is the count; the cap is 32). */
struct ncclTopoGraph {
  int id;                 /* +0  - */
  int pattern;            /* +4  - (NCCL_TOPO_PATTERN_RING expected, not checked: PROMISE) */
  int crossNic;           /* +8  - */
  int collNet;            /* +12 - */
  int minChannels;        /* +16 - */
  int maxChannels;        /* +20 - */
  int nChannels;          /* +24 R channel count n: Preset needs 1..32 and n * localRanks <= 8192
                           *     (D4); GetNetDev takes channelId % n */
  float speedIntra;       /* +28 - */
  float speedInter;       /* +32 - */
  int typeIntra;          /* +36 - */
  int typeInter;          /* +40 - */
  int sameChannels;       /* +44 - */
  int nHops;              /* +48 - */
  int intra[NCCOM_RING_MAX_INTRA]; /* +52 R global ranks: Preset reads [c * localRanks, +localRanks)
                           *     for c < n (each slice distinct ranks holding comm->rank, P3);
                           *     GetNetDev reads intra[c * nodes[0].count] (the head) */
  int inter[NCCOM_RING_MAX_INTER]; /* +32820 R NIC ids: GetNetDev only, inter[2c] and inter[2c+1];
                           *     returned as they are, never range-checked */
  int crossracktorack;    /* +33076 - fork-added; carried, not interpreted (D13) */
};

/* Prefix view of ncclTopoSystem: only nodes[0].count (the number of
 * NeuronCores/GPUs of this node) is read, by ncclTopoGetNetDev (D2, D18);
 * nothing is written. PROMISE: count equals the calling rank's node's
 * comm->localRanks, the stride of graph->intra. GetNetDev checks only
 * 1 <= count <= 256: with count 4 on a node of 2 local ranks, channel 1's
 * head is read from intra[4] (channel 2's slot) and channel 1 silently gets
 * the wrong NIC. */
struct ncclTopoNodeSet {
  int count;              /* +0 R local ranks (NeuronCores) of this node */
};
struct ncclTopoSystem {
  struct ncclTopoNodeSet nodes[1]; /* nodes[0].count at +0 */
};

/* Opaque to the ring stage. */
struct ncclPeerInfo;

/* Prefix view of ncclComm (D2, D3), at least 19212 bytes, one per rank,
 * allocated zeroed and owned by the host. The host sets rank, nRanks and
 * localRanks (and, when it uses them, nKangaRingChannels, kangaRing and
 * enablePod) before Preset. With a layout profile (NCCOM_RING_LAYOUT) the
 * ASSUMED fields are read and written at the profile's offsets instead. */
struct ncclComm {
  struct ncclChannel channels[MAXCHANNELS]; /* +0      confirmed. Preset W channels[c].ring.prev/next
                                             * for c < n and copies [n, min(2n,32)) (D6); Postset
                                             * R ring.userRanks and W ring.prev/next/userRanks for
                                             * every c < its final count; later channels untouched */
  int nKangaRingChannels;                   /* +16384  confirmed, R by Preset and Postset: 0..4,
                                             * checked on every platform (P2); never W */
  int kangaRing[MAX_KANGA_PATHS][NCCOM_RING_KANGA_WIDTH]; /* +16388 confirmed, TRN3-SwitchV1 only:
                                             * Preset R [k][0..3], Postset W [k][0 .. 4*min(16,
                                             * nRanks)) for k < nKangaRingChannels (D7, D13) */
  int nMlaInCycle;                          /* +17412  confirmed, -: not used */
  char pad0[17544 - 17416];                 /* -: libnccom's, never touched */
  struct ncclPeerInfo *peerInfo;            /* +17544  confirmed, -: not used */
  struct ncclTopoSystem *topo;              /* +17552  ASSUMED (D3), -: not read (GetNetDev takes
                                             * the system as an argument); no need to set it */
  char pad1[17616 - 17560];                 /* -: never touched */
  int rank;                                 /* +17616  ASSUMED (D3), R by Preset and Postset:
                                             * this rank, 0 <= rank < nRanks; never W */
  int nRanks;                               /* +17620  ASSUMED (D3), R by Preset and Postset: ranks
                                             * in the job, the length of allTopoRanks, nodesFirstRank
                                             * and every userRanks; never W */
  char pad2[17640 - 17624];                 /* -: never touched */
  int node;                                 /* +17640  ASSUMED (D3), W by Postset (this rank's node,
                                             * numbered by first appearance, D8); never R */
  int nNodes;                               /* +17644  ASSUMED (D3), W by Postset; never R */
  int localRanks;                           /* +17648  confirmed, R by Preset only: this node's
                                             * ranks, 1..256, the stride of graph->intra; never W.
                                             * Postset does not need it (nodes may differ, P6) */
  char pad3[17704 - 17652];                 /* -: never touched */
  int nChannels;                            /* +17704  ASSUMED (D3), W by Preset (= graph->nChannels,
                                             * D4), R then W by Postset (the doubled count, D10) */
  char pad4[19208 - 17708];                 /* -: never touched */
  int enablePod;                            /* +19208  confirmed, R by Postset only: nonzero with
                                             * more than one node is refused unless
                                             * NCCOM_RING_POD_ORDER=node (D15); never W */
};

#if defined(__cplusplus) && defined(NCCOM_RING_CXX_LINKAGE)
} /* extern "C": the four prototypes below get C++ linkage (mangled names) */
#endif

/*
 * ncclTopoPreset - spec §2; D4-D7.
 * Packs this rank's fragment for channels c < graph->nChannels:
 * ringRecv/ringSend/ringPrev/ringNext[c]; writes comm->channels[c].ring.prev/next,
 * copies channels [n, min(2n,32)) from [0, ...) keeping each destination's
 * userRanks/devUserRanks pointers, sets comm->nChannels = n and, on
 * TRN3-SwitchV1 with comm->nKangaRingChannels > 0, JbogKangaringPath[k].
 * No other byte of topoRanks is written. Reads comm->rank, nRanks, localRanks,
 * nKangaRingChannels (and kangaRing on SwitchV1), graph->nChannels and intra;
 * no other graph field (pattern is not checked: spec §1, rings only).
 * Errors: ncclInvalidArgument for NULL or out-of-range input (docs/errors.md),
 * ncclInvalidUsage for an unknown NCCOM_RING_PLATFORM. Nothing is written on error.
 */
ncclResult_t ncclTopoPreset(struct ncclComm *comm, struct ncclTopoGraph *graph,
                            struct ncclTopoRanks *topoRanks);

/*
 * ncclTopoPostset - spec §3-§4; D8-D15.
 * allTopoRanks holds comm->nRanks fragment pointers (the AllGather result);
 * nodesFirstRank has room for comm->nRanks ints and receives each node's
 * channel-0 head rank in [0, *nNodes) (the rest is untouched). Stitches the rings, doubles the channels (cap 32),
 * writes this rank's prev/next and userRanks for every channel (mallocs a NULL
 * userRanks), comm->nChannels/nNodes/node, *nChannels, *nNodes and, on
 * TRN3-SwitchV1, comm->kangaRing. All-or-nothing (D11): on error nothing is
 * written. Errors: ncclInvalidArgument, ncclInternalError (fragments that
 * contradict each other, broken rings), ncclInvalidUsage (pods, D15),
 * ncclSystemError (malloc).
 */
ncclResult_t ncclTopoPostset(struct ncclComm *comm, int *nodesFirstRank,
                             struct ncclTopoRanks **allTopoRanks,
                             int *nChannels, int *nNodes);

/*
 * ncclBuildRings - spec §3; D16-D17.
 * rings and next are int[nrings * nranks], indexed [r * nranks + rank]. For
 * each ring r, rings[r*nranks ...] receives the walk from `rank` along next.
 * prev is not read and may be NULL. Working memory: nrings * nranks ints
 * from malloc, freed before the call returns (ABI note P28). Errors:
 * ncclInvalidArgument (NULL, nrings outside [0, 32], nranks <= 0, rank
 * outside [0, nranks), rings and next overlapping); ncclSystemError when
 * that memory cannot be had (B5b); ncclInternalError when a ring does not
 * loop back, misses a rank, or holds a next outside [0, nranks). rings is
 * untouched on error.
 */
ncclResult_t ncclBuildRings(int nrings, int *rings, int rank, int nranks,
                            int *prev, int *next);

/*
 * ncclTopoGetNetDev - spec §5 (byte-exact); D18-D19.
 * *dev = graph->inter[2c + (graph->intra[c * count] != rank)] with
 * c = channelId % graph->nChannels and count = sys->nodes[0].count.
 * count must be the calling rank's node's localRanks (the caller's promise,
 * see struct ncclTopoNodeSet): another value in [1, 256] is not an error but
 * gives the wrong NIC. sys and graph are only read.
 * graph == NULL defers to the host's own ncclTopoGetLocalNet when it has one.
 * Errors: ncclInvalidArgument for NULL, nChannels <= 0, channelId < 0, count
 * outside [1, 256], or an index past intra[8192]/inter[64]; ncclInternalError
 * when graph is NULL and the host has no ncclTopoGetLocalNet. *dev is written
 * only on success.
 */
ncclResult_t ncclTopoGetNetDev(struct ncclTopoSystem *sys, int rank,
                               struct ncclTopoGraph *graph, int channelId,
                               int *dev);

#if defined(__cplusplus) && defined(NCCOM_RING_CXX_LINKAGE)
extern "C" {
#endif

/*
 * Optional host-provided hooks (D14, D19). The library looks these names up at
 * run time in the host process (dlsym) and never links against them. Their
 * signatures are ASSUMED from the spec's call sites.
 */
typedef bool (*ncclRingIsTrn3SwitchV1Family_t)(void);   /* neuronIsTrn3SwitchV1Family */
typedef int (*ncclRingVirtualCoreSize_t)(void);          /* nec_get_virtual_core_size */
typedef int (*ncclRingSwitchV1JbogId_t)(int rank);       /* neuronTrnSwitchV1JbogId */
typedef ncclResult_t (*ncclRingGetLocalNet_t)(struct ncclTopoSystem *sys, int rank,
                                              int *dev); /* ncclTopoGetLocalNet */

/*
 * nccomring_version - the version of the libnccomring that serves these
 * functions, e.g. "0.9.0" (NCCOMRING_VERSION when it was built): a static
 * string, never NULL. Under LD_PRELOAD, dlsym(RTLD_DEFAULT,
 * "nccomring_version") finding it is one way to see that the preload took
 * effect; NCCL_DEBUG=VERSION is another (docs/operating.md, "Is the preload active?").
 */
const char *nccomring_version(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

/* Layout assertions (D2, D3). */
#ifdef __cplusplus
#define NCCOM_RING_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define NCCOM_RING_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

NCCOM_RING_ASSERT(sizeof(int) == 4, "int must be 4 bytes");
NCCOM_RING_ASSERT(sizeof(void *) == 8, "LP64 only");

NCCOM_RING_ASSERT(sizeof(struct ncclRing) == 24, "ncclRing is 24 bytes");
NCCOM_RING_ASSERT(offsetof(struct ncclRing, prev) == 0, "ncclRing.prev +0");
NCCOM_RING_ASSERT(offsetof(struct ncclRing, next) == 4, "ncclRing.next +4");
NCCOM_RING_ASSERT(offsetof(struct ncclRing, userRanks) == 8, "ncclRing.userRanks +8");
NCCOM_RING_ASSERT(offsetof(struct ncclRing, devUserRanks) == 16, "ncclRing.devUserRanks +16");

NCCOM_RING_ASSERT(sizeof(struct ncclChannel) == 512, "ncclChannel is 512 bytes");
NCCOM_RING_ASSERT(offsetof(struct ncclChannel, ring) == 0, "ncclChannel.ring +0");

NCCOM_RING_ASSERT(sizeof(struct ncclTopoRanks) == 960, "ncclTopoRanks is 960 bytes");
NCCOM_RING_ASSERT(offsetof(struct ncclTopoRanks, ringRecv) == 0, "ringRecv +0");
NCCOM_RING_ASSERT(offsetof(struct ncclTopoRanks, ringSend) == 128, "ringSend +128");
NCCOM_RING_ASSERT(offsetof(struct ncclTopoRanks, ringPrev) == 256, "ringPrev +256");
NCCOM_RING_ASSERT(offsetof(struct ncclTopoRanks, ringNext) == 384, "ringNext +384");
NCCOM_RING_ASSERT(offsetof(struct ncclTopoRanks, treeToParent) == 512, "treeToParent +512");
NCCOM_RING_ASSERT(offsetof(struct ncclTopoRanks, treeToChild0) == 640, "treeToChild0 +640");
NCCOM_RING_ASSERT(offsetof(struct ncclTopoRanks, treeToChild1) == 768, "treeToChild1 +768");
NCCOM_RING_ASSERT(offsetof(struct ncclTopoRanks, JbogKangaringPath) == 896, "JbogKangaringPath +896");

NCCOM_RING_ASSERT(sizeof(struct nccomRingRecord) == 64, "the record is 64 bytes (D25)");
NCCOM_RING_ASSERT(NCCOM_RING_RECORD_OFFSET == offsetof(struct ncclTopoRanks, treeToChild1) + 16 * sizeof(int),
                  "the record is treeToChild1's slots 16..31 (D25)");
NCCOM_RING_ASSERT(NCCOM_RING_RECORD_OFFSET + sizeof(struct nccomRingRecord) ==
                      offsetof(struct ncclTopoRanks, JbogKangaringPath),
                  "the record ends where JbogKangaringPath starts");
NCCOM_RING_ASSERT(offsetof(struct nccomRingRecord, magic) == 0, "record.magic +0");
NCCOM_RING_ASSERT(offsetof(struct nccomRingRecord, version) == 4, "record.version +4");
NCCOM_RING_ASSERT(offsetof(struct nccomRingRecord, rank) == 8, "record.rank +8");
NCCOM_RING_ASSERT(offsetof(struct nccomRingRecord, flags) == 12, "record.flags +12");
NCCOM_RING_ASSERT(offsetof(struct nccomRingRecord, fingerprint) == 16, "record.fingerprint +16");
NCCOM_RING_ASSERT(offsetof(struct nccomRingRecord, jbogId) == 20, "record.jbogId +20");
NCCOM_RING_ASSERT(offsetof(struct nccomRingRecord, virtualCoreSize) == 24, "record.virtualCoreSize +24");
NCCOM_RING_ASSERT(offsetof(struct nccomRingRecord, checksum) == 28, "record.checksum +28");
NCCOM_RING_ASSERT(offsetof(struct nccomRingRecord, location) == 32, "record.location +32");
NCCOM_RING_ASSERT(NCCOM_RING_RECORD_MAGIC < -1, "the magic is neither a rank nor -1");

NCCOM_RING_ASSERT(sizeof(struct ncclTopoGraph) == 33080, "ncclTopoGraph is 33080 bytes");
NCCOM_RING_ASSERT(offsetof(struct ncclTopoGraph, id) == 0, "graph.id +0");
NCCOM_RING_ASSERT(offsetof(struct ncclTopoGraph, pattern) == 4, "graph.pattern +4");
NCCOM_RING_ASSERT(offsetof(struct ncclTopoGraph, crossNic) == 8, "graph.crossNic +8");
NCCOM_RING_ASSERT(offsetof(struct ncclTopoGraph, collNet) == 12, "graph.collNet +12");
NCCOM_RING_ASSERT(offsetof(struct ncclTopoGraph, minChannels) == 16, "graph.minChannels +16");
NCCOM_RING_ASSERT(offsetof(struct ncclTopoGraph, maxChannels) == 20, "graph.maxChannels +20");
NCCOM_RING_ASSERT(offsetof(struct ncclTopoGraph, nChannels) == 24, "graph.nChannels +24");
NCCOM_RING_ASSERT(offsetof(struct ncclTopoGraph, speedIntra) == 28, "graph.speedIntra +28");
NCCOM_RING_ASSERT(offsetof(struct ncclTopoGraph, speedInter) == 32, "graph.speedInter +32");
NCCOM_RING_ASSERT(offsetof(struct ncclTopoGraph, typeIntra) == 36, "graph.typeIntra +36");
NCCOM_RING_ASSERT(offsetof(struct ncclTopoGraph, typeInter) == 40, "graph.typeInter +40");
NCCOM_RING_ASSERT(offsetof(struct ncclTopoGraph, sameChannels) == 44, "graph.sameChannels +44");
NCCOM_RING_ASSERT(offsetof(struct ncclTopoGraph, nHops) == 48, "graph.nHops +48");
NCCOM_RING_ASSERT(offsetof(struct ncclTopoGraph, intra) == 52, "graph.intra +52");
NCCOM_RING_ASSERT(offsetof(struct ncclTopoGraph, inter) == 32820, "graph.inter +32820");
NCCOM_RING_ASSERT(offsetof(struct ncclTopoGraph, crossracktorack) == 33076, "graph.crossracktorack +33076");

NCCOM_RING_ASSERT(offsetof(struct ncclTopoSystem, nodes) == 0, "sys.nodes[0].count +0");

NCCOM_RING_ASSERT(offsetof(struct ncclComm, channels) == 0, "comm.channels +0");
NCCOM_RING_ASSERT(offsetof(struct ncclComm, nKangaRingChannels) == 16384, "comm.nKangaRingChannels +16384");
NCCOM_RING_ASSERT(offsetof(struct ncclComm, kangaRing) == 16388, "comm.kangaRing +16388");
NCCOM_RING_ASSERT(offsetof(struct ncclComm, nMlaInCycle) == 17412, "comm.nMlaInCycle +17412");
NCCOM_RING_ASSERT(offsetof(struct ncclComm, peerInfo) == 17544, "comm.peerInfo +17544");
NCCOM_RING_ASSERT(offsetof(struct ncclComm, topo) == 17552, "comm.topo +17552 (ASSUMED)");
NCCOM_RING_ASSERT(offsetof(struct ncclComm, rank) == 17616, "comm.rank +17616 (ASSUMED)");
NCCOM_RING_ASSERT(offsetof(struct ncclComm, nRanks) == 17620, "comm.nRanks +17620 (ASSUMED)");
NCCOM_RING_ASSERT(offsetof(struct ncclComm, node) == 17640, "comm.node +17640 (ASSUMED)");
NCCOM_RING_ASSERT(offsetof(struct ncclComm, nNodes) == 17644, "comm.nNodes +17644 (ASSUMED)");
NCCOM_RING_ASSERT(offsetof(struct ncclComm, localRanks) == 17648, "comm.localRanks +17648");
NCCOM_RING_ASSERT(offsetof(struct ncclComm, nChannels) == 17704, "comm.nChannels +17704 (ASSUMED)");
NCCOM_RING_ASSERT(offsetof(struct ncclComm, enablePod) == 19208, "comm.enablePod +19208");
NCCOM_RING_ASSERT(sizeof(struct ncclComm) >= 19212, "ncclComm prefix view covers enablePod");

#undef NCCOM_RING_ASSERT

#endif /* NCCOM_RING_H */
