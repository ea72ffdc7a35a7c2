/*
 * compare.c - one library's outcome against the other's: return codes and
 * WARN texts, fragments byte for byte, communicators field by field; the
 * first difference is described in diffText.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"

/* ------------------------------------------------------------------ */
/* Comparison                                                          */

int silent;       /* shrinking: do not print differences */
char diffText[2048];

__attribute__((format(printf, 1, 2))) int differ(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(diffText, sizeof diffText, fmt, ap);
  va_end(ap);
  return 1;
}

/* Names the communicator member at a byte offset, for difference reports. */
static void comm_field(size_t off, char *out, size_t size) {
  size_t chan = sizeof(struct ncclChannel);
  if (off < MAXCHANNELS * chan) {
    size_t in = off % chan;
    snprintf(out, size, "channels[%zu].%s", off / chan,
             in < 4 ? "ring.prev" : in < 8 ? "ring.next" : in < 16 ? "ring.userRanks" : in < 24 ? "ring.devUserRanks" : "opaque");
  } else if (off < offsetof(struct ncclComm, kangaRing)) {
    snprintf(out, size, "nKangaRingChannels");
  } else if (off < offsetof(struct ncclComm, nMlaInCycle)) {
    size_t i = (off - offsetof(struct ncclComm, kangaRing)) / 4;
    snprintf(out, size, "kangaRing[%zu][%zu]", i / 64, i % 64);
  } else {
    static const struct { size_t off; const char *name; } f[] = {
        {offsetof(struct ncclComm, topo), "topo"},     {offsetof(struct ncclComm, rank), "rank"},
        {offsetof(struct ncclComm, nRanks), "nRanks"}, {offsetof(struct ncclComm, node), "node"},
        {offsetof(struct ncclComm, nNodes), "nNodes"}, {offsetof(struct ncclComm, localRanks), "localRanks"},
        {offsetof(struct ncclComm, nChannels), "nChannels"}, {offsetof(struct ncclComm, enablePod), "enablePod"}};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
      if (off >= f[i].off && off < f[i].off + 4) {
        snprintf(out, size, "%s", f[i].name);
        return;
      }
    snprintf(out, size, "padding");
  }
}

/* Only the spec's two exact strings (D16) are comparable with a real
 * libnccom. */
static int spec_string(const char *text) {
  return strstr(text, "does not loop back to start") || strstr(text, "does not contain rank");
}

int compare_outcome(const char *call, int rank, const struct outcome *a, const struct outcome *b) {
  if (a->res != b->res)
    return differ("%s on rank %d: candidate returned %d, reference %d\n  candidate WARN: %s  reference WARN: %s", call,
                  rank, (int)a->res, (int)b->res, a->warn[0] ? a->warn : "(none)\n", b->warn[0] ? b->warn : "(none)\n");
  if (realMode && !(spec_string(a->warn) || spec_string(b->warn))) return 0;
  if (strcmp(a->warn, b->warn) != 0)
    return differ("%s on rank %d (both returned %d): WARN differs\n  candidate: %s  reference: %s", call, rank,
                  (int)a->res, a->warn[0] ? a->warn : "(none)\n", b->warn[0] ? b->warn : "(none)\n");
  return 0;
}

int compare_bytes(const char *call, int rank, const char *what, const void *a, const void *b, size_t n) {
  const unsigned char *x = a, *y = b;
  for (size_t i = 0; i < n; i++)
    if (x[i] != y[i])
      return differ("%s on rank %d: %s byte %zu: candidate 0x%02x, reference 0x%02x", call, rank, what, i, x[i], y[i]);
  return 0;
}

/* Preset's fragments, byte for byte. A real libnccom does not write
 * channels c >= graph->nChannels of the four ring arrays, where this
 * project's Preset marks them -1 (D23), nor the record (D25), so --real
 * compares those entries as equal. */
