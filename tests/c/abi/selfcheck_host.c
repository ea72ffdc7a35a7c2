/*
 * selfcheck_host.c - libnccomring's layout self-check (NCCOM_RING_ABI_CHECK,
 * docs/errors.md E5) as an operator meets it: run with
 * LD_PRELOAD=build/libnccomring.so, the host dlopens a stand-in
 * libnccom.so.2 (fixture.c built -g with that SONAME) with RTLD_LOCAL and
 * runs the ring stage through the stand-in's own caller,
 * ncclFixtureInitRings, whose calls reach libnccomring through its PLT.
 *
 * Built twice from fixture.h, so that its communicators are laid out as the
 * stand-in lays them out: selfcheck-host-match (the documented layout) and
 * selfcheck-host-moved (-DFIXTURE_MOVE_RANK: rank and nRanks 4 bytes
 * lower). Each mode sets the variables itself after load, before the first
 * call, as a launcher would:
 *
 *   refuse LIB [VALUE] (moved) default enforce: Preset through the
 *                     stand-in and Postset refuse with ncclInvalidUsage and
 *                     one WARN each naming ncclComm.rank, +17616 expected,
 *                     +17612 in LIB, and `nccom-abi profile`; nothing is
 *                     written; BuildRings and GetNetDev (no ncclComm) still
 *                     run. VALUE: an unknown NCCOM_RING_ABI_CHECK, reported
 *                     once and enforced.
 *   run LIB [PROFILE] the whole stage runs correctly (with PROFILE as
 *                     NCCOM_RING_LAYOUT: the moved stand-in's own profile);
 *                     one INFO line says the layout matches LIB.
 *   off LIB           (moved) NCCOM_RING_ABI_CHECK=off: nothing is checked,
 *                     and the moved layout read at D3's offsets is refused
 *                     for its rank (S5, P3), not by the check.
 *   warn LIB          (moved) NCCOM_RING_ABI_CHECK=warn: one WARN for the
 *                     process, then the calls proceed (to S5 and P3).
 *   unverified [LIB]  no libnccom.so.2 mapped (or LIB, one without DWARF):
 *                     the stage runs and one INFO line says the layout was
 *                     not verified, and why.
 *   hostile LIB WANT  (issue 21) LIB is a crafted libnccom.so.2 (a
 *                     compressed-section bomb, a DWARF type cycle:
 *                     internal/elfcraft/mkhostile): the first Preset returns
 *                     ncclSuccess within 30 s of the process's CPU time
 *                     (a hang that uses none: the watchdog make runs this
 *                     under), with one WARN that the layout
 *                     was not verified, saying WANT; the peak RSS stays
 *                     under 512 MB. Before, these files aborted the host
 *                     (exit 134) or hung it.
 *   replaced LIB OTHER (issue 21) a copy of LIB is loaded from a directory
 *                     of its own, then the file at its path is replaced by
 *                     OTHER (renamed over it, as an upgrade would): the
 *                     check does not read OTHER's DWARF for the mapped LIB;
 *                     one WARN says the file is not the library mapped,
 *                     and the stage runs.
 *   forged LIB OTHER  (issue 34, F5; moved) LIB and OTHER carry one build
 *                     ID (linked with the same --build-id), OTHER in the
 *                     matching layout: a copy of LIB is loaded from a
 *                     directory of its own, then OTHER is renamed over its
 *                     path. The check must not read OTHER for the mapped
 *                     LIB (before issue 34 it did, and said "matches", and
 *                     the calls ran over LIB at D3's offsets): one WARN
 *                     says the file at the path is not the file mapped,
 *                     naming both devices and inodes, and no line says
 *                     "matches". The calls run, unverified: Preset reads
 *                     the moved layout at D3's offsets and refuses its
 *                     rank (S5).
 *   profile LIB PROFILE WANT (issue 21) NCCOM_RING_LAYOUT=PROFILE, a
 *                     profile the library must refuse (a link, a FIFO,
 *                     /dev/zero, too big, another build's, an offset at
 *                     2^63-4): Preset returns ncclInvalidUsage within 10 s
 *                     of the process's CPU time (/dev/zero is not read to
 *                     its end; a FIFO waited on uses none: the watchdog
 *                     profile_check.sh runs this under ends that) with the
 *                     E4 WARN saying WANT, and writes nothing.
 *   bench LIB         the first call with the check and the steady state
 *                     after it: times and peak RSS (BENCHMARKS.md).
 *   job LIB           (match; `make operator-demo`, under the preload shim)
 *                     a job of 4 nodes x 4 ranks, every rank's Preset,
 *                     Postset and GetNetDev called through the stand-in's
 *                     ncclFixturePreset/Postset/GetNetDev, each node's
 *                     NCCOM_RING_LOCATION set before its ranks' Presets
 *                     (alternating leafA, leafB). The library's log, its
 *                     line style and NCCOM_RING_DUMP are the caller's: this
 *                     mode sets none of them. Prints one line.
 *
 * The cluster: one node of 4 ranks, one graph channel (fixture.c's caller
 * has room for one node's first rank). Exit 0 when every check held.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../common/host.h"
#include "fixture.h"

#define NRANKS 4
#define SENTINEL 4 /* collNetSupport: in the moved layout it sits at D3's nRanks */

