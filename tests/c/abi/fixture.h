/*
 * fixture.h - the struct declarations of a stand-in libnccom, the input of
 * `make test-abi-tool` (cmd/nccom-abi). Unlike include/nccom_ring.h, whose
 * structs are prefix views with opaque padding, these are declared the way
 * libnccom declares them: real-looking members between the documented ones,
 * holes where alignment leaves them, a typedef'd anonymous struct, anonymous
 * unions and a nested array of structs (ncclTopoSystem's nodes[0].count), so
 * the tool meets the DWARF shapes a real build has.
 *
 * The default build places every documented field at its documented offset
 * (D2) and the ASSUMED ones where D3 puts them; fixture.c asserts it. Each
 * variant macro breaks one thing, as a different libnccom build would:
 *   FIXTURE_MOVE_RANK    rank and nRanks 4 bytes lower (+17612, +17616)
 *   FIXTURE_GROW_GRAPH   ncclTopoGraph grows by one int (33084 bytes)
 *   FIXTURE_RENAME       comm->nChannels is called numChannels
 *   FIXTURE_NAMESPACE    (C++ only) the structs live in namespace nccl and
 *                        ncclComm is a class: DW_TAG_class_type in a namespace
 * It compiles as C11 and as C++17.
 */
#ifndef NCCOM_ABI_FIXTURE_H
#define NCCOM_ABI_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MAXCHANNELS 32
#define NCCL_TOPO_MAX_NODES 256
#define NCCL_TOPO_NODE_TYPES 7
#define NCCL_TOPO_MAX_LINKS 32
#define MAX_KANGA_PATHS 4
#define NCCL_NUM_FUNCTIONS 5
#define NCCL_NUM_ALGORITHMS 6
#define NCCL_NUM_PROTOCOLS 3

#if defined(FIXTURE_NAMESPACE) && defined(__cplusplus)
#define FIXTURE_NS_BEGIN namespace nccl {
#define FIXTURE_NS_END }
#define FIXTURE_COMM_KEY class
#define FIXTURE_PUBLIC public:
#else
#define FIXTURE_NS_BEGIN
#define FIXTURE_NS_END
#define FIXTURE_COMM_KEY struct
#define FIXTURE_PUBLIC
#endif

FIXTURE_NS_BEGIN

typedef enum {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5
} ncclResult_t;

struct ncclRing {
  int prev;
  int next;
  int *userRanks;
  int *devUserRanks;
};

struct ncclTree {
  int depth;
  int up;
  int down[3];
};

struct ncclChannelPeer;
struct ncclDevChannel;

struct ncclChannel {
  struct ncclRing ring;              /* +0 */
  struct ncclTree tree;              /* +24 */
  int id;                            /* +44 */
  struct ncclChannelPeer **peers;    /* +48 */
  struct ncclChannelPeer **devPeers; /* +56 */
  struct ncclDevChannel *devChannel; /* +64 */
  uint64_t workFifoSent;             /* +72 */
  uint32_t workCount;                /* +80, then a 4-byte hole */
  uint64_t deviceState[53];          /* +88: the fork's device-side state */
};

/* Anonymous, known only by its typedef (DW_TAG_typedef -> anonymous
 * DW_TAG_structure_type). */
typedef struct {
  int ringRecv[MAXCHANNELS];
  int ringSend[MAXCHANNELS];
  int ringPrev[MAXCHANNELS];
  int ringNext[MAXCHANNELS];
  int treeToParent[MAXCHANNELS];
  int treeToChild0[MAXCHANNELS];
  int treeToChild1[MAXCHANNELS];
  int JbogKangaringPath[MAX_KANGA_PATHS][4];
} ncclTopoRanks;

struct ncclTopoGraph {
  int id;
  int pattern;
  int crossNic;
  int collNet;
  int minChannels;
  int maxChannels;
  int nChannels;
  float speedIntra;
  float speedInter;
  int typeIntra;
  int typeInter;
  int sameChannels;
  int nHops;
  int intra[MAXCHANNELS * NCCL_TOPO_MAX_NODES];
  int inter[MAXCHANNELS * 2];
  int crossracktorack;
#ifdef FIXTURE_GROW_GRAPH
  int nIntraChannels;
#endif
};

struct ncclTopoNode;
struct ncclTopoLink {
  int type;
  float bw;
  struct ncclTopoNode *remNode;
};

/* Upstream's node: an anonymous union of named per-type structs. */
struct ncclTopoNode {
  int type;
  int64_t id;
  union {
    struct {
      int dev;
      int rank;
      int cudaCompCap;
      int gdrSupport;
    } gpu;
    struct {
      uint64_t asic;
      int port;
      float bw;
      float latency;
      int gdrSupport;
      int collSupport;
      int maxChannels;
    } net;
    struct {
      int arch;
      int vendor;
      int model;
    } cpu;
  };
  int nlinks;
  struct ncclTopoLink links[NCCL_TOPO_MAX_LINKS];
};

