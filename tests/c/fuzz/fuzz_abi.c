/*
 * fuzz_abi.c - a libFuzzer target over the C ABI of build/libnccomring.so
 * (issue 4), built with clang -fsanitize=fuzzer,address,undefined.
 *
 * The first byte picks what the input drives:
 *   0  a whole ring stage on a small cluster (1-4 nodes of 1-6 ranks, 1-8
 *      channels, orders shuffled by the input), with up to three fragment
 *      faults before one rank's Postset;
 *   1  ncclBuildRings on raw nrings/rank/nranks/next;
 *   2  ncclTopoGetNetDev on a raw graph slice, count and channel;
 *   3  ncclTopoPreset on a raw intra slice and comm fields;
 *   4  a whole ring stage with up to three faults in the gathered fragments,
 *      then Postset on every rank: one verdict (D24) - the same result,
 *      channel count, node count and rings (as cycles) on every rank.
 * Whatever the input: no crash, no sanitizer report, no leak; on an error
 * return the caller's memory is unchanged (D11); on success the outputs obey
 * the spec (every ring a Hamiltonian cycle from the rank, prev/next its
 * neighbours, BuildRings rings follow next, GetNetDev the byte-exact
 * formula).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/cluster.h"

struct input {
  const uint8_t *p;
  size_t n;
};

static int take(struct input *in) {
  if (in->n == 0) return 0;
  in->n--;
  return *in->p++;
}
static int in_range(struct input *in, int lo, int hi) { return lo + take(in) % (hi - lo + 1); }

static void die(const char *why) {
  fprintf(stderr, "fuzz_abi: %s\n", why);
  abort();
}

/* Decodes a cluster: 1-4 nodes of 1-6 ranks, 1-8 channels, each channel's
 * local order shuffled by the input; with nics, each channel's entry and
 * exit NIC come from the input too (else 0). */
static struct cluster *fuzz_cluster(struct input *in, int nics, int *localOut, int *channelsOut) {
  int nodes = in_range(in, 1, 4), local = in_range(in, 1, 6), channels = in_range(in, 1, 8);
  int sizes[4] = {local, local, local, local};
  struct cluster *cl = cluster_new(nodes, sizes);
  int order[6];
  for (int c = 0; c < channels; c++) {
    for (int i = 0; i < local; i++) order[i] = i;
    for (int i = local - 1; i > 0; i--) {
      int j = take(in) % (i + 1), t = order[i];
      order[i] = order[j];
      order[j] = t;
    }
    int in_nic = nics ? in_range(in, -1, 7) : 0;
    int out_nic = nics ? in_range(in, -1, 7) : 0;
    cluster_set_channel(cl, c, order, local, in_nic, out_nic);
  }
  cluster_set_nchannels(cl, channels);
  *localOut = local, *channelsOut = channels;
  return cl;
}