typedef ncclResult_t (*preset_fn)(ncclComm *, ncclTopoGraph *, ncclTopoRanks *);
typedef ncclResult_t (*postset_fn)(ncclComm *, int *, ncclTopoRanks **, int *, int *);
typedef ncclResult_t (*build_rings_fn)(int, int *, int, int, int *, int *);
typedef ncclResult_t (*net_dev_fn)(ncclTopoSystem *, int, ncclTopoGraph *, int, int *);
typedef ncclResult_t (*init_rings_fn)(ncclComm *, ncclTopoGraph *, ncclTopoRanks **, int *);

/* libnccomring's four (the preloaded definitions) and the stand-in's caller. */
static preset_fn preset;
static postset_fn postset;
static build_rings_fn build_rings;
static net_dev_fn get_net_dev;
static init_rings_fn init_rings;

static const char *lib_path; /* the stand-in, as dlopen was given it */
static char log_path[] = "/tmp/selfcheck-log-XXXXXX";
static long log_seen;        /* bytes of the log already looked at */
static int failures;

#define CHECK(cond, ...) CHECK_AS("selfcheck", 12, cond, __VA_ARGS__)

/* ---- the log ---- */

/* The lines the library appended to the log since the last look, in
 * *lines (each ending in '\n'); returns how many hold " NCCL WARN " and
 * how many " NCCL INFO ". */
struct news {
  char text[16384];
  int warns, infos;
};

static void read_news(struct news *n) {
  memset(n, 0, sizeof *n);
  FILE *f = fopen(log_path, "r");
  if (f == NULL) return;
  fseek(f, log_seen, SEEK_SET);
  size_t got = fread(n->text, 1, sizeof n->text - 1, f);
  n->text[got] = '\0';
  log_seen += (long)got;
  fclose(f);
  for (char *p = n->text; (p = strstr(p, " NCCL WARN ")) != NULL; p++) n->warns++;
  for (char *p = n->text; (p = strstr(p, " NCCL INFO ")) != NULL; p++) n->infos++;
}

/* The whole log, from its start (64 KB of it at most). */
static const char *whole_log(void) {
  static char whole[1 << 16];
  FILE *f = fopen(log_path, "r");
  size_t got = f ? fread(whole, 1, sizeof whole - 1, f) : 0;
  whole[got] = '\0';
  if (f) fclose(f);
  return whole;
}

/* The text of the first WARN in n ("" when none), without the prefix. */
static const char *first_warn(const struct news *n, char *out, size_t size) {
  const char *p = strstr(n->text, " NCCL WARN ");
  out[0] = '\0';
  if (p) {
    p += strlen(" NCCL WARN ");
    size_t len = strcspn(p, "\n");
    snprintf(out, size, "%.*s", (int)len, p);
  }
  return out;
}

static int count(const char *haystack, const char *needle) {
  int k = 0;
  for (const char *p = haystack; (p = strstr(p, needle)) != NULL; p++) k++;
  return k;
}

/* ---- setup ---- */

static void *need(void *handle, const char *name) { return need_symbol("selfcheck", handle, name); }

/* The four from the global scope, where LD_PRELOAD put libnccomring. */
static void find_library(void) {
  preset = (preset_fn)need(RTLD_DEFAULT, "ncclTopoPreset");
  postset = (postset_fn)need(RTLD_DEFAULT, "ncclTopoPostset");
  build_rings = (build_rings_fn)need(RTLD_DEFAULT, "ncclBuildRings");
  get_net_dev = (net_dev_fn)need(RTLD_DEFAULT, "ncclTopoGetNetDev");
  Dl_info info;
  if (!dladdr((void *)preset, &info) || strstr(info.dli_fname, "libnccomring") == NULL) {
    fprintf(stderr, "selfcheck: run with LD_PRELOAD=build/libnccomring.so\n");
    exit(2);
  }
}

/* dlopen the stand-in as a host would (RTLD_LOCAL: its symbols stay out of
 * the global scope; only dl_iterate_phdr sees it). */
static void load_standin(const char *path) {
  lib_path = path;
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) {
    fprintf(stderr, "selfcheck: %s\n", dlerror());
    exit(2);
  }
  init_rings = (init_rings_fn)need(h, "ncclFixtureInitRings");
}

static void remove_log(void) { unlink(log_path); }

/* After load, before the first call: NCCL_DEBUG into a file of our own. */
static void start_log(const char *abiCheck, const char *profile) {
  if (log_to_temp_file(log_path, "INFO") != 0) exit(2);
  atexit(remove_log);
  setenv("NCCL_DEBUG_SUBSYS", "INIT,ENV", 1);
  if (abiCheck) setenv("NCCOM_RING_ABI_CHECK", abiCheck, 1);
  if (profile) setenv("NCCOM_RING_LAYOUT", profile, 1);
}

