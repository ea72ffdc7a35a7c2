/*
 * footprint - what the library adds to a C host that runs one rank's
 * ncclTopoPostset (issue 13, BENCHMARKS.md "Footprint").
 *
 *   footprint [--lib LIB] [--ranks N] [--calls K] [--json]
 *             [--max-threads T] [--no-steady-gc]
 *
 * N ranks (default 65,536) as nodes of 32 ranks with 16 graph channels (32
 * after doubling), every fragment prepared by Preset; then the host loads
 * LIB (default build/libnccomring.so) and runs rank 0's Postset once (the
 * first call) and K more times (default 20, the steady state), into the
 * same userRanks buffers, as a host that keeps them. At each point it reads
 * its own /proc/self/status (Threads, VmRSS, VmSize) and the library's
 * footprint line (Go heap in use, memory the Go runtime mapped, GC cycles
 * so far, GOMAXPROCS; printed at NCCL_DEBUG=TRACE with
 * NCCL_DEBUG_SUBSYS=ALLOC), which it sends to a file of its own
 * (NCCL_DEBUG_FILE).
 *
 * The fragments are prepared through LIB itself, between the "before load"
 * and "after load" readings: Preset allocates nothing, and every real host
 * calls it before Postset, so "after load" is a runtime that has started
 * and run Preset.
 *
 * Before the steady-state calls it writes "footprint: steady-state calls
 * begin" to stderr, so that `GODEBUG=gctrace=1 footprint ... 2>&1` shows any
 * garbage collection that happens after it (make test-footprint counts
 * them: there must be none).
 *
 * After the table it prints the steady state: GC cycles during the K calls,
 * and Go heap objects and bytes allocated per call. --max-threads T makes
 * it exit 1 when the library added more than T threads; --no-steady-gc,
 * when a GC ran during the steady-state calls (make test-footprint).
 *
 * Exit 0, or 1 when a call fails or a limit is exceeded, 2 on bad
 * arguments.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/host.h"
#include "bench_shape.h"
#include "nccom_ring.h"


struct status {
  long threads, rssKB, vmKB;               /* /proc/self/status */
  long heapKB, mappedKB, gcs, procs;       /* the library's TRACE line; -1 when absent */
  long long allocObjects, allocBytes;      /* Go heap allocations so far, same line */
};

static void read_status(struct status *s) {
  s->threads = s->rssKB = s->vmKB = -1;
  FILE *f = fopen("/proc/self/status", "r");
  if (f == NULL) return;
  char line[256];
  while (fgets(line, sizeof line, f)) {
    sscanf(line, "Threads: %ld", &s->threads);
    sscanf(line, "VmRSS: %ld kB", &s->rssKB);
    sscanf(line, "VmSize: %ld kB", &s->vmKB);
  }
  fclose(f);
}

/* The last footprint line the library wrote to the log file. */
static void read_trace(const char *logPath, struct status *s) {
  s->heapKB = s->mappedKB = s->gcs = s->procs = -1;
  s->allocObjects = s->allocBytes = -1;
  FILE *f = fopen(logPath, "r");
  if (f == NULL) return;
  char line[1024];
  while (fgets(line, sizeof line, f)) {
    const char *p = strstr(line, "footprint: Go heap ");
    if (p == NULL) continue;
    sscanf(p,
           "footprint: Go heap %ld kB in use, %ld kB mapped by the Go runtime, %ld GC cycles so far, GOMAXPROCS %ld, "
           "%lld objects of %lld bytes allocated so far",
           &s->heapKB, &s->mappedKB, &s->gcs, &s->procs, &s->allocObjects, &s->allocBytes);
  }
  fclose(f);
}

static void *need(void *h, const char *name) {
  void *p = dlsym(h, name);
  if (p == NULL) {
    fprintf(stderr, "footprint: %s\n", dlerror());
    exit(2);
  }
  return p;
}