static void whole_stage(struct input *in) {
  int local, channels;
  struct cluster *cl = fuzz_cluster(in, 1, &local, &channels);
  int n = cl->nRanks;
  struct ncclTopoRanks *frags = calloc((size_t)n, sizeof *frags);
  struct ncclTopoRanks **all = calloc((size_t)n, sizeof *all);
  struct ncclComm *comm = calloc(1, sizeof *comm);
  for (int r = 0; r < n; r++) {
    memset(comm, 0, sizeof *comm);
    int m = cluster_node_of(cl, r);
    comm->rank = r, comm->nRanks = n, comm->localRanks = local, comm->topo = &cl->systems[m];
    if (ncclTopoPreset(comm, cl->graphs[m], &frags[r]) != ncclSuccess) die("Preset of a valid cluster failed");
    all[r] = &frags[r];
  }
  int rank = take(in) % n, m = cluster_node_of(cl, rank);
  memset(comm, 0, sizeof *comm);
  comm->rank = rank, comm->nRanks = n, comm->localRanks = local, comm->topo = &cl->systems[m];
  struct ncclTopoRanks scratch;
  if (ncclTopoPreset(comm, cl->graphs[m], &scratch) != ncclSuccess) die("Preset failed");
  for (int k = in_range(in, 0, 3); k > 0; k--) {
    int kind = take(in) % 7, who = take(in) % n, c = take(in) % 32, v = take(in) % (n + 4) - 2;
    switch (kind) {
    case 1: frags[who].ringRecv[c] = v; break;
    case 2: all[who] = NULL; break;
    case 3: all[who] = &frags[(v + 2) % n]; break;
    case 4: frags[who].ringSend[c] = v; break;
    case 5: frags[who].ringNext[c] = v; break;
    case 6: frags[who].ringPrev[c] = v; break;
    }
  }
  struct ncclComm *before = malloc(sizeof *before);
  memcpy(before, comm, sizeof *before);
  int *heads = malloc((size_t)n * sizeof(int));
  memset(heads, 0x3C, (size_t)n * sizeof(int));
  int nChannels = -7, nNodes = -7;
  ncclResult_t res = ncclTopoPostset(comm, heads, all, &nChannels, &nNodes);
  if (res != ncclSuccess) {
    if (memcmp(before, comm, sizeof *before) != 0) die("Postset wrote the comm on error");
    for (int i = 0; i < n; i++)
      if (heads[i] != 0x3C3C3C3C) die("Postset wrote nodesFirstRank on error");
    if (nChannels != -7 || nNodes != -7) die("Postset wrote an out-parameter on error");
  } else {
    /* D23: the smallest count of leading channels with ringRecv >= 0. */
    int count = channels;
    for (int r = 0; r < n; r++) {
      int k = 0;
      while (k < count && all[r]->ringRecv[k] >= 0) k++;
      count = k;
    }
    if (nChannels != comm->nChannels || nChannels != (2 * count < 32 ? 2 * count : 32)) die("wrong channel count");
    char *seen = malloc((size_t)n);
    for (int c = 0; c < nChannels; c++) {
      const int *u = comm->channels[c].ring.userRanks;
      memset(seen, 0, (size_t)n);
      if (u[0] != rank) die("userRanks does not start at the rank");
      for (int i = 0; i < n; i++) {
        if (u[i] < 0 || u[i] >= n || seen[u[i]]) die("userRanks is not a permutation");
        seen[u[i]] = 1;
      }
      if (comm->channels[c].ring.next != u[1 % n] || comm->channels[c].ring.prev != u[n - 1])
        die("prev/next are not the ring's neighbours");
    }
    free(seen);
  }
  for (int c = 0; c < MAXCHANNELS; c++) free(comm->channels[c].ring.userRanks);
  free(before);
  free(heads);
  free(comm);
  free(all);
  free(frags);
  cluster_free(cl);
}

/* One rank's Postset in the cross-rank mode: result, counts, and every
 * ring rotated to start at rank 0 (so that ranks can be compared). */
struct verdict {
  ncclResult_t res;
  int nChannels, nNodes;
  int *rings; /* [c * n + i], MAXCHANNELS * n */
};