/* ---- the cluster ---- */

static ncclTopoGraph graph;
static ncclTopoSystem sys;
static ncclComm comms[NRANKS];
static ncclTopoRanks frags[NRANKS];
static ncclTopoRanks *all[NRANKS];

static void init_cluster(void) {
  graph.pattern = 4, graph.nChannels = 1;
  for (int i = 0; i < NRANKS; i++) graph.intra[i] = i;
  graph.inter[0] = 10, graph.inter[1] = 11;
  sys.nodes[0].count = NRANKS;
  memset(frags, 0xA5, sizeof frags);
  for (int r = 0; r < NRANKS; r++) {
    memset(&comms[r], 0, sizeof comms[r]);
    comms[r].rank = r, comms[r].nRanks = NRANKS, comms[r].localRanks = NRANKS;
    comms[r].collNetSupport = SENTINEL;
    comms[r].topo = &sys;
    all[r] = &frags[r];
  }
}

/* Rank r's fragment as Preset writes it (D5, D23). */
static void check_fragment(int r) {
  const ncclTopoRanks *f = &frags[r];
  CHECK(f->ringRecv[0] == 0 && f->ringSend[0] == NRANKS - 1, "rank %d: head %d tail %d", r, f->ringRecv[0],
        f->ringSend[0]);
  CHECK(f->ringPrev[0] == (r > 0 ? r - 1 : -1) && f->ringNext[0] == (r < NRANKS - 1 ? r + 1 : -1),
        "rank %d: prev %d next %d", r, f->ringPrev[0], f->ringNext[0]);
  CHECK(f->ringRecv[1] == -1, "rank %d: channel 1 not marked absent (D23)", r);
}

/* Rank r's communicator after Postset, read at the stand-in's offsets. */
static void check_comm(int r) {
  const ncclComm *c = &comms[r];
  CHECK(c->nChannels == 2 && c->nNodes == 1 && c->node == 0, "rank %d: nChannels %d nNodes %d node %d", r,
        c->nChannels, c->nNodes, c->node);
  CHECK(c->rank == r && c->nRanks == NRANKS && c->collNetSupport == SENTINEL, "rank %d: inputs changed", r);
  for (int ch = 0; ch < 2; ch++) {
    const struct ncclRing *ring = &c->channels[ch].ring;
    CHECK(ring->prev == (r + NRANKS - 1) % NRANKS && ring->next == (r + 1) % NRANKS, "rank %d ch %d: prev %d next %d",
          r, ch, ring->prev, ring->next);
    for (int i = 0; ring->userRanks && i < NRANKS; i++)
      CHECK(ring->userRanks[i] == (r + i) % NRANKS, "rank %d ch %d: userRanks[%d] = %d", r, ch, i, ring->userRanks[i]);
    CHECK(ring->userRanks != NULL, "rank %d ch %d: no userRanks", r, ch);
  }
}

static const char overlap[] = "ncclBuildRings: rings and next overlap";

/* The whole stage: each rank's Preset called by the host (the fragments of
 * an AllGather), then, when a stand-in is loaded, each rank's stage through
 * its caller (Preset again, Postset, then its BuildRings with rings passed
 * as next, which libnccomring refuses, B5a: the one WARN of each such
 * call, and proof that Preset and Postset before it succeeded); without
 * one, Postset called by the host. */
static void run_stage(void) {
  struct news n;
  char w[1024];
  init_cluster();
  for (int r = 0; r < NRANKS; r++) {
    ncclResult_t res = preset(&comms[r], &graph, &frags[r]);
    read_news(&n);
    CHECK(res == ncclSuccess && n.warns == 0, "Preset of rank %d: %d, WARN '%s'", r, res, first_warn(&n, w, sizeof w));
    check_fragment(r);
  }
  for (int r = 0; r < NRANKS; r++) {
    int rings[2 * NRANKS], heads[NRANKS], nChannels = 0, nNodes = 0;
    if (init_rings) {
      ncclResult_t res = init_rings(&comms[r], &graph, all, rings);
      read_news(&n);
      CHECK(res == ncclInvalidArgument && n.warns == 1 && strstr(first_warn(&n, w, sizeof w), overlap) == w,
            "rank %d through the stand-in: %d, %d WARNs, '%s'", r, res, n.warns, w);
    } else {
      ncclResult_t res = postset(&comms[r], heads, all, &nChannels, &nNodes);
      read_news(&n);
      CHECK(res == ncclSuccess && n.warns == 0 && nChannels == 2 && nNodes == 1, "Postset of rank %d: %d", r, res);
    }
    check_fragment(r);
    check_comm(r);
  }
}

static void free_rings(void) {
  for (int r = 0; r < NRANKS; r++)
    for (int ch = 0; ch < MAXCHANNELS; ch++) {
      free(comms[r].channels[ch].ring.userRanks);
      comms[r].channels[ch].ring.userRanks = NULL;
    }
}

/* ---- modes ---- */

