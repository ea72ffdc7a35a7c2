/* stage_compare.c - see stage_compare.h. */
#include "stage_compare.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int differences;

__attribute__((format(printf, 2, 3))) static void difference(const char *what, const char *fmt,
                                                             ...) {
  if (differences++ >= 20) return;
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "%s: ", what);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

/* The first differing int of two int arrays, or -1. */
static int first_diff(const int *a, const int *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (a[i] != b[i]) return (int)i;
  return -1;
}

/* Copy of a communicator with its pointer fields that differ between two
 * runs by construction (malloc'ed userRanks) cleared. */
static struct ncclComm *comparable_comm(const struct ncclComm *c) {
  struct ncclComm *copy = malloc(sizeof *copy);
  if (copy == NULL) return NULL;
  memcpy(copy, c, sizeof *copy);
  for (int ch = 0; ch < MAXCHANNELS; ch++) {
    copy->channels[ch].ring.userRanks = NULL;
    copy->channels[ch].ring.devUserRanks = NULL;
  }
  return copy;
}

static void compare_rank(const char *what, const char *nameA, const struct stage *a,
                         const char *nameB, const struct stage *b, int r) {
  int n = a->nRanks;
  const struct ncclComm *ca = a->comms[r], *cb = b->comms[r];
  int i = first_diff((const int *)&a->fragments[r], (const int *)&b->fragments[r],
                     sizeof(struct ncclTopoRanks) / sizeof(int));
  if (i >= 0)
    difference(what, "rank %d: fragment int %d (byte +%d): %s %d, %s %d", r, i, i * 4, nameA,
               ((const int *)&a->fragments[r])[i], nameB, ((const int *)&b->fragments[r])[i]);

  for (int c = 0; c < MAXCHANNELS; c++) {
    const struct ncclRing *ra = &ca->channels[c].ring, *rb = &cb->channels[c].ring;
    if (ra->prev != rb->prev || ra->next != rb->next)
      difference(what, "rank %d channel %d: prev/next %s %d/%d, %s %d/%d", r, c, nameA, ra->prev,
                 ra->next, nameB, rb->prev, rb->next);
    if ((ra->userRanks == NULL) != (rb->userRanks == NULL)) {
      difference(what, "rank %d channel %d: userRanks %s %s, %s %s", r, c, nameA,
                 ra->userRanks ? "set" : "NULL", nameB, rb->userRanks ? "set" : "NULL");
    } else if (ra->userRanks != NULL) {
      int u = first_diff(ra->userRanks, rb->userRanks, (size_t)n);
      if (u >= 0)
        difference(what, "rank %d channel %d: userRanks[%d] %s %d, %s %d", r, c, u, nameA,
                   ra->userRanks[u], nameB, rb->userRanks[u]);
    }
    int da = a->netDev[r * MAXCHANNELS + c], db = b->netDev[r * MAXCHANNELS + c];
    if (da != db)
      difference(what, "rank %d channel %d: netDev %s %d, %s %d", r, c, nameA, da, nameB, db);
  }
  if (ca->nChannels != cb->nChannels || ca->nNodes != cb->nNodes || ca->node != cb->node)
    difference(what, "rank %d: comm nChannels/nNodes/node %s %d/%d/%d, %s %d/%d/%d", r, nameA,
               ca->nChannels, ca->nNodes, ca->node, nameB, cb->nChannels, cb->nNodes, cb->node);
  if (a->nChannels[r] != b->nChannels[r] || a->nNodes[r] != b->nNodes[r])
    difference(what, "rank %d: out-parameters nChannels/nNodes %s %d/%d, %s %d/%d", r, nameA,
               a->nChannels[r], a->nNodes[r], nameB, b->nChannels[r], b->nNodes[r]);
  size_t off = (size_t)r * (size_t)n;
  i = first_diff(&a->nodesFirstRank[off], &b->nodesFirstRank[off], (size_t)n);
  if (i >= 0)
    difference(what, "rank %d: nodesFirstRank[%d] %s %d, %s %d", r, i, nameA,
               a->nodesFirstRank[off + (size_t)i], nameB, b->nodesFirstRank[off + (size_t)i]);

  /* Every other byte of the communicator (kangaRing, channel padding, ...). */
  struct ncclComm *xa = comparable_comm(ca), *xb = comparable_comm(cb);
  if (xa == NULL || xb == NULL) {
    difference(what, "rank %d: out of memory comparing communicators", r);
  } else {
    const unsigned char *pa = (const unsigned char *)xa, *pb = (const unsigned char *)xb;
    for (size_t k = 0; k < sizeof *xa; k++) {
      if (pa[k] != pb[k]) {
        difference(what, "rank %d: ncclComm byte +%zu: %s 0x%02x, %s 0x%02x", r, k, nameA, pa[k],
                   nameB, pb[k]);
        break;
      }
    }
  }
  free(xa);
  free(xb);
}

int stage_compare(const char *what, const char *nameA, const struct stage *a, const char *nameB,
                  const struct stage *b) {
  differences = 0;
  if (a->nRanks != b->nRanks) {
    difference(what, "nRanks %s %d, %s %d", nameA, a->nRanks, nameB, b->nRanks);
    return differences;
  }
  if (a->failedResult != b->failedResult || strcmp(a->failure, b->failure) != 0) {
    difference(what, "outcome %s %d (%s), %s %d (%s)", nameA, (int)a->failedResult,
               a->failure[0] ? a->failure : "all calls succeeded", nameB, (int)b->failedResult,
               b->failure[0] ? b->failure : "all calls succeeded");
    return differences;
  }
  if (a->failure[0] != '\0') return 0; /* same failure, same call, same rank */
  for (int r = 0; r < a->nRanks; r++) compare_rank(what, nameA, a, nameB, b, r);
  return differences;
}
