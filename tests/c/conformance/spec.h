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
  /* the record (D25, D27), after the AllGather */
  F_REC_FLIP,       /* allTopoRanks[faultRank]'s record: byte faultValue % 64 flipped */
  F_REC_ZERO,       /* allTopoRanks[faultRank]'s record: first word 0 (a rank that ran another library) */
  F_COUNT
};
/* The faults random_spec draws first (those of the first rounds); the
 * record's are drawn after every other field, so that the earlier draws
 * of a seed stay as they were. */
#define F_FIRST_ROUNDS (F_COMM_NCHANNELS + 1)

struct spec {
  unsigned long long seed; /* permutations, NICs, kangaRing contents, samples */
  int nodes;               /* 1..64 */
  int local;               /* ranks per node (the largest node when unequal) */
  int unequal;             /* node sizes vary in [1, local] */
  int channels;            /* graph->nChannels, 1..32 */
  int platform;            /* 0 generic, 1 SwitchV1, 2 SwitchV1 with vcore 1, 3 SwitchV1 with JBOG id rank % 5,
                            * 4 SwitchV1 with per-rank answers from seed (now and then one rank's vcore
                            * is not 0 or its JBOG id not 1-3) */
  int kanga;               /* comm->nKangaRingChannels, 0..4 */
  int pod;                 /* comm->enablePod */
  int userBufs;            /* give some channels a caller userRanks buffer */
  int fault, faultRank, faultChannel, faultValue;
  int postRanks;           /* ranks Postset runs on: 0 = all, else that many samples */
  int numbering;           /* enum cluster_numbering: CLUSTER_NODE_MAJOR, CLUSTER_ROUND_ROBIN
                            * or CLUSTER_PERMUTED (ranks to (node, local index) slots, from
                            * seed); the node sizes and channel orders are drawn alike */
  /* D25: the variables each rank's Preset sees (set just before it in both
   * libraries, unset after the case), drawn from seed apart from the
   * cluster's stream. */
  int order;               /* NCCOM_RING_NODE_ORDER: 0 unset on every rank, 1 network on every rank,
                            * 2 network on every rank but oddRank (unset or rank there), 3 network
                            * on every rank but oddRank (an unknown value there) */
  int oddRank;             /* reduced % nRanks */
  int locations;           /* NCCOM_RING_LOCATION: 0 unset; 1 each node's location from a small
                            * random tree, on all its ranks; 2 as 1, but some ranks unset or
                            * invalid; 3 as 1, but some ranks carry another node's location */
  int nics;                /* graph->inter: 0 each node's own (random), 1 node 0's on every node,
                            * 2 node 0's on every node but the last */
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
  /* the record (D25, D27) */
  X_REC_FLIP,  /* slot rank's record: byte value % 64 flipped */
  X_REC_COPY,  /* slot rank's record := slot value % nRanks's (a record in the wrong slot) */
  X_REC_STALE, /* slot rank's record keeps its rank but takes the checksum its Preset wrote for
                * another communicator (the same rank's graph with other NICs) */
  /* D28: one rank's own state differs at its Preset (value odd: every rank
   * of its node), or its slot holds another kind of record */
  X_PLATFORM,    /* the family hook answers the other platform to rank's Preset */
  X_ENABLEPOD,   /* rank's comm->enablePod at Preset is the other value */
  X_KANGA,       /* comm->nKangaRingChannels at Preset: (value >> 1) % 5 on every rank but rank, which
                  * has another count (((value >> 1) % 5 + 1 + (value >> 4) % 4) % 5) */
  X_GRAPH,       /* rank is handed its node's graph with inter[0] changed: another fingerprint */
  X_STALE_COUNT, /* slot rank's channel count is not its record's: value even (and fewer than 32
                  * channels), channel n filled from channel 0 (stale slots, one more channel); else
                  * ringRecv[n - 1] = -1 (one fewer) */
  X_REC_VERSION, /* slot rank's record is another version's: value even version 1 with version 1's
                  * byte-wise checksum, odd version 3 with version 2's checksum */
  X_REC_NONE,    /* slot rank's record has no magic (another ring stage): value even all 64 bytes 0,
                  * odd bytes from value (the first word never the magic) */
  X_ENV_PLATFORM, /* rank's Preset (value odd: every rank of its node) runs in a process of its own
                   * without the platform hooks, with NCCOM_RING_PLATFORM set to the value
                   * ((value >> 1) % 5) of xEnvPlatforms in crossrank.c (D28: the variable on one
                   * node only); the other ranks keep the job's hooks */
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
  int policy;              /* D25: 0 no variable; 1 NCCOM_RING_NODE_ORDER=network and each node's
                            * NCCOM_RING_LOCATION (a random tree) on every rank, every node with
                            * node 0's NICs; 2 as 1, but some ranks carry another node's location
                            * or none */
  int pod;                 /* comm->enablePod on every rank (drawn with --pod-order only) */
  int platform;            /* 1: the family hook says TRN3-SwitchV1 (answers pass; kangaRing rows
                            * only with X_KANGA) */
};

#endif