/* The E5 text, as docs/errors.md spells it, for fn over the moved stand-in. */
static void e5_text(char *out, size_t size, const char *fn, const char *verb) {
  snprintf(out, size,
           "%s: %s %s, whose DWARF has ncclComm.rank at +17612 (4 bytes) where the layout in use has +17616 "
           "(4 bytes; ASSUMED, D3), and 1 more difference; write its offsets with `nccom-abi profile %s > "
           "layout.json` and set NCCOM_RING_LAYOUT=layout.json",
           fn, verb, lib_path, lib_path);
}

/* n holds exactly the WARN line "<prefix> NCCL WARN <text>\n". */
static int has_warn(const struct news *n, const char *text) {
  char line[2200];
  snprintf(line, sizeof line, " NCCL WARN %s\n", text);
  return count(n->text, line) == 1;
}

static int refuse(const char *lib, const char *value) {
  load_standin(lib);
  start_log(value, NULL);
  init_cluster();
  struct news n;
  char w[2048], want[2048], bad[256];
  static ncclComm before;
  memcpy(&before, &comms[1], sizeof before);

  /* Preset through the stand-in's caller, twice: refused every time. An
   * unknown NCCOM_RING_ABI_CHECK is reported once and enforced. */
  for (int i = 0; i < 2; i++) {
    int rings[2 * NRANKS];
    ncclResult_t res = init_rings(&comms[1], &graph, all, rings);
    read_news(&n);
    e5_text(want, sizeof want, "ncclTopoPreset", "refusing to run over");
    int extra = i == 0 && value != NULL;
    CHECK(res == ncclInvalidUsage, "Preset through the stand-in returned %d", res);
    CHECK(n.warns == 1 + extra && has_warn(&n, want), "%d WARNs:\n  got  '%s'\n  want '%s'", n.warns,
          first_warn(&n, w, sizeof w), want);
    snprintf(bad, sizeof bad, "NCCOM_RING_ABI_CHECK=\"%s\" is not one of enforce, warn, off; enforcing",
             value ? value : ""); /* quoted (docs/errors.md %Q); the test's value is plain ASCII */
    CHECK(!extra || has_warn(&n, bad), "the unknown value's WARN: %s", n.text);
    CHECK(i > 0 || count(n.text, "the ring-stage layout in use (ASSUMED offsets from D3) differs from") == 1,
          "the check's INFO line: %s", n.text);
  }
  int heads[NRANKS] = {-5, -5, -5, -5}, nChannels = -7, nNodes = -7;
  ncclResult_t res = postset(&comms[1], heads, all, &nChannels, &nNodes);
  read_news(&n);
  e5_text(want, sizeof want, "ncclTopoPostset", "refusing to run over");
  CHECK(res == ncclInvalidUsage, "Postset returned %d", res);
  CHECK(n.warns == 1 && has_warn(&n, want), "%d WARNs:\n  got  '%s'\n  want '%s'", n.warns,
        first_warn(&n, w, sizeof w), want);
  CHECK(memcmp(&before, &comms[1], sizeof before) == 0, "a refused call wrote the communicator");
  CHECK(frags[1].ringRecv[0] == (int)0xA5A5A5A5, "a refused Preset wrote the fragment");
  CHECK(heads[0] == -5 && nChannels == -7 && nNodes == -7, "a refused Postset wrote its outputs");

  /* No ncclComm: never refused by the check. */
  int next[NRANKS] = {1, 2, 3, 0}, ring[NRANKS], dev = -1;
  res = build_rings(1, ring, 0, NRANKS, NULL, next);
  CHECK(res == ncclSuccess && ring[3] == 3, "BuildRings returned %d", res);
  res = get_net_dev(&sys, 1, &graph, 0, &dev);
  CHECK(res == ncclSuccess && dev == 11, "GetNetDev returned %d, dev %d", res, dev);
  read_news(&n);
  CHECK(n.warns == 0, "BuildRings or GetNetDev warned: %s", n.text);
  if (!failures)
    printf("selfcheck: over a libnccom.so.2 whose ncclComm moved, Preset and Postset refuse, naming the field; "
           "BuildRings and GetNetDev run\n");
  return failures ? 1 : 0;
}

static int run(const char *lib, const char *profile) {
  load_standin(lib);
  start_log(NULL, profile);
  run_stage();
  free_rings();
  struct news n;
  read_news(&n);
  CHECK(n.warns == 0, "%s", n.text);
  const char *whole = whole_log();
  char want[1024];
  snprintf(want, sizeof want, "NCCL INFO ncclTopoPreset: the ring-stage layout in use (ASSUMED offsets from %s) matches %s",
           profile ? "NCCOM_RING_LAYOUT" : "D3", lib);
  CHECK(count(whole, want) == 1 && count(whole, "the ring-stage layout in use") == 1, "want one '%s' in:\n%s", want,
        whole);
  if (!failures)
    printf("selfcheck: the stage runs over %s%s\n", lib, profile ? " with its NCCOM_RING_LAYOUT profile" : "");
  return failures ? 1 : 0;
}

/* off: no check; warn: one WARN, then the same as off. Either way the
 * moved layout, read at D3's offsets, gives rank 4 of 4 ranks. */
