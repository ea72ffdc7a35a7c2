/*
 * mpi_rings - the ring stage with one process per rank over MPI, the way
 * libnccom runs it: every MPI process is one rank, builds its node's graph,
 * sets up its own ncclComm, calls ncclTopoPreset, exchanges the 960-byte
 * fragments with MPI_Allgather, calls ncclTopoPostset and ncclTopoGetNetDev
 * (build/libnccomring.so, linked). Rank 0 then gathers every rank's results,
 * checks the invariants of the in-process host (stage_check), runs the same
 * stage with every rank in its own process (stage_run) and compares the two
 * rank by rank, byte for byte (stage_compare).
 *
 *   mpirun -np N mpi_rings [--local-ranks L|graph] [--graph FILE] [--min-crossings]
 *                          [--die-rank R | --kill-rank R | --stop-rank R] [--deadline S] [--quiet]
 *
 * Nodes: with --local-ranks L, simulated on one machine (node = rank / L;
 * "graph": L is the --graph file's GPU count); without it, the shared-memory
 * groups of MPI_Comm_split_type(MPI_COMM_TYPE_SHARED), which must all have
 * the same size with ranks numbered node-major (mpirun --map-by ppr:L:node).
 * Graph: the embedded default (cluster_default_sized: 8 channels, up to 8
 * NICs a node) with L ranks a node, or --graph FILE's RING graph (L must be
 * its GPU count). --die-rank R: rank R exits with status 3 after its Preset,
 * before the AllGather; --kill-rank R: it raises SIGKILL there instead (the
 * job must then fail, not hang); --stop-rank R: it stops itself (SIGSTOP),
 * and every other rank gives up once it has waited --deadline S seconds
 * (default 300; 0: never) in the AllGather, exit 4 with one line, which
 * ends the job. The ranks wait in the AllGather and the Gather of results
 * asleep (wait_for). The library's
 * environment (NCCL_DEBUG, NCCOM_RING_DUMP, ...) passes through (NCCL_DEBUG
 * is WARN when neither it nor NCCL_DEBUG_FILE is set); rank 0 runs
 * the in-process stage with NCCOM_RING_DUMP unset, so that
 * NCCOM_RING_DUMP=DIR ends up holding the MPI processes' own dumps.
 * Rank 0's memory grows as 132 x ranks^2 bytes (every rank's userRanks, twice).
 *
 * D25: each process's NCCOM_RING_NODE_ORDER and NCCOM_RING_LOCATION are
 * its own (mpirun -x per app context: one host's location per context);
 * rank 0 gathers them so that its in-process run gives every rank the same
 * ones (a node's location is its first rank's), and with --min-crossings
 * it checks that every ring crosses each level of the locations exactly as
 * many times as there are groups at that level (when two or more).
 *
 * Exit status 0 when every call succeeded, every invariant held and the two
 * runs agree; any failure prints one line naming the rank and calls
 * MPI_Abort(MPI_COMM_WORLD, 1) (2 for a usage error).
 */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE /* setenv, unsetenv, strdup under -std=c11 */
#endif
#include <limits.h>
#include <mpi.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../c/common/cluster.h"
#include "../c/common/stage_compare.h"
#include "../c/common/stage_setup.h"

static int worldRank = -1;

/* One line naming the rank, then the whole job ends. */
__attribute__((format(printf, 2, 3), noreturn)) static void fail(int code, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, "mpi_rings: rank %d: %s\n", worldRank, msg);
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, code);
  exit(code); /* MPI_Abort does not return */
}

/* Failures found while setting up, where every rank usually finds the same
 * one: each rank records its first, then settle() lets only the lowest rank
 * with one print it and abort the job (the others wait for that), so 64
 * processes give one line, not 64. */
static char pending[1024];
static int pendingCode;

__attribute__((format(printf, 2, 3))) static void defer_fail(int code, const char *fmt, ...) {
  if (pending[0]) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(pending, sizeof pending, fmt, ap);
  va_end(ap);
  pendingCode = code;
}