struct ncclTopoNodeSet {
  int count;
  struct ncclTopoNode nodes[NCCL_TOPO_MAX_NODES];
};

/* The ring stage reads nodes[0].count: an array of structs, element 0,
 * member count. */
struct ncclTopoSystem {
  struct ncclTopoNodeSet nodes[NCCL_TOPO_NODE_TYPES];
  float maxBw;
  float totalBw;
};

struct ncclPeerInfo;
struct ncclNodeRanks;
struct ncclDevComm;
struct ncclProxyState;
struct ncclMemoryStack {
  void *topFrame;
  void *stub;
};

FIXTURE_COMM_KEY ncclComm {
  FIXTURE_PUBLIC
  struct ncclChannel channels[MAXCHANNELS];      /* +0 */
  int nKangaRingChannels;                        /* +16384 */
  int kangaRing[MAX_KANGA_PATHS][64];            /* +16388 */
  int nMlaInCycle;                               /* +17412 */
  int mlaRanks[MAX_KANGA_PATHS];                 /* +17416 */
  struct ncclMemoryStack memPermanent, memScoped; /* +17432 */
  uint64_t magic;                                /* +17464 */
  uint64_t commHash;                             /* +17472 */
  int *rankToNode;                               /* +17480 */
  int *rankToLocalRank;                          /* +17488 */
  int *localRankToRank;                          /* +17496 */
  struct ncclNodeRanks *nodeRanks;               /* +17504 */
  int cudaDev;                                   /* +17512 */
  int nvmlDev;                                   /* +17516 */
  int compCap;                                   /* +17520 */
  int minCompCap;                                /* +17524 */
  int maxCompCap;                                /* +17528 */
  int cudaArch;                                  /* +17532 */
  int64_t busId;                                 /* +17536 */
  struct ncclPeerInfo *peerInfo;                 /* +17544 */
  struct ncclTopoSystem *topo;                   /* +17552 */
  void *bootstrap;                               /* +17560 */
  uint64_t *connectSend;                         /* +17568 */
  uint64_t *connectRecv;                         /* +17576 */
  struct ncclProxyState *proxyState;             /* +17584 */
  uint64_t baseStride;                           /* +17592 */
  int cpuArch;                                   /* +17600 */
  int cpuVendor;                                 /* +17604 */
  int nvlsSupport;                               /* +17608 */
#ifdef FIXTURE_MOVE_RANK
  int rank;                                      /* +17612 */
  int nRanks;                                    /* +17616 */
  int collNetSupport;                            /* +17620 */
#else
  int collNetSupport;                            /* +17612 */
  int rank;                                      /* +17616 */
  int nRanks;                                    /* +17620 */
#endif
  uint64_t opCount;                              /* +17624 */
  uint64_t lastOpCount;                          /* +17632 */
  union {                                        /* +17640 */
    struct {
      int node;                                  /* +17640 */
      int nNodes;                                /* +17644 */
    };
    uint64_t nodeKey;
  };
  int localRanks;                                /* +17648 */
  int maxLocalRanks;                             /* +17652 */
  enum { GROUP, PARALLEL } launchMode;           /* +17656 */
  bool checkPointers;                            /* +17660 */
  bool dmaBufSupport;                            /* +17661, then a 2-byte hole */
  void *userStream;                              /* +17664 */
  bool userStreamSet;                            /* +17672, then a 7-byte hole */
  void *doneEvent;                               /* +17680 */
  struct ncclDevComm *devComm;                   /* +17688 */
  int collChannels;                              /* +17696 */
  int nvlsChannels;                              /* +17700 */
#ifdef FIXTURE_RENAME
  int numChannels;                               /* +17704 */
#else
  int nChannels;                                 /* +17704 */
#endif
  int p2pnChannels;                              /* +17708 */
  int p2pnChannelsPerPeer;                       /* +17712 */
  int p2pChannels[MAXCHANNELS];                  /* +17716 */
  int buffSizes[NCCL_NUM_PROTOCOLS];             /* +17844 */
  float latencies[NCCL_NUM_FUNCTIONS][NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];  /* +17856 */
  float bandwidths[NCCL_NUM_FUNCTIONS][NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS]; /* +18216 */
  int maxThreads[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];       /* +18576 */
  int threadThresholds[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS]; /* +18648 */
  uint64_t workArgsBytes;                        /* +18720 */
  volatile uint32_t *abortFlag;                  /* +18728 */
  uint64_t neuronState[59];                      /* +18736: fork state the ring stage never reads */
  int enablePod;                                 /* +19208 */
  int nPodNodes;                                 /* +19212 */
  void *podInfo;                                 /* +19216; sizeof 19224 */
};

#ifndef __cplusplus
typedef struct ncclComm ncclComm;
typedef struct ncclTopoGraph ncclTopoGraph;
typedef struct ncclTopoSystem ncclTopoSystem;
#endif

FIXTURE_NS_END

#endif