int compare_fragments(int rank, const struct ncclTopoRanks *a, const struct ncclTopoRanks *b, int nChannels) {
  struct ncclTopoRanks x = *a, y = *b;
  for (int c = nChannels < 0 ? 0 : nChannels; realMode && c < MAXCHANNELS; c++) {
    x.ringRecv[c] = y.ringRecv[c] = x.ringSend[c] = y.ringSend[c] = 0;
    x.ringPrev[c] = y.ringPrev[c] = x.ringNext[c] = y.ringNext[c] = 0;
  }
  if (realMode) {
    memset((unsigned char *)&x + NCCOM_RING_RECORD_OFFSET, 0, sizeof(struct nccomRingRecord));
    memset((unsigned char *)&y + NCCOM_RING_RECORD_OFFSET, 0, sizeof(struct nccomRingRecord));
  }
  return compare_bytes("ncclTopoPreset", rank, "fragment", &x, &y, sizeof x);
}

/* Compares two communicators: userRanks pointers by role (NULL, the
 * caller's buffer, or the library's) and contents; every other byte as is. */
int compare_comms(const char *call, int rank, const struct ncclComm *a, const struct ncclComm *b,
                         int *const *bufsA, int *const *bufsB) {
  if (a->nRanks != b->nRanks) return differ("%s on rank %d: comm->nRanks candidate %d, reference %d", call, rank, a->nRanks, b->nRanks);
  int nRanks = a->nRanks; /* userRanks buffers hold comm->nRanks ints (D12) */
  for (int ch = 0; ch < MAXCHANNELS; ch++) {
    const int *ua = a->channels[ch].ring.userRanks, *ub = b->channels[ch].ring.userRanks;
    int roleA = ua == NULL ? 0 : bufsA && ua == bufsA[ch] ? 1 : 2;
    int roleB = ub == NULL ? 0 : bufsB && ub == bufsB[ch] ? 1 : 2;
    static const char *roles[] = {"NULL", "the caller's buffer", "a new buffer"};
    if (roleA != roleB)
      return differ("%s on rank %d: channels[%d].ring.userRanks is %s in the candidate, %s in the reference", call,
                    rank, ch, roles[roleA], roles[roleB]);
    if (ua && memcmp(ua, ub, (size_t)nRanks * sizeof(int)) != 0) {
      for (int i = 0; i < nRanks; i++)
        if (ua[i] != ub[i])
          return differ("%s on rank %d: channels[%d].ring.userRanks[%d]: candidate %d, reference %d", call, rank, ch,
                        i, ua[i], ub[i]);
    }
  }
  if (memcmp(a, b, sizeof *a) == 0) return 0; /* the common case: identical, pointers included */
  static struct ncclComm ca, cb;
  memcpy(&ca, a, sizeof ca);
  memcpy(&cb, b, sizeof cb);
  for (int ch = 0; ch < MAXCHANNELS; ch++) ca.channels[ch].ring.userRanks = cb.channels[ch].ring.userRanks = NULL;
  const unsigned char *x = (const unsigned char *)&ca, *y = (const unsigned char *)&cb;
  for (size_t i = 0; i < sizeof ca; i++) {
    if (x[i] != y[i]) {
      char name[64];
      comm_field(i, name, sizeof name);
      size_t base = i & ~(size_t)3;
      int va, vb;
      memcpy(&va, x + base, 4);
      memcpy(&vb, y + base, 4);
      return differ("%s on rank %d: comm byte %zu (%s): candidate %d, reference %d", call, rank, i, name, va, vb);
    }
  }
  return 0;
}

void free_lib_bufs(struct ncclComm *c, int *const *callerBufs) {
  for (int ch = 0; ch < MAXCHANNELS; ch++) {
    int *u = c->channels[ch].ring.userRanks;
    if (u && !(callerBufs && u == callerBufs[ch])) free(u);
    if (callerBufs) free(callerBufs[ch]);
  }
}

/* Every call is followed by a drain, so the pipe is empty when the next
 * begins. */
void call_begin(const char *call, int lib) { set_call(call, lib); }

void call_end(struct outcome *o) {
  char raw[4096];
  drain(raw, sizeof raw);
  warn_text(raw, o->warn, sizeof o->warn);
  set_call(currentCall, -1);
}