static void every_rank(struct input *in) {
  int local, channels;
  struct cluster *cl = fuzz_cluster(in, 0, &local, &channels);
  int n = cl->nRanks;
  struct ncclTopoRanks *frags = calloc((size_t)n, sizeof *frags);
  struct ncclTopoRanks **all = calloc((size_t)n, sizeof *all);
  struct ncclComm *comms = calloc((size_t)n, sizeof *comms);
  for (int r = 0; r < n; r++) {
    int m = cluster_node_of(cl, r);
    comms[r].rank = r, comms[r].nRanks = n, comms[r].localRanks = local, comms[r].topo = &cl->systems[m];
    if (ncclTopoPreset(&comms[r], cl->graphs[m], &frags[r]) != ncclSuccess) die("Preset of a valid cluster failed");
    all[r] = &frags[r];
  }
  for (int k = in_range(in, 0, 3); k > 0; k--) {
    int kind = take(in) % 6, who = take(in) % n, c = take(in) % 32, v = take(in) % (n + 4) - 2;
    struct ncclTopoRanks t;
    switch (kind) {
    case 0: frags[who].ringRecv[c] = v; break;
    case 1: frags[who].ringSend[c] = v; break;
    case 2: frags[who].ringPrev[c] = v; break;
    case 3: frags[who].ringNext[c] = v; break;
    case 4: frags[who] = frags[(v + 2) % n]; break;
    case 5:
      t = frags[who];
      frags[who] = frags[(v + 2) % n];
      frags[(v + 2) % n] = t;
      break;
    }
  }
  struct verdict first = {0};
  int *heads = malloc((size_t)n * sizeof(int));
  for (int r = 0; r < n; r++) {
    struct verdict v = {.nChannels = -7, .nNodes = -7, .rings = calloc((size_t)MAXCHANNELS * (size_t)n, sizeof(int))};
    v.res = ncclTopoPostset(&comms[r], heads, all, &v.nChannels, &v.nNodes);
    if (v.res == ncclSuccess) {
      for (int c = 0; c < v.nChannels; c++) {
        const int *u = comms[r].channels[c].ring.userRanks;
        int at = 0;
        while (at < n && u[at] != 0) at++;
        if (at == n || u[0] != r) die("userRanks is not a ring from the rank");
        for (int i = 0; i < n; i++) v.rings[c * n + i] = u[(at + i) % n];
      }
    }
    if (r == 0) {
      first = v;
      continue;
    }
    if (v.res != first.res || v.nChannels != first.nChannels || v.nNodes != first.nNodes ||
        memcmp(v.rings, first.rings, (size_t)MAXCHANNELS * (size_t)n * sizeof(int)) != 0)
      die("two ranks reached different verdicts on the same fragments (D24)");
    free(v.rings);
  }
  free(first.rings);
  for (int r = 0; r < n; r++)
    for (int c = 0; c < MAXCHANNELS; c++) free(comms[r].channels[c].ring.userRanks);
  free(heads);
  free(comms);
  free(all);
  free(frags);
  cluster_free(cl);
}

static void build_rings(struct input *in) {
  int nrings = in_range(in, -1, 34), rank = in_range(in, -2, 13), nranks = in_range(in, -1, 12);
  size_t total = (size_t)(nrings > 0 ? nrings : 0) * (size_t)(nranks > 0 ? nranks : 0);
  int *next = malloc((total ? total : 1) * sizeof(int)), *rings = malloc((total ? total : 1) * sizeof(int));
  for (size_t i = 0; i < total; i++) next[i] = take(in) % (nranks + 3) - 1;
  for (size_t i = 0; i < total; i++) rings[i] = -77;
  ncclResult_t res = ncclBuildRings(nrings, rings, rank, nranks, NULL, next);
  if (res != ncclSuccess) {
    for (size_t i = 0; i < total; i++)
      if (rings[i] != -77) die("BuildRings wrote rings on error");
  } else {
    for (int r = 0; r < nrings; r++) {
      const int *w = rings + (size_t)r * (size_t)nranks;
      if (w[0] != rank) die("ring does not start at rank");
      for (int i = 1; i < nranks; i++)
        if (w[i] != next[(size_t)r * (size_t)nranks + (size_t)w[i - 1]]) die("ring does not follow next");
      if (next[(size_t)r * (size_t)nranks + (size_t)w[nranks - 1]] != rank) die("ring does not close");
    }
  }
  free(next);
  free(rings);
}

static void get_net_dev(struct input *in) {
  static struct ncclTopoGraph g;
  memset(&g, 0, sizeof g);
  g.nChannels = in_range(in, -2, 70);
  for (int i = 0; i < 64; i++) g.inter[i] = take(in);
  for (int i = 0; i < 8192; i += 256) g.intra[i] = take(in) % 8;
  struct ncclTopoSystem sys = {{{in_range(in, -1, 258)}}};
  int rank = take(in) % 8, channel = (int)(int8_t)take(in) * (take(in) + 1), dev = -1234;
  ncclResult_t res = ncclTopoGetNetDev(&sys, rank, &g, channel, &dev);
  if (res != ncclSuccess) {
    if (dev != -1234) die("GetNetDev wrote *dev on error");
    return;
  }
  int c = channel % g.nChannels, count = sys.nodes[0].count;
  if (dev != g.inter[2 * c + (g.intra[c * count] != rank)]) die("GetNetDev is not the spec's formula");
}