static int proceed(const char *lib, const char *mode) {
  load_standin(lib);
  start_log(strcmp(mode, "warn") == 0 ? "Warn" : mode, NULL); /* any case */
  init_cluster();
  struct news n;
  char w[2048], want[2048];
  int rings[2 * NRANKS];
  ncclResult_t res = init_rings(&comms[1], &graph, all, rings);
  read_news(&n);
  CHECK(res == ncclInvalidArgument, "Preset through the stand-in returned %d", res);
  const char *s5 = "ncclTopoPreset: comm->rank 4 is outside [0, 4)";
  if (strcmp(mode, "warn") == 0) {
    e5_text(want, sizeof want, "ncclTopoPreset", "NCCOM_RING_ABI_CHECK=warn: running anyway over");
    CHECK(n.warns == 2 && strcmp(first_warn(&n, w, sizeof w), want) == 0, "%d WARNs:\n  got  '%s'\n  want '%s'",
          n.warns, w, want);
    CHECK(strstr(n.text, s5) > strstr(n.text, "running anyway"), "the call proceeded after the WARN: %s", n.text);
  } else {
    CHECK(n.warns == 1 && strcmp(first_warn(&n, w, sizeof w), s5) == 0, "%d WARNs: '%s'", n.warns, w);
    CHECK(count(n.text, "the ring-stage layout in use") == 0, "off checked something: %s", n.text);
  }
  int heads[NRANKS], nChannels = 0, nNodes = 0;
  res = postset(&comms[1], heads, all, &nChannels, &nNodes);
  read_news(&n);
  CHECK(res == ncclInvalidArgument && n.warns == 1 &&
            strcmp(first_warn(&n, w, sizeof w), "ncclTopoPostset: comm->rank 4 is outside [0, 4)") == 0,
        "Postset: %d, %d WARNs, '%s'", res, n.warns, w);
  if (!failures)
    printf("selfcheck: NCCOM_RING_ABI_CHECK=%s: %s, and the calls proceed (the moved layout read at D3's offsets "
           "is refused for its rank)\n",
           mode, strcmp(mode, "warn") == 0 ? "one WARN" : "nothing checked");
  return failures ? 1 : 0;
}

static int unverified(const char *lib) {
  if (lib) load_standin(lib);
  start_log(NULL, NULL);
  run_stage();
  free_rings();
  run_stage(); /* later calls: no second line */
  free_rings();
  const char *whole = whole_log();
  char want[1024];
  if (lib)
    snprintf(want, sizeof want,
             "NCCL INFO ncclTopoPreset: the ring-stage layout in use was not verified against libnccom's DWARF: %s has "
             "no DWARF (.debug_info): it is stripped or was built without -g; build libnccom with -g",
             lib);
  else
    snprintf(want, sizeof want,
             "NCCL INFO ncclTopoPreset: the ring-stage layout in use was not verified against libnccom's DWARF: no "
             "libnccom.so.2 is mapped in this process\n");
  CHECK(count(whole, want) == 1 && count(whole, "the ring-stage layout in use") == 1, "want one '%s' in:\n%s", want,
        whole);
  if (!failures) printf("selfcheck: %s: one INFO line, the stage runs\n", lib ? "a libnccom.so.2 without DWARF" : "no libnccom.so.2");
  return failures ? 1 : 0;
}

/* ---- issue 21: crafted files ---- */

static double now_ms(void);
static double cpu_ms(void);
static long vm_kb(const char *field);

static int hostile(const char *lib, const char *want_why) {
  load_standin(lib);
  start_log(NULL, NULL);
  init_cluster();
  double t0 = now_ms(), c0 = cpu_ms();
  ncclResult_t res = preset(&comms[0], &graph, &frags[0]);
  double took = now_ms() - t0, cpu = cpu_ms() - c0;
  long hwm = vm_kb("VmHWM");
  struct news n;
  char w[2048], want[2048];
  read_news(&n);
  snprintf(want, sizeof want, "ncclTopoPreset: the ring-stage layout in use was not verified against libnccom's DWARF: %s: %s",
           lib, want_why);
  CHECK(res == ncclSuccess, "the first Preset returned %d", res);
  /* A bound on work (a bomb inflated, a cycle walked), so on CPU time: the
   * wall clock would time the machine too. */
  CHECK(cpu < 30000, "the first Preset used %.0f ms of CPU (%.0f ms of wall clock)", cpu, took);
  CHECK(n.warns == 1 && strstr(first_warn(&n, w, sizeof w), want) == w, "%d WARNs:\n  got  '%s'\n  want '%s...'", n.warns,
        w, want);
  CHECK(hwm > 0 && hwm < 512 * 1024, "peak RSS %ld kB", hwm);
  check_fragment(0);
  if (!failures)
    printf("selfcheck: crafted %s: the first Preset returned in %.0f ms (%.0f ms of CPU, peak RSS %ld MB), one WARN: "
           "not verified\n",
           strrchr(lib, '/') ? strrchr(lib, '/') + 1 : lib, took, cpu, hwm / 1024);
  return failures ? 1 : 0;
}