static void print_row(const char *when, const struct status *s, const struct status *base, int json, int last) {
  if (json) {
    printf("    {\"when\": \"%s\", \"threads\": %ld, \"threadsAdded\": %ld, \"rssKB\": %ld, \"vmSizeKB\": %ld, "
           "\"goHeapKB\": %ld, \"goMappedKB\": %ld, \"gcCycles\": %ld, \"gomaxprocs\": %ld}%s\n",
           when, s->threads, s->threads - base->threads, s->rssKB, s->vmKB, s->heapKB, s->mappedKB, s->gcs, s->procs,
           last ? "" : ",");
    return;
  }
  printf("  %-22s threads %3ld (+%ld)  RSS %8ld kB  VmSize %9ld kB", when, s->threads, s->threads - base->threads,
         s->rssKB, s->vmKB);
  if (s->heapKB >= 0)
    printf("  Go heap %7ld kB  Go mapped %8ld kB  GCs %ld  library GOMAXPROCS %ld", s->heapKB, s->mappedKB, s->gcs, s->procs);
  printf("\n");
}

int main(int argc, char **argv) {
  const char *libPath = "build/libnccomring.so";
  int n = 65536, calls = 20, json = 0, maxThreads = -1, noSteadyGC = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--lib") == 0 && i + 1 < argc) libPath = argv[++i];
    else if (strcmp(argv[i], "--ranks") == 0 && i + 1 < argc) n = atoi(argv[++i]);
    else if (strcmp(argv[i], "--calls") == 0 && i + 1 < argc) calls = atoi(argv[++i]);
    else if (strcmp(argv[i], "--json") == 0) json = 1;
    else if (strcmp(argv[i], "--max-threads") == 0 && i + 1 < argc) maxThreads = atoi(argv[++i]);
    else if (strcmp(argv[i], "--no-steady-gc") == 0) noSteadyGC = 1;
    else {
      fprintf(stderr, "usage: footprint [--lib LIB] [--ranks N] [--calls K] [--json] [--max-threads T] [--no-steady-gc]\n");
      return 2;
    }
  }
  if (n < LOCAL || n % LOCAL != 0 || calls < 1) {
    fprintf(stderr, "footprint: --ranks must be a positive multiple of %d and --calls positive\n", LOCAL);
    return 2;
  }
  char logPath[] = "/tmp/footprint-log-XXXXXX";
  if (log_to_temp_file(logPath, "TRACE") != 0) return 2;
  setenv("NCCL_DEBUG_SUBSYS", "ALLOC", 1); /* only the footprint line: no INFO lines to format */

  /* The host's own memory first, so that it is in every reading. */
  struct ncclTopoRanks *frags = malloc((size_t)n * sizeof *frags);
  struct ncclTopoRanks **all = malloc((size_t)n * sizeof *all);
  int *heads = malloc((size_t)n * sizeof *heads);
  int *bufs[DOUBLED];
  struct ncclComm *comm = calloc(1, sizeof *comm), *preset0 = calloc(1, sizeof *preset0);
  struct ncclTopoGraph *g = calloc(1, sizeof *g);
  if (frags == NULL || all == NULL || heads == NULL || comm == NULL || preset0 == NULL || g == NULL) return 2;
  for (int c = 0; c < DOUBLED; c++) {
    bufs[c] = calloc((size_t)n, sizeof(int));
    if (bufs[c] == NULL) return 2;
  }

  struct status at[4];
  read_status(&at[0]);
  at[0].heapKB = at[0].mappedKB = at[0].gcs = at[0].procs = -1;
  at[0].allocObjects = at[0].allocBytes = -1;

  void *h = dlopen(libPath, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) {
    fprintf(stderr, "footprint: %s\n", dlerror());
    return 2;
  }
  ncclResult_t (*preset)(struct ncclComm *, struct ncclTopoGraph *, struct ncclTopoRanks *);
  ncclResult_t (*postset)(struct ncclComm *, int *, struct ncclTopoRanks **, int *, int *);
  void *p = need(h, "ncclTopoPreset");
  memcpy(&preset, &p, sizeof p);
  p = need(h, "ncclTopoPostset");
  memcpy(&postset, &p, sizeof p);

  for (int first = 0; first < n; first += LOCAL) {
    node_graph(g, first);
    for (int r = first; r < first + LOCAL; r++) {
      memset(comm, 0, sizeof *comm);
      comm->rank = r, comm->nRanks = n, comm->localRanks = LOCAL;
      if (preset(comm, g, &frags[r]) != ncclSuccess) {
        fprintf(stderr, "footprint: Preset of rank %d failed\n", r);
        return 1;
      }
      all[r] = &frags[r];
      if (r == 0) memcpy(preset0, comm, sizeof *comm);
    }
  }
  for (int c = 0; c < DOUBLED; c++) preset0->channels[c].ring.userRanks = bufs[c];
  read_status(&at[1]);
  read_trace(logPath, &at[1]);

  for (int k = 0; k <= calls; k++) {
    if (k == 1) {
      read_status(&at[2]);
      read_trace(logPath, &at[2]);
      fprintf(stderr, "footprint: steady-state calls begin\n");
      fflush(stderr);
    }
    memcpy(comm, preset0, sizeof *comm);
    int nch = -1, nnodes = -1;
    if (postset(comm, heads, all, &nch, &nnodes) != ncclSuccess || nch != DOUBLED || nnodes != n / LOCAL) {
      fprintf(stderr, "footprint: Postset at %d ranks failed (nChannels %d, nNodes %d)\n", n, nch, nnodes);
      return 1;
    }
  }
  fprintf(stderr, "footprint: steady-state calls end\n");
  fflush(stderr);
  read_status(&at[3]);
  read_trace(logPath, &at[3]);
  unlink(logPath);

  const char *env = getenv("GOMAXPROCS");
  char first[64], steady[64];
  snprintf(first, sizeof first, "after the first call");
  snprintf(steady, sizeof steady, "after %d more calls", calls);
  const char *when[4] = {"before load", "after load and Preset", first, steady};
  long added = at[3].threads - at[0].threads, steadyGCs = at[3].gcs - at[2].gcs;
  double objectsPerCall = (double)(at[3].allocObjects - at[2].allocObjects) / calls;
  double bytesPerCall = (double)(at[3].allocBytes - at[2].allocBytes) / calls;
  if (at[3].gcs < 0) {
    fprintf(stderr, "footprint: the library printed no footprint line (NCCL_DEBUG=TRACE, NCCL_DEBUG_SUBSYS=ALLOC)\n");
    return 1;
  }
  if (json) {
    printf("{\"ranks\": %d, \"localRanks\": %d, \"graphChannels\": %d, \"calls\": %d, \"GOMAXPROCS\": \"%s\", "
           "\"cores\": %ld,\n  \"steadyGCs\": %ld, \"steadyAllocObjectsPerCall\": %.1f, \"steadyAllocBytesPerCall\": %.1f,\n"
           "  \"readings\": [\n",
           n, LOCAL, CHANNELS, calls, env ? env : "", sysconf(_SC_NPROCESSORS_ONLN), steadyGCs, objectsPerCall,
           bytesPerCall);
    for (int i = 0; i < 4; i++) print_row(when[i], &at[i], &at[0], 1, i == 3);
    printf("  ]\n}\n");
  } else {
    printf("footprint: %d ranks (%d per node, %d graph channels), environment GOMAXPROCS %s, %ld cores\n", n, LOCAL, CHANNELS,
           env ? env : "unset", sysconf(_SC_NPROCESSORS_ONLN));
    for (int i = 0; i < 4; i++) print_row(when[i], &at[i], &at[0], 0, 0);
    printf("  steady state: %ld GC cycles in %d calls, %.1f Go heap objects (%.1f bytes) allocated per call\n",
           steadyGCs, calls, objectsPerCall, bytesPerCall);
  }
  int bad = 0;
  if (maxThreads >= 0 && added > maxThreads) {
    fprintf(stderr, "footprint: the library added %ld threads to the host, more than %d\n", added, maxThreads);
    bad = 1;
  }
  if (noSteadyGC && steadyGCs != 0) {
    fprintf(stderr, "footprint: %ld garbage collections ran during the %d steady-state calls\n", steadyGCs, calls);
    bad = 1;
  }
  return bad;
}