static void preset_raw(struct input *in) {
  static struct ncclTopoGraph g;
  memset(&g, 0, sizeof g);
  struct ncclComm *comm = calloc(1, sizeof *comm);
  comm->nRanks = in_range(in, -1, 20);
  comm->rank = in_range(in, -2, 20);
  comm->localRanks = in_range(in, -1, 10) * (take(in) % 4 == 0 ? 40 : 1);
  comm->nKangaRingChannels = in_range(in, -1, 5);
  g.nChannels = in_range(in, -1, 34);
  for (int i = 0; i < 96; i++) g.intra[i] = take(in) % 24 - 2;
  struct ncclComm *before = malloc(sizeof *before);
  memcpy(before, comm, sizeof *before);
  struct ncclTopoRanks frag, canary;
  memset(&frag, 0xA5, sizeof frag);
  memset(&canary, 0xA5, sizeof canary);
  if (ncclTopoPreset(comm, &g, &frag) != ncclSuccess) {
    if (memcmp(before, comm, sizeof *before) != 0) die("Preset wrote the comm on error");
    if (memcmp(&frag, &canary, sizeof frag) != 0) die("Preset wrote the fragment on error");
  } else {
    int n = g.nChannels, L = comm->localRanks;
    for (int c = 0; c < n; c++)
      if (frag.ringRecv[c] != g.intra[c * L] || frag.ringSend[c] != g.intra[c * L + L - 1])
        die("Preset head/tail are not intra[c*L] / intra[c*L+L-1]");
    /* The dead tree region up to the record (D25): +512..+831. */
    if (memcmp(&frag.treeToParent, &canary.treeToParent, NCCOM_RING_RECORD_OFFSET - 512) != 0)
      die("Preset wrote the tree region");
    /* The record, version 2, written whole on every call (D28): with no
     * NCCOM_RING_* set here it asks nothing and has no location; it carries
     * this rank, enablePod (0 here), nKangaRingChannels and the channel count. */
    struct nccomRingRecord rec;
    memcpy(&rec, (const unsigned char *)&frag + NCCOM_RING_RECORD_OFFSET, sizeof rec);
    int want = comm->nKangaRingChannels << NCCOM_RING_RECORD_KANGA_SHIFT | n << NCCOM_RING_RECORD_CHANNELS_SHIFT;
    if (rec.magic != NCCOM_RING_RECORD_MAGIC || rec.version != NCCOM_RING_RECORD_VERSION || rec.rank != comm->rank)
      die("Preset's record has not the magic, the version and its rank");
    if ((rec.flags & ~(NCCOM_RING_RECORD_SWITCHV1 | NCCOM_RING_RECORD_PLATFORM_UNKNOWN)) != want)
      die("Preset's record flags are not its channel and kangaRing counts alone");
    for (int k = 0; k < NCCOM_RING_MAX_LOCATION_LEVELS; k++)
      if (rec.location[k] != 0) die("Preset's record has a location with NCCOM_RING_LOCATION unset");
    /* and its checksum, the header's four lanes */
    uint32_t w[16], lane[4] = {2166136261u, 2166136261u, 2166136261u, 2166136261u};
    memcpy(w, &rec, sizeof w);
    for (int i = 0; i < 16; i++) lane[i % 4] = (lane[i % 4] ^ (i == 7 ? 0 : w[i])) * 16777619u;
    uint32_t sum = ((((lane[0] * 16777619u) ^ lane[1]) * 16777619u ^ lane[2]) * 16777619u ^ lane[3]) * 16777619u;
    if (rec.checksum != sum) die("Preset's record checksum is not the header's");
  }
  free(before);
  free(comm);
}

/* The record (D25) a Preset writes depends on these; mode 3 expects none. */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  unsetenv("NCCOM_RING_NODE_ORDER");
  unsetenv("NCCOM_RING_LOCATION");
  unsetenv("NCCOM_RING_POD_ORDER");
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct input in = {data, size};
  switch (take(&in) % 5) {
  case 0: whole_stage(&in); break;
  case 1: build_rings(&in); break;
  case 2: get_net_dev(&in); break;
  case 3: preset_raw(&in); break;
  case 4: every_rank(&in); break;
  }
  return 0;
}