static void settle(void) {
  int me = pending[0] ? worldRank : INT_MAX, first;
  MPI_Allreduce(&me, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (first == INT_MAX) return;
  if (first == worldRank) fail(pendingCode, "%s", pending);
  MPI_Barrier(MPI_COMM_WORLD); /* until rank `first`'s MPI_Abort ends the job */
  exit(pendingCode);
}

static void usage(FILE *f) {
  fputs("usage: mpirun -np N mpi_rings [--local-ranks L|graph] [--graph FILE] [--min-crossings]\n"
        "                                [--die-rank R | --kill-rank R | --stop-rank R] [--deadline S] [--quiet]\n"
        "  --local-ranks L  simulate nodes of L ranks on one machine (node = rank / L); 'graph':\n"
        "                   the --graph file's GPU count. Without it, nodes are the shared-memory\n"
        "                   groups of MPI_Comm_split_type (equal sizes, ranks node-major)\n"
        "  --graph FILE     an NCCL_GRAPH_FILE whose RING graph every node uses (default: the\n"
        "                   embedded graph, 8 channels, with L ranks a node)\n"
        "  --die-rank R     rank R exits with status 3 before the AllGather (negative test)\n"
        "  --kill-rank R    rank R raises SIGKILL before the AllGather (negative test)\n"
        "  --stop-rank R    rank R stops itself (SIGSTOP) before the AllGather: the others\n"
        "                   give up at the deadline (negative test)\n"
        "  --deadline S     a rank gives up, exit 4 with one line, once it has waited S seconds\n"
        "                   in the AllGather or the Gather of results (default 300; 0: never)\n"
        "  --quiet          no Channel lines\n"
        "  --min-crossings  check that every ring crosses each level of the processes'\n"
        "                   NCCOM_RING_LOCATION the fewest times (D25)\n",
        f);
}

/* How the ranks wait in the two exchanges after Preset (the fragments'
 * AllGather, the results' Gather): non-blocking collectives this rank
 * tests, asleep in between. OpenMPI's blocking calls poll: even with
 * mpi_yield_when_idle a waiting rank stays runnable and takes its share of
 * the cores, so with more ranks than cores the ranks that have work wait
 * behind those that have none, and a job waiting on a stopped rank burns
 * every core it can get. Asleep, waiting ranks cost next to nothing, and
 * such a job shows as blocked (no thread running or waiting to run), which
 * the watchdog's blocked limit sees. The naps double from 0.1 ms to 0.5 s:
 * a rank oversleeps by at most what it has already waited (and 0.5 s), and
 * a long wait costs a few wakes a second, far under the 10% of one CPU
 * (running or waiting to run) the blocked limit allows even for 64 ranks.
 * With a 100 ms cap, 15 waiting ranks took 6% on a loaded machine and the
 * limit fired 40 s late.
 *
 * The deadline (--deadline S): MPI has no timeout of its own, and a rank
 * that is stopped or stuck rather than dead keeps every other rank waiting
 * in the exchange forever (mpirun only notices processes that exit). So a
 * rank that has waited S seconds in one exchange writes one line and exits
 * with 4, which mpirun does notice: it then ends the whole job, the stopped
 * rank included (SIGKILL reaches stopped processes). It counts only while
 * this rank waits for the others, never its own work (starting, building
 * the graphs, Preset), which a loaded machine stretches. Waiting for a
 * slow rank does count: make test-mpi's positive runs use --deadline 0 and
 * leave hangs to the watchdog; its stop-rank test waits for a rank that
 * never comes, where the deadline's expiry is the expected outcome. */
static int deadline = 300;
enum { NAP_FIRST_NS = 100000, NAP_MOST_NS = 500000000 };

static void wait_for(MPI_Request *req, const char *what) {
  struct timespec start, now, nap = {0, NAP_FIRST_NS};
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (;;) {
    int done = 0;
    MPI_Test(req, &done, MPI_STATUS_IGNORE);
    if (done) return;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long long waited = (long long)(now.tv_sec - start.tv_sec) * 1000000000LL + (now.tv_nsec - start.tv_nsec);
    if (deadline > 0 && waited >= deadline * 1000000000LL) {
      fprintf(stderr,
              "mpi_rings: rank %d: waited %d s in the %s (--deadline): a rank is stopped or stuck; giving up\n",
              worldRank, deadline, what);
      fflush(stderr);
      _exit(4); /* not MPI_Abort: a rank that exits is what mpirun watches for */
    }
    nanosleep(&nap, NULL);
    nap.tv_nsec = nap.tv_nsec * 2 < NAP_MOST_NS ? nap.tv_nsec * 2 : NAP_MOST_NS;
  }
}

static int parse_int(const char *flag, const char *v, long lo, long hi) {
  char *end;
  long x = strtol(v, &end, 10);
  if (*v == '\0' || *end != '\0' || x < lo || x > hi) {
    defer_fail(2, "%s wants an integer in [%ld, %ld], got '%s'", flag, lo, hi, v);
    return lo;
  }
  return (int)x;
}

/* The nodes of the job: localRanks and this rank's node, node-major. */
static void find_nodes(int simulate, int *localRanks, int *node) {
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (simulate) {
    if (size % *localRanks != 0)
      defer_fail(1, "%d processes are not whole nodes of %d ranks (--local-ranks)", size, *localRanks);
    *node = worldRank / *localRanks;
    return;
  }
  MPI_Comm shm;
  int local, lo, hi;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, worldRank, MPI_INFO_NULL, &shm);
  MPI_Comm_size(shm, localRanks);
  MPI_Comm_rank(shm, &local);
  MPI_Allreduce(&worldRank, &lo, 1, MPI_INT, MPI_MIN, shm);
  MPI_Allreduce(&worldRank, &hi, 1, MPI_INT, MPI_MAX, shm);
  MPI_Comm_free(&shm);
  /* Node-major: this group is ranks lo .. lo + L - 1, in order, and every
   * group has the same size L. */
  int mine[2] = {*localRanks, hi - lo == *localRanks - 1 && lo % *localRanks == 0 && worldRank - lo == local};
  int minL[2], maxL[2];
  MPI_Allreduce(mine, minL, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(mine, maxL, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (minL[0] != maxL[0])
    defer_fail(1, "the nodes (MPI_COMM_TYPE_SHARED groups) have from %d to %d ranks; every node must have "
         "the same number (mpirun --map-by ppr:L:node), or simulate nodes with --local-ranks",
         minL[0], maxL[0]);
  else if (!mine[1])
    defer_fail(1, "ranks are not numbered node-major (rank %d is local rank %d of a node holding ranks %d..%d); "
         "map them so with mpirun --map-by ppr:%d:node --rank-by slot",
         worldRank, local, lo, hi, *localRanks);
  *node = worldRank / *localRanks;
}

/* What each rank sends rank 0: its communicator after the stage (the
 * userRanks/devUserRanks/topo pointers cleared: addresses of its own
 * process), then ints. */
enum { HDR_STATUS, HDR_NCHANNELS, HDR_NNODES, HDR_USERRANKS_SET, HDR_INTS };

static size_t record_ints(int n) { return HDR_INTS + MAXCHANNELS + (size_t)n + (size_t)MAXCHANNELS * (size_t)n; }
static size_t record_size(int n) { return sizeof(struct ncclComm) + record_ints(n) * sizeof(int); }

static void pack_record(unsigned char *rec, const struct ncclComm *comm, int n, int nChannels,
                        int nNodes, const int *netDev, const int *nodesFirstRank) {
  struct ncclComm *c = (struct ncclComm *)rec;
  memcpy(c, comm, sizeof *c);
  c->topo = NULL;
  int *v = (int *)(rec + sizeof *c), set = 0;
  for (int ch = 0; ch < MAXCHANNELS; ch++) {
    const int *u = comm->channels[ch].ring.userRanks;
    c->channels[ch].ring.userRanks = NULL;
    c->channels[ch].ring.devUserRanks = NULL;
    int *dst = v + HDR_INTS + MAXCHANNELS + n + (size_t)ch * (size_t)n;
    if (u != NULL) {
      set |= 1 << ch;
      memcpy(dst, u, (size_t)n * sizeof(int));
    } else {
      memset(dst, 0, (size_t)n * sizeof(int));
    }
  }
  v[HDR_STATUS] = ncclSuccess;
  v[HDR_NCHANNELS] = nChannels;
  v[HDR_NNODES] = nNodes;
  v[HDR_USERRANKS_SET] = set;
  memcpy(v + HDR_INTS, netDev, MAXCHANNELS * sizeof(int));
  memcpy(v + HDR_INTS + MAXCHANNELS, nodesFirstRank, (size_t)n * sizeof(int));
}

/* Rebuilds the stage the MPI processes ran, from the gathered records and
 * fragments, in the form stage_check and stage_compare take; topo pointers
 * are those of the in-process run (the same cluster). */
static void unpack_stage(struct stage *st, const struct cluster *cl, const unsigned char *records,
                         const struct ncclTopoRanks *fragments) {
  int n = cl->nRanks;
  size_t nn = (size_t)n;
  if (stage_alloc(st, n) != 0) fail(1, "out of memory gathering %d ranks' results", n);
  memcpy(st->fragments, fragments, nn * sizeof *st->fragments);
  for (int r = 0; r < n; r++) {
    const unsigned char *rec = records + (size_t)r * record_size(n);
    const int *v = (const int *)(rec + sizeof(struct ncclComm));
    if (v[HDR_STATUS] != ncclSuccess) fail(1, "rank %d reports result %d", r, v[HDR_STATUS]);
    struct ncclComm *comm = malloc(sizeof *comm);
    if (comm == NULL) fail(1, "out of memory gathering %d ranks' results", n);
    memcpy(comm, rec, sizeof *comm);
    comm->topo = &cl->systems[stage_node_of(cl, r)];
    st->comms[r] = comm;
    st->all[r] = &st->fragments[r];
    st->nChannels[r] = v[HDR_NCHANNELS];
    st->nNodes[r] = v[HDR_NNODES];
    memcpy(&st->netDev[(size_t)r * MAXCHANNELS], v + HDR_INTS, MAXCHANNELS * sizeof(int));
    memcpy(&st->nodesFirstRank[(size_t)r * nn], v + HDR_INTS + MAXCHANNELS, nn * sizeof(int));
    for (int ch = 0; ch < MAXCHANNELS; ch++) {
      if (!(v[HDR_USERRANKS_SET] & (1 << ch))) continue;
      int *u = malloc(nn * sizeof(int));
      if (u == NULL) fail(1, "out of memory gathering %d ranks' results", n);
      memcpy(u, v + HDR_INTS + MAXCHANNELS + n + (size_t)ch * nn, nn * sizeof(int));
      comm->channels[ch].ring.userRanks = u;
    }
  }
}

/* Runs the whole stage in this process (rank 0's reference) with
 * NCCOM_RING_DUMP unset: the library reads it at every Postset, so the
 * reference run writes no dump and DIR holds only the MPI processes' own.
 * stage_run sets and unsets each rank's NCCOM_RING_NODE_ORDER and
 * NCCOM_RING_LOCATION (D25): this process's own are restored after it (it
 * runs after this rank's own calls; whatever follows sees them as they were). */
static void run_in_process(const struct cluster *cl, struct stage *ref) {
  static const char *const kept[] = {"NCCOM_RING_DUMP", "NCCOM_RING_NODE_ORDER", "NCCOM_RING_LOCATION"};
  char *saved[3];
  for (int i = 0; i < 3; i++) {
    const char *v = getenv(kept[i]);
    saved[i] = v ? strdup(v) : NULL;
    if (v != NULL && saved[i] == NULL) fail(1, "out of memory");
    unsetenv(kept[i]);
  }
  stage_run(&linked_ring_api, cl, ref);
  for (int i = 0; i < 3; i++) {
    if (saved[i] != NULL) setenv(kept[i], saved[i], 1);
    free(saved[i]);
  }
}

/* D25's environment of every process, for the in-process run: network
 * when every process asks for it; each node's location from its first rank
 * (NULL: none). Collective. Returns the gathered block cl->locations points
 * into, for the caller to free with cl->locations. */
enum { LOCATION_MAX = 8 * 64 + 8 };
static char *gather_locations(struct cluster *cl, int size, int localRanks) {
  char mine[LOCATION_MAX + 2] = {0};
  const char *loc = getenv("NCCOM_RING_LOCATION"), *order = getenv("NCCOM_RING_NODE_ORDER");
  if (loc && strlen(loc) <= LOCATION_MAX) snprintf(mine + 1, sizeof mine - 1, "%s", loc);
  mine[0] = order && strcmp(order, "network") == 0 ? 'n' : 'r';
  char *every = malloc((size_t)size * sizeof mine);
  const char **locations = calloc((size_t)cl->nNodes, sizeof *locations);
  if (every == NULL || locations == NULL) fail(1, "out of memory");
  MPI_Allgather(mine, (int)sizeof mine, MPI_CHAR, every, (int)sizeof mine, MPI_CHAR, MPI_COMM_WORLD);
  int network = 1;
  for (int r = 0; r < size; r++) {
    const char *v = every + (size_t)r * sizeof mine;
    network = network && v[0] == 'n';
    if (r % localRanks == 0 && v[1]) locations[r / localRanks] = v + 1;
  }
  cl->network = network;
  cl->locations = locations;
  return every;
}

/* --min-crossings: every ring of the MPI run crosses each level of the
 * locations as many times as there are groups there (when two or more). */
static void check_min_crossings(const struct cluster *cl, const struct stage *st) {
  int depth = cluster_location_depth(cl);
  if (depth == 0) fail(1, "--min-crossings: no process has NCCOM_RING_LOCATION");
  for (int c = 0; c < st->comms[0]->nChannels; c++)
    for (int level = 1; level <= depth; level++) {
      int groups = cluster_location_groups(cl, level), got = stage_crossings(cl, st, c, level);
      if (got != (groups > 1 ? groups : 0))
        fail(1, "channel %d crosses level %d %d times; %d groups make %d the fewest", c, level, got, groups,
             groups > 1 ? groups : 0);
    }
  printf("mpi_rings: every ring crosses each level of the locations the fewest times (level 1..%d:", depth);
  for (int level = 1; level <= depth; level++) printf(" %d", stage_crossings(cl, st, 0, level));
  printf(")\n");
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int size;
  MPI_Comm_rank(MPI_COMM_WORLD, &worldRank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  int localRanks = 0, simulate = 0, fromGraph = 0, dieRank = -1, killRank = -1, stopRank = -1, quiet = 0,
      minCrossings = 0;
  const char *graphFile = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int takesValue = strcmp(a, "--local-ranks") == 0 || strcmp(a, "--graph") == 0 || strcmp(a, "--die-rank") == 0 ||
                     strcmp(a, "--kill-rank") == 0 || strcmp(a, "--stop-rank") == 0 ||
                     strcmp(a, "--deadline") == 0;
    if (takesValue && i + 1 >= argc) {
      defer_fail(2, "%s needs a value", a);
      break;
    }
    if (strcmp(a, "--local-ranks") == 0) {
      simulate = 1;
      if (strcmp(argv[++i], "graph") == 0)
        fromGraph = 1;
      else
        localRanks = parse_int(a, argv[i], 1, NCCL_TOPO_MAX_NODES);
    } else if (strcmp(a, "--graph") == 0) {
      graphFile = argv[++i];
    } else if (strcmp(a, "--die-rank") == 0) {
      dieRank = parse_int(a, argv[++i], 0, size - 1);
    } else if (strcmp(a, "--kill-rank") == 0) {
      killRank = parse_int(a, argv[++i], 0, size - 1);
    } else if (strcmp(a, "--stop-rank") == 0) {
      stopRank = parse_int(a, argv[++i], 0, size - 1);
    } else if (strcmp(a, "--deadline") == 0) {
      deadline = parse_int(a, argv[++i], 0, 86400);
    } else if (strcmp(a, "--quiet") == 0) {
      quiet = 1;
    } else if (strcmp(a, "--min-crossings") == 0) {
      minCrossings = 1;
    } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      if (worldRank == 0) usage(stdout);
      MPI_Finalize();
      return 0;
    } else {
      if (worldRank == 0 && !pending[0]) usage(stderr);
      defer_fail(2, "unknown argument %s", a);
    }
  }
  if (fromGraph && graphFile == NULL) defer_fail(2, "--local-ranks graph needs --graph FILE");
  settle();

  /* A failing call's reason on the failing rank's stderr: the library's WARN
   * lines, unless the user chose the logging (read at the first call). */
  if (getenv("NCCL_DEBUG") == NULL && getenv("NCCL_DEBUG_FILE") == NULL) setenv("NCCL_DEBUG", "WARN", 1);

  /* The graph's own GPU count, for --local-ranks graph and as a check. */
  char err[512] = "";
  int graphLocal = 0;
  if (graphFile != NULL) {
    struct cluster *one = cluster_from_graph_file(graphFile, 1, err, sizeof err);
    if (one == NULL) {
      defer_fail(1, "%s", err[0] ? err : "out of memory");
    } else {
      graphLocal = one->localRanks[0];
      cluster_free(one);
    }
    if (fromGraph) localRanks = graphLocal;
  }
  settle();
  int node;
  find_nodes(simulate, &localRanks, &node);
  if (graphFile != NULL && localRanks != graphLocal)
    defer_fail(1, "%s has %d GPUs a node but the job has %d ranks a node (%s; --local-ranks graph "
               "takes the file's)",
         graphFile, graphLocal, localRanks, simulate ? "--local-ranks" : "its shared-memory groups");
  settle();
  int nNodes = size / localRanks;

  /* Every process builds the cluster's graphs (its own node's is the one it
   * uses) exactly as the in-process host does. */
  struct cluster *cl = graphFile ? cluster_from_graph_file(graphFile, nNodes, err, sizeof err)
                                 : cluster_default_sized(nNodes, localRanks);
  if (cl == NULL) defer_fail(1, "%s", err[0] ? err : "cannot build the cluster (out of memory)");
  settle();

  char *locationBlock = gather_locations(cl, size, localRanks);

  struct ncclComm *comm = calloc(1, sizeof *comm);
  struct ncclTopoRanks own, *fragments = calloc((size_t)size, sizeof *fragments);
  struct ncclTopoRanks **all = calloc((size_t)size, sizeof *all);
  int *nodesFirstRank = calloc((size_t)size, sizeof(int));
  int netDev[MAXCHANNELS];
  if (!comm || !fragments || !all || !nodesFirstRank) fail(1, "out of memory");
  memset(&own, 0, sizeof own);
  for (int c = 0; c < MAXCHANNELS; c++) netDev[c] = 0;
  stage_comm_init(cl, worldRank, comm);

  ncclResult_t res = ncclTopoPreset(comm, cl->graphs[node], &own);
  if (res != ncclSuccess) fail(1, "ncclTopoPreset returned %d", (int)res);

  if (worldRank == dieRank) {
    fprintf(stderr, "mpi_rings: rank %d: exiting with status 3 before the AllGather (--die-rank %d)\n",
            worldRank, dieRank);
    fflush(stderr);
    _exit(3);
  }
  if (worldRank == killRank) {
    fprintf(stderr, "mpi_rings: rank %d: raising SIGKILL before the AllGather (--kill-rank %d)\n",
            worldRank, killRank);
    fflush(stderr);
    raise(SIGKILL);
  }
  if (worldRank == stopRank) {
    fprintf(stderr, "mpi_rings: rank %d: stopping itself (SIGSTOP) before the AllGather (--stop-rank %d)\n",
            worldRank, stopRank);
    fflush(stderr);
    raise(SIGSTOP);
  }

  MPI_Request req;
  MPI_Iallgather(&own, (int)sizeof own, MPI_BYTE, fragments, (int)sizeof own, MPI_BYTE, MPI_COMM_WORLD, &req);
  wait_for(&req, "AllGather of the fragments");
  for (int r = 0; r < size; r++) all[r] = &fragments[r];

  int nChannels = 0, outNodes = 0;
  res = ncclTopoPostset(comm, nodesFirstRank, all, &nChannels, &outNodes);
  if (res != ncclSuccess) fail(1, "ncclTopoPostset returned %d", (int)res);
  for (int c = 0; c < comm->nChannels; c++) {
    res = ncclTopoGetNetDev(comm->topo, worldRank, cl->graphs[node], c, &netDev[c]);
    if (res != ncclSuccess) fail(1, "ncclTopoGetNetDev on channel %d returned %d", c, (int)res);
  }

  /* Every rank's results to rank 0. */
  size_t recSize = record_size(size);
  if (recSize > (size_t)0x7fffffff) fail(1, "%d ranks: a result record of %zu bytes is too large", size, recSize);
  unsigned char *rec = malloc(recSize), *records = NULL;
  if (rec == NULL) fail(1, "out of memory");
  pack_record(rec, comm, size, nChannels, outNodes, netDev, nodesFirstRank);
  if (worldRank == 0) {
    records = malloc(recSize * (size_t)size);
    if (records == NULL) fail(1, "out of memory gathering %d ranks' results", size);
  }
  MPI_Igather(rec, (int)recSize, MPI_BYTE, records, (int)recSize, MPI_BYTE, 0, MPI_COMM_WORLD, &req);
  wait_for(&req, "Gather of the results");

  /* Rank 0 then runs the whole stage in its own process: the reference.
   * After the exchanges, not before: the other ranks would otherwise wait
   * for it in the AllGather, their --deadline counting rank 0's work. */
  if (worldRank == 0) {
    struct stage ref;
    memset(&ref, 0, sizeof ref);
    run_in_process(cl, &ref);
    if (ref.failure[0]) fail(1, "the in-process run failed where every MPI rank succeeded: %s", ref.failure);
    struct stage mpi;
    unpack_stage(&mpi, cl, records, fragments);
    if (!quiet) {
      for (int c = 0; c < mpi.comms[0]->nChannels; c++) {
        printf("Channel %02d/%02d : ", c, mpi.comms[0]->nChannels);
        for (int i = 0; i < size; i++) printf(" %3d", mpi.comms[0]->channels[c].ring.userRanks[i]);
        putchar('\n');
      }
    }
    int violations = stage_check(cl, &mpi);
    if (violations) fail(1, "%d invariant violations in the MPI run (listed above)", violations);
    printf("mpi_rings: every invariant held: each channel is one Hamiltonian cycle, next/prev agree, "
           "userRanks start at the rank and follow next, the doubled channels repeat the first half, "
           "every NIC follows the head/direction rule\n");
    int diffs = stage_compare("mpi_rings", "mpi", &mpi, "in-process", &ref);
    if (diffs) fail(1, "%d differences between the MPI run and the in-process run (listed above)", diffs);
    if (minCrossings) check_min_crossings(cl, &mpi);
    printf("mpi_rings: %d ranks (%d node%s x %d): identical to the in-process result (%s, %d channels)\n",
           size, nNodes, nNodes == 1 ? "" : "s", localRanks, graphFile ? graphFile : "default graph", mpi.comms[0]->nChannels);
    fflush(stdout);
    stage_free(&mpi);
    stage_free(&ref);
    free(records);
  }

  for (int c = 0; c < MAXCHANNELS; c++) free(comm->channels[c].ring.userRanks);
  free(comm);
  free(fragments);
  free(all);
  free(nodesFirstRank);
  free(rec);
  free((void *)cl->locations);
  free(locationBlock);
  cluster_free(cl);
  MPI_Finalize();
  return 0;
}