static int copy_file(const char *from, const char *to) {
  FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
  int ok = in && out;
  char buf[65536];
  size_t got;
  while (ok && (got = fread(buf, 1, sizeof buf, in)) > 0) ok = fwrite(buf, 1, got, out) == got;
  if (in) fclose(in);
  if (out && fclose(out) != 0) ok = 0;
  return ok ? 0 : -1;
}

static char replaced_dir[] = "/tmp/selfcheck-replaced-XXXXXX";
static char replaced_lib[512], replaced_tmp[512];

static void remove_replaced(void) {
  unlink(replaced_lib);
  unlink(replaced_tmp);
  rmdir(replaced_dir);
}

/* load_then_replace maps a copy of lib, then renames a copy of other over
 * the mapped file's path (replaced_lib) and calls Preset on rank 0: the
 * self-check then finds other at the path of the object mapped. 0, or 2
 * when the files cannot be made; *res is Preset's result, *n what it
 * logged, want the start of the WARN that says the layout is unverified,
 * up to the file's path and then (how the file differs). */
static int load_then_replace(const char *lib, const char *other, ncclResult_t *res, struct news *n, char *want,
                             size_t size, const char *then) {
  if (mkdtemp(replaced_dir) == NULL) return 2;
  snprintf(replaced_lib, sizeof replaced_lib, "%s/libnccom.so.2", replaced_dir);
  snprintf(replaced_tmp, sizeof replaced_tmp, "%s/libnccom.so.2.new", replaced_dir);
  atexit(remove_replaced);
  if (copy_file(lib, replaced_lib) != 0) return 2;
  load_standin(replaced_lib);
  if (copy_file(other, replaced_tmp) != 0 || rename(replaced_tmp, replaced_lib) != 0) return 2;
  start_log(NULL, NULL);
  init_cluster();
  *res = preset(&comms[0], &graph, &frags[0]);
  read_news(n);
  snprintf(want, size,
           "ncclTopoPreset: the ring-stage layout in use was not verified against libnccom's DWARF: the file at %s %s",
           replaced_lib, then);
  return 0;
}

static int replaced(const char *lib, const char *other) {
  ncclResult_t res;
  struct news n;
  char w[2048], want[1024];
  if (load_then_replace(lib, other, &res, &n, want, sizeof want, "(build ID ") != 0) return 2;
  CHECK(res == ncclSuccess, "Preset returned %d", res);
  CHECK(n.warns == 1 && strstr(first_warn(&n, w, sizeof w), want) == w &&
            strstr(w, ") is not the libnccom.so.2 mapped in this process (build ID ") != NULL &&
            strstr(w, "): it was replaced after it was loaded") != NULL,
        "%d WARNs:\n  got  '%s'\n  want '%s...'", n.warns, w, want);
  check_fragment(0);
  if (!failures)
    printf("selfcheck: libnccom.so.2 replaced after load: not verified (one WARN), the other file's DWARF not read\n");
  return failures ? 1 : 0;
}

/* Issue 34 (F5): another file with the mapped library's build ID put at its
 * path after load. */
static int forged(const char *lib, const char *other) {
  ncclResult_t res;
  struct news n;
  char w[2048], want[1024];
  if (load_then_replace(lib, other, &res, &n, want, sizeof want, "(device ") != 0) return 2;
  CHECK(count(n.text, "(ASSUMED offsets from D3) matches") == 0, "the check said the file put at the path matches:\n%s", n.text);
  CHECK(strstr(first_warn(&n, w, sizeof w), want) == w && strstr(w, ") is not the file mapped (device ") != NULL &&
            strstr(w, "), though it carries the mapped libnccom.so.2's build ID ") != NULL &&
            strstr(w, ": another file was put at its path after it was loaded") != NULL,
        "the first WARN:\n  got  '%s'\n  want '%s...'", w, want);
  /* Unverified, the calls run: rank read at D3's +17616 is the moved
   * layout's nRanks. */
  CHECK(res == ncclInvalidArgument && n.warns == 2 && count(n.text, "ncclTopoPreset: comm->rank 4 is outside [0, 4)") == 1,
        "Preset returned %d with %d WARNs:\n%s", res, n.warns, n.text);
  if (!failures)
    printf("selfcheck: another file with the mapped libnccom.so.2's build ID put at its path: not verified (one WARN "
           "naming both inodes), never \"matches\"\n");
  return failures ? 1 : 0;
}

