/*
 * spec.h - a conformance case: everything needed to rebuild one cluster and
 * its faults deterministically. The harness prints a failing case in this
 * form, shrunk, so that it can be pasted into regressions.inc (which every
 * run replays first) or given back with --case.
 */
#ifndef NCCOMRING_CONFORMANCE_SPEC_H
#define NCCOMRING_CONFORMANCE_SPEC_H

/* Faults injected into one rank's input (faultRank), at faultChannel, with
 * faultValue. */
enum fault {
  F_NONE = 0,
  /* before Preset */
  F_INTRA_VALUE,    /* graph->intra of faultRank's node, channel c, position faultValue % L := -1 or nRanks */
  F_INTRA_DUP,      /* graph->intra: a position repeats the previous one */
  F_NCHANNELS,      /* graph->nChannels := faultValue */
  F_LOCALRANKS,     /* faultRank's comm->localRanks := faultValue */
  F_KANGA_COUNT,    /* faultRank's comm->nKangaRingChannels := faultValue */
  F_RANK,           /* faultRank's comm->rank := faultValue */
  F_NRANKS,         /* faultRank's comm->nRanks := faultValue */
  F_NULL_GRAPH,     /* Preset with graph == NULL */
  /* after the AllGather, before Postset */
  F_FRAG_RECV,      /* allTopoRanks[faultRank]->ringRecv[c] := faultValue */
  F_FRAG_SEND,
  F_FRAG_PREV,
  F_FRAG_NEXT,
  F_FRAG_NULL,      /* allTopoRanks[faultRank] := NULL */
  F_FRAG_SWAP,      /* allTopoRanks[faultRank] := allTopoRanks[faultValue % nRanks] */
  F_COMM_NCHANNELS, /* every Postset comm's nChannels := faultValue */
  F_COUNT
};

struct spec {
  unsigned long long seed; /* permutations, NICs, kangaRing contents, samples */
  int nodes;               /* 1..64 */
  int local;               /* ranks per node (the largest node when unequal) */
  int unequal;             /* node sizes vary in [1, local] */
  int channels;            /* graph->nChannels, 1..32 */
  int platform;            /* 0 generic, 1 SwitchV1, 2 SwitchV1 with vcore 1, 3 SwitchV1 with JBOG id rank % 5 */
  int kanga;               /* comm->nKangaRingChannels, 0..4 */
  int pod;                 /* comm->enablePod */
  int userBufs;            /* give some channels a caller userRanks buffer */
  int fault, faultRank, faultChannel, faultValue;
  int postRanks;           /* ranks Postset runs on: 0 = all, else that many samples */
  int numbering;           /* enum cluster_numbering: CLUSTER_NODE_MAJOR, CLUSTER_ROUND_ROBIN
                            * or CLUSTER_PERMUTED (ranks to (node, local index) slots, from
                            * seed); the node sizes and channel orders are drawn alike */
};

/* A cross-rank case (--cross-rank; issue 8, D23, D24): a valid cluster,
 * Preset on every rank straight into its slot of the gathered buffer, then
 * exactly one corruption of that buffer, then Postset on every rank. The
 * harness prints a failing one in this form; paste it into crossrank.inc
 * (replayed first by every cross-rank run) or give it back with
 * --cross-rank --case. */
enum corruption {
  X_NONE = 0,
  X_RECV, /* slot rank's ringRecv[channel] := value */
  X_SEND, /* ringSend */
  X_PREV, /* ringPrev */
  X_NEXT, /* ringNext */
  X_DUP,  /* slot rank := a copy of slot value % nRanks (the AllGather delivered one fragment twice) */
  X_SWAP, /* slots rank and value % nRanks exchanged */
  X_COUNT
};

struct xspec {
  unsigned long long seed; /* node sizes (when unequal) and channel orders */
  int nodes;               /* 1..64 */
  int local;               /* ranks per node (the largest node when unequal) */
  int unequal;             /* node sizes vary in [1, local] */
  int channels;            /* graph->nChannels of every node, 1..32 */
  int fill;                /* the byte the gathered buffer held before Preset */
  int kind;                /* enum corruption */
  int rank;                /* the corrupted slot (reduced % nRanks) */
  int channel;             /* the corrupted channel, 0..31 (may be >= channels) */
  int value;               /* the value written, or the other slot */
  int numbering;           /* enum cluster_numbering, as in struct spec */
};

#endif