static int refused_profile(const char *lib, const char *profile, const char *want_why) {
  load_standin(lib);
  start_log(NULL, profile);
  init_cluster();
  static ncclComm before;
  memcpy(&before, &comms[1], sizeof before);
  memset(&frags[1], 0xA5, sizeof frags[1]);
  double t0 = now_ms(), c0 = cpu_ms();
  ncclResult_t res = preset(&comms[1], &graph, &frags[1]);
  double took = now_ms() - t0, cpu = cpu_ms() - c0;
  struct news n;
  char w[2048], want[2048];
  read_news(&n);
  snprintf(want, sizeof want, "ncclTopoPreset: NCCOM_RING_LAYOUT=%s: %s", profile, want_why);
  CHECK(res == ncclInvalidUsage, "Preset returned %d", res);
  /* A file read to its end is work, so CPU time bounds it; a wait on a
   * FIFO uses none, and the watchdog's blocked limit ends it. */
  CHECK(cpu < 10000, "Preset used %.0f ms of CPU (%.0f ms of wall clock)", cpu, took);
  CHECK(n.warns == 1 && strstr(first_warn(&n, w, sizeof w), want) == w &&
            strstr(w, "; write one with `nccom-abi profile LIB`, or unset it for D3's offsets") != NULL,
        "%d WARNs:\n  got  '%s'\n  want '%s...'", n.warns, w, want);
  CHECK(memcmp(&before, &comms[1], sizeof before) == 0 && frags[1].ringRecv[0] == (int)0xA5A5A5A5,
        "a refused call wrote");
  if (!failures) printf("selfcheck: NCCOM_RING_LAYOUT refused: %s\n", want_why);
  return failures ? 1 : 0;
}

/* ---- bench ---- */

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The CPU time of the whole process (every thread: the library's work runs
 * on the Go runtime's threads too), in ms. */
static double cpu_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* VmHWM (peak) or VmRSS of this process, in kB. */
static long vm_kb(const char *field) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kb = -1;
  size_t len = strlen(field);
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, field, len) == 0 && line[len] == ':') kb = atol(line + len + 1);
  if (f) fclose(f);
  return kb;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int bench(const char *lib) {
  load_standin(lib);
  init_cluster();
  usleep(300000); /* the Go runtime, started at load, settles */
  long hwm0 = vm_kb("VmHWM"), rss0 = vm_kb("VmRSS");
  double t0 = now_ms();
  ncclResult_t res = preset(&comms[0], &graph, &frags[0]);
  double first = now_ms() - t0;
  long hwm1 = vm_kb("VmHWM"), rss1 = vm_kb("VmRSS");
  CHECK(res == ncclSuccess, "first Preset returned %d", res);
  enum { N = 2001 };
  static double t[N];
  for (int i = 0; i < N; i++) {
    double s = now_ms();
    res = preset(&comms[i % NRANKS], &graph, &frags[i % NRANKS]);
    t[i] = (now_ms() - s) * 1e3;
    if (res != ncclSuccess) failures++;
  }
  qsort(t, N, sizeof t[0], cmp_double);
  const char *mode = getenv("NCCOM_RING_ABI_CHECK");
  printf("selfcheck bench (NCCOM_RING_ABI_CHECK=%s): first Preset %.2f ms; then median %.1f us, p90 %.1f us over %d "
         "calls; VmHWM %ld -> %ld kB (+%ld), VmRSS %ld -> %ld kB after the first call\n",
         mode ? mode : "enforce", first, t[N / 2], t[N * 9 / 10], N, hwm0, hwm1, hwm1 - hwm0, rss0, rss1);
  return failures ? 1 : 0;
}

/* ---- the operator demo's job ---- */

enum { JOB_NODES = 4, JOB_LOCAL = 4, JOB_RANKS = JOB_NODES * JOB_LOCAL, JOB_CHANNELS = 2 };

typedef ncclResult_t (*fx_postset_fn)(ncclComm *, int *, ncclTopoRanks **, int *, int *);

static ncclTopoGraph job_graphs[JOB_NODES];
static ncclTopoSystem job_systems[JOB_NODES];
static ncclComm job_comms[JOB_RANKS];
static ncclTopoRanks job_frags[JOB_RANKS];
static ncclTopoRanks *job_all[JOB_RANKS];

/* Rank r's NCCOM_RING_LOCATION (D25), as a launcher gives each node its
 * own: read at every Preset, and by the wiring dump at Postset. Nodes
 * alternate between two leaves, so rank order crosses between them at
 * every node boundary (nccom-rings score shows the excess). */
static void job_location(int r) {
  setenv("NCCOM_RING_LOCATION", (r / JOB_LOCAL) % 2 ? "spine0/leafB" : "spine0/leafA", 1);
}

/* The stand-in's phases, not the global four: a job calls libnccom, and
 * libnccom calls the ring stage (through its PLT, where the preload
 * lands). */
static int job(const char *lib) {
  void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) {
    fprintf(stderr, "job: %s\n", dlerror());
    return 2;
  }
  preset_fn fx_preset = (preset_fn)need(h, "ncclFixturePreset");
  fx_postset_fn fx_postset = (fx_postset_fn)need(h, "ncclFixturePostset");
  net_dev_fn fx_net_dev = (net_dev_fn)need(h, "ncclFixtureGetNetDev");
  /* Node m: its ranks node-major; channel c visits them from local rank c
   * on, and enters and leaves the node on NIC c (one rail per channel). */
  for (int m = 0; m < JOB_NODES; m++) {
    ncclTopoGraph *g = &job_graphs[m];
    g->pattern = 4, g->nChannels = JOB_CHANNELS;
    for (int c = 0; c < JOB_CHANNELS; c++) {
      for (int i = 0; i < JOB_LOCAL; i++) g->intra[c * JOB_LOCAL + i] = m * JOB_LOCAL + (c + i) % JOB_LOCAL;
      g->inter[2 * c] = c, g->inter[2 * c + 1] = c;
    }
    job_systems[m].nodes[0].count = JOB_LOCAL;
  }
  for (int r = 0; r < JOB_RANKS; r++) {
    job_comms[r].rank = r, job_comms[r].nRanks = JOB_RANKS, job_comms[r].localRanks = JOB_LOCAL;
    job_comms[r].topo = &job_systems[r / JOB_LOCAL];
    job_all[r] = &job_frags[r];
  }
  int failed = 0, nChannels = 0, nNodes = 0, devs = 0;
  for (int r = 0; r < JOB_RANKS && !failed; r++) {
    job_location(r);
    ncclResult_t res = fx_preset(&job_comms[r], &job_graphs[r / JOB_LOCAL], &job_frags[r]);
    if (res != ncclSuccess) fprintf(stderr, "job: Preset of rank %d returned %d\n", r, res), failed = 1;
  }
  for (int r = 0; r < JOB_RANKS && !failed; r++) {
    int heads[JOB_RANKS];
    job_location(r);
    ncclResult_t res = fx_postset(&job_comms[r], heads, job_all, &nChannels, &nNodes);
    if (res != ncclSuccess) fprintf(stderr, "job: Postset of rank %d returned %d\n", r, res), failed = 1;
    /* The ring stage's answer, not the stand-in's own (which sets one
     * node and channel 0's first userRanks entry only). */
    else if (nChannels != 2 * JOB_CHANNELS || nNodes != JOB_NODES || job_comms[r].node != r / JOB_LOCAL)
      fprintf(stderr, "job: rank %d: nChannels %d nNodes %d node %d: not the ring stage's answer\n", r, nChannels,
              nNodes, job_comms[r].node),
          failed = 1;
  }
  for (int r = 0; r < JOB_RANKS && !failed; r++)
    for (int c = 0; c < nChannels && !failed; c++) {
      int dev = -1;
      ncclResult_t res = fx_net_dev(job_comms[r].topo, r, &job_graphs[r / JOB_LOCAL], c, &dev);
      if (res != ncclSuccess || dev != c % JOB_CHANNELS)
        fprintf(stderr, "job: GetNetDev of rank %d channel %d: %d, NIC %d\n", r, c, res, dev), failed = 1;
      devs++;
    }
  unsetenv("NCCOM_RING_LOCATION");
  for (int r = 0; r < JOB_RANKS; r++)
    for (int ch = 0; ch < MAXCHANNELS; ch++) free(job_comms[r].channels[ch].ring.userRanks);
  if (failed) return 1;
  printf("job: %d ranks on %d nodes through %s: every Preset, Postset and GetNetDev (%d) returned ncclSuccess; "
         "%d channels\n",
         JOB_RANKS, JOB_NODES, lib, devs, nChannels);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "job") == 0) {
    find_library();
    return job(argv[2]);
  }
  /* The lines this test reads are NCCL's (D21): chosen here, not left to
   * whether a libnccom is loaded in the process (D26). */
  setenv("NCCOM_RING_LOG_STYLE", "nccl", 1);
  find_library();
  if (argc >= 3 && argc <= 4 && strcmp(argv[1], "run") == 0) return run(argv[2], argc == 4 ? argv[3] : NULL);
  if (argc >= 3 && argc <= 4 && strcmp(argv[1], "refuse") == 0) return refuse(argv[2], argc == 4 ? argv[3] : NULL);
  if (argc == 3 && (strcmp(argv[1], "off") == 0 || strcmp(argv[1], "warn") == 0)) return proceed(argv[2], argv[1]);
  if (argc >= 2 && argc <= 3 && strcmp(argv[1], "unverified") == 0) return unverified(argc == 3 ? argv[2] : NULL);
  if (argc == 3 && strcmp(argv[1], "bench") == 0) return bench(argv[2]);
  if (argc == 4 && strcmp(argv[1], "hostile") == 0) return hostile(argv[2], argv[3]);
  if (argc == 4 && strcmp(argv[1], "replaced") == 0) return replaced(argv[2], argv[3]);
  if (argc == 4 && strcmp(argv[1], "forged") == 0) return forged(argv[2], argv[3]);
  if (argc == 5 && strcmp(argv[1], "profile") == 0) return refused_profile(argv[2], argv[3], argv[4]);
  fprintf(stderr, "usage: selfcheck-host-{match,moved} refuse LIB [VALUE] | run LIB [PROFILE] | off LIB | warn LIB | "
                  "unverified [LIB] | bench LIB | job LIB | hostile LIB WANT | replaced LIB OTHER | forged LIB OTHER | "
                  "profile LIB PROFILE WANT\n");
  return 2;
}
