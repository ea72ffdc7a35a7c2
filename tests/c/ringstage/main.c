/*
 * ringstage - a libnrt-style host that runs libnccom's whole ring stage over
 * a simulated cluster through build/libnccomring.so, checks the global
 * invariants of the result, and prints it.
 *
 *   ringstage [--nodes N] [--graph FILE] [--kanga K] [--pod]
 *             [--order rank|network] [--locations FILE] [--json | --dot] [--quiet | --full]
 *
 * Without --graph it runs the embedded default cluster (4 trn1.32xlarge-like
 * nodes of 32 ranks, 128 ranks in all, 8 NICs, 8 channels; --nodes changes
 * the node count). --graph applies an NCCL_GRAPH_FILE's RING graph to every
 * node, ranks node-major. --kanga K gives every comm K kangaRing paths
 * (materialized only on TRN3-SwitchV1: NCCOM_RING_PLATFORM=trn3-switchv1);
 * --pod sets comm->enablePod (see NCCOM_RING_POD_ORDER). --order network
 * sets NCCOM_RING_NODE_ORDER=network for every rank's Preset and
 * --locations FILE each node's NCCOM_RING_LOCATION (D25; FILE in the
 * format of `nccom-rings locate --all`: one "NODE LOCATION" line per node,
 * NODE the node's index, # comments); the summary then says which nodes
 * ring 0 visits in turn and how often it crosses each level. Output:
 * NCCL-style "Channel xx/yy :" lines of rank 0 cut to their first
 * SHOWN_RANKS ranks, and a summary (default); the same with whole lines
 * (--full); the summary alone (--quiet); the full per-rank wiring as JSON
 * (--json); or the rings as a Graphviz digraph (--dot). The host simulates
 * every rank in one process, so its memory grows with the square of the
 * rank count: at most 4096 ranks. On long runs (PROGRESS_RANKS ranks, or
 * PROGRESS_DUMP_RANKS with NCCOM_RING_DUMP set) it says on stderr how far
 * the per-rank calls are, at most every PROGRESS_SECONDS. Exit status
 * 0 when every call succeeded and every invariant held, 1 otherwise, 2 on a
 * usage error.
 */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE /* mkstemp, setenv, unlink under -std=c11 */
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "../common/cluster.h"

enum output { OUT_TEXT, OUT_JSON, OUT_DOT };

static void usage(FILE *f) {
  fputs("usage: ringstage [--nodes N] [--graph FILE] [--kanga K] [--pod] [--order rank|network]\n"
        "                 [--locations FILE] [--json | --dot] [--quiet | --full]\n"
        "       ringstage --version\n"
        "  --nodes N     number of nodes (default 4); at most 4096 ranks in all\n"
        "  --graph FILE  an NCCL_GRAPH_FILE whose RING graph every node uses\n"
        "                (default: the embedded trn1.32xlarge-like cluster)\n"
        "  --kanga K     K kangaRing paths per comm (0-4; built on TRN3-SwitchV1 only)\n"
        "  --pod         set comm->enablePod (refused on >1 node unless NCCOM_RING_POD_ORDER=node)\n"
        "  --order O     rank (default) or network: NCCOM_RING_NODE_ORDER for every rank (D25)\n"
        "  --locations FILE  each node's NCCOM_RING_LOCATION: \"NODE LOCATION\" lines, NODE its index\n"
        "  --json        print every rank's wiring as JSON\n"
        "  --dot         print the rings as a Graphviz digraph\n"
        "  --quiet       print only the summary\n"
        "  --full        print the Channel lines whole (default: their first 16 ranks)\n"
        "  --version     print this host's and the loaded library's version\n"
        "\n"
        "environment (read by the library; docs/environment.md):\n"
        "  NCCL_DEBUG=VERSION|WARN|INFO|TRACE, NCCL_DEBUG_SUBSYS, NCCL_DEBUG_FILE   logging\n"
        "  NCCOM_RING_PLATFORM=generic|trn3-switchv1   the platform when no host hook says\n"
        "  NCCOM_RING_POD_ORDER=node                   stitch --pod clusters in node order\n"
        "  NCCOM_RING_LAYOUT=FILE                      ASSUMED ncclComm offsets (nccom-abi profile)\n"
        "  NCCOM_RING_ABI_CHECK=enforce|warn|off       the layout self-check against libnccom\n"
        "  NCCOM_RING_DUMP=DIR                         every rank's wiring dump (nccom-rings verify DIR)\n"
        "  NCCOM_RING_GOMAXPROCS=N                     the library's Go runtime processors (default 2)\n"
        "  NCCOM_RING_NODE_ORDER, NCCOM_RING_LOCATION   set per rank by --order and --locations\n"
        "Without NCCL_DEBUG and NCCL_DEBUG_FILE, ringstage collects the library's WARN lines itself\n"
        "and prints the one of a failing call.\n"
        "\n"
        "exit status: 0 every call succeeded and every invariant held; 1 a call failed or an\n"
        "invariant was broken (printed); 2 a usage error or a cluster too large to simulate\n",
        f);
}

/* The file ringstage collects the library's WARN lines in when the user
 * asked for no logging; removed at exit. */
static char warnPath[] = "/tmp/ringstage-warn-XXXXXX";
static void remove_warn_file(void) { unlink(warnPath); }

/* Prints the text of the last WARN line the library wrote to path, in
 * either line style (D21's, or D26's next to a libnccom). */
static void print_last_warn(const char *path) {
  FILE *f = fopen(path, "r");
  if (f == NULL) return;
  char line[8192], last[8192] = "";
  static const char *const marks[] = {" NCCL WARN ", " CCOM WARN libnccomring: "};
  while (fgets(line, sizeof line, f))
    for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++)
      if (strstr(line, marks[i])) snprintf(last, sizeof last, "%s", strstr(line, marks[i]) + strlen(marks[i]));
  fclose(f);
  if (last[0]) fprintf(stderr, "ringstage: the library's WARN: %s%s", last, strchr(last, '\n') ? "" : "\n");
}

/* Ranks the host simulates at most: every rank keeps nRanks ints per channel
 * and its own nodesFirstRank, so memory grows as nRanks^2. */
enum { MAX_HOST_RANKS = 4096 };

static int parse_int(const char *flag, const char *v, long lo, long hi, int *out) {
  char *end;
  long x = strtol(v, &end, 10);
  if (*v == '\0' || *end != '\0' || x < lo || x > hi) {
    fprintf(stderr, "ringstage: %s wants an integer in [%ld, %ld], got '%s'\n", flag, lo, hi, v);
    return -1;
  }
  *out = (int)x;
  return 0;
}

/* Ranks of each Channel line printed by default: a line of 128 ranks is 528
 * characters, which wraps in a terminal; cut after 16 it is 96. */
enum { SHOWN_RANKS = 16 };

/* Rank 0's userRanks of each channel in NCCL's format; unless full, cut
 * after SHOWN_RANKS ranks with the rank count said. */
static void print_channel_lines(const struct stage *st, int full) {
  const struct ncclComm *comm = st->comms[0];
  int shown = full || st->nRanks <= SHOWN_RANKS ? st->nRanks : SHOWN_RANKS;
  for (int c = 0; c < comm->nChannels; c++) {
    printf("Channel %02d/%02d : ", c, comm->nChannels);
    for (int i = 0; i < shown; i++) printf(" %3d", comm->channels[c].ring.userRanks[i]);
    if (shown < st->nRanks) printf(" ... (%d ranks)", st->nRanks);
    putchar('\n');
  }
}

/* Progress on stderr, for runs that take seconds with nothing printed: on
 * a 2-core machine 4096 ranks take 7 s (Postset is most of it), 1024 ranks
 * with dumps 10 s (each rank's Postset writes its dump and each of its
 * GetNetDev calls rewrites it, 17 writes a rank). */
enum { PROGRESS_RANKS = 1024, PROGRESS_DUMP_RANKS = 512, PROGRESS_SECONDS = 2 };
static double progressLast;  /* when the last line was printed, or the run began */
static int progressDumps;    /* NCCOM_RING_DUMP is set: Postset and GetNetDev write */

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void progress(const char *call, int done, int total) {
  double t = now_seconds();
  if (t - progressLast < PROGRESS_SECONDS) return;
  progressLast = t;
  fprintf(stderr, "ringstage: %s %d of %d ranks%s\n", call, done, total,
          progressDumps && strcmp(call, "Preset") != 0 ? " (writing dumps)" : "");
}

/* Reads a locations file (nccom-rings locate --all's format, NODE being a
 * node index): "NODE LOCATION" per line, # comments and blank lines, each
 * node at most once, lines of at most 64 KiB. Returns nNodes strings (NULL
 * for a node not listed), or NULL after one error line naming the file
 * and line. The library checks the locations themselves. */
static char **read_locations(const char *path, int nNodes) {
  FILE *f = fopen(path, "r");
  if (f == NULL) {
    fprintf(stderr, "ringstage: --locations %s: cannot be opened\n", path);
    return NULL;
  }
  char **locs = calloc((size_t)nNodes, sizeof *locs);
  static char line[65536 + 2];
  int lineNo = 0, ok = locs != NULL;
  while (ok && fgets(line, sizeof line, f)) {
    lineNo++;
    size_t len = strlen(line);
    if (len == sizeof line - 1 && line[len - 1] != '\n') {
      fprintf(stderr, "ringstage: %s:%d: line longer than 64 KiB\n", path, lineNo);
      ok = 0;
      break;
    }
    char *hash = strchr(line, '#');
    if (hash) *hash = '\0';
    char *save = NULL, *node = strtok_r(line, " \t\r\n", &save), *loc = strtok_r(NULL, " \t\r\n", &save);
    if (node == NULL) continue;
    char *end;
    long m = strtol(node, &end, 10);
    if (*end != '\0' || m < 0 || m >= nNodes || loc == NULL || strtok_r(NULL, " \t\r\n", &save) != NULL) {
      fprintf(stderr, "ringstage: %s:%d: expected \"NODE LOCATION\" with NODE in [0, %d)\n", path, lineNo, nNodes);
      ok = 0;
    } else if (locs[m] != NULL) {
      fprintf(stderr, "ringstage: %s:%d: node %ld listed twice\n", path, lineNo, m);
      ok = 0;
    } else if ((locs[m] = strdup(loc)) == NULL) {
      ok = 0;
    }
  }
  fclose(f);
  if (!ok) {
    for (int m = 0; locs && m < nNodes; m++) free(locs[m]);
    free(locs);
    return NULL;
  }
  return locs;
}

/* D25 as ring 0 shows it: the nodes it visits in turn (from rank 0), and
 * per level the edges between ranks whose nodes differ at that level. */
static void print_order(const struct cluster *cl, const struct stage *st) {
  const int *ring = st->comms[0]->channels[0].ring.userRanks;
  int n = st->nRanks, depth = cluster_location_depth(cl);
  printf("ringstage: node order %s: ring 0 visits nodes", cl->network ? "network" : "rank");
  for (int i = 0; i < n; i++)
    if (i == 0 || cluster_node_of(cl, ring[i]) != cluster_node_of(cl, ring[i - 1]))
      printf(" %d", cluster_node_of(cl, ring[i]));
  printf("; crossings per ring:");
  for (int level = 1; level <= depth; level++)
    printf(" level %d: %d%s", level, stage_crossings(cl, st, 0, level), level < depth ? "," : "");
  printf("%s\n", depth ? "" : " none (no locations)");
}

static void print_json(const struct cluster *cl, const struct stage *st, int violations) {
  int n = st->nRanks;
  printf("{\n  \"nNodes\": %d,\n  \"nRanks\": %d,\n  \"graphChannels\": %d,\n"
         "  \"nChannels\": %d,\n  \"invariantsHeld\": %s,\n  \"nodes\": [",
         cl->nNodes, n, cl->graphs[0]->nChannels, st->comms[0]->nChannels,
         violations ? "false" : "true");
  for (int m = 0; m < cl->nNodes; m++)
    printf("%s{\"node\": %d, \"firstRank\": %d, \"localRanks\": %d}", m ? ", " : "", m,
           cl->firstRank[m], cl->localRanks[m]);
  printf("],\n  \"ranks\": [\n");
  for (int r = 0; r < n; r++) {
    const struct ncclComm *comm = st->comms[r];
    printf("    {\"rank\": %d, \"node\": %d, \"nNodes\": %d, \"nodesFirstRank\": [", r,
           comm->node, comm->nNodes);
    for (int m = 0; m < comm->nNodes; m++)
      printf("%s%d", m ? ", " : "", st->nodesFirstRank[(size_t)r * (size_t)n + (size_t)m]);
    printf("], \"nKangaRingChannels\": %d, \"kangaRing\": [", comm->nKangaRingChannels);
    for (int k = 0; k < comm->nKangaRingChannels && k < MAX_KANGA_PATHS; k++) {
      printf("%s[", k ? ", " : "");
      for (int i = 0; i < NCCOM_RING_KANGA_WIDTH; i++) printf("%s%d", i ? ", " : "", comm->kangaRing[k][i]);
      printf("]");
    }
    printf("], \"channels\": [\n");
    for (int c = 0; c < comm->nChannels; c++) {
      const struct ncclRing *ring = &comm->channels[c].ring;
      printf("      {\"channel\": %d, \"prev\": %d, \"next\": %d, \"netDev\": %d, \"userRanks\": [",
             c, ring->prev, ring->next, st->netDev[r * MAXCHANNELS + c]);
      for (int i = 0; i < n; i++) printf("%s%d", i ? ", " : "", ring->userRanks[i]);
      printf("]}%s\n", c + 1 < comm->nChannels ? "," : "");
    }
    printf("    ]}%s\n", r + 1 < n ? "," : "");
  }
  printf("  ]\n}\n");
}

static void print_dot(const struct cluster *cl, const struct stage *st) {
  static const char *colors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                 "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"};
  int graphChannels = cl->graphs[0]->nChannels;
  printf("digraph rings {\n  node [shape=circle];\n");
  for (int m = 0; m < cl->nNodes; m++) {
    printf("  subgraph cluster_node%d {\n    label=\"node %d\";\n   ", m, m);
    for (int i = 0; i < cl->localRanks[m]; i++) printf(" r%d", cl->firstRank[m] + i);
    printf(";\n  }\n");
  }
  /* The doubled channels repeat the first graphChannels rings: draw those. */
  for (int c = 0; c < graphChannels && c < st->comms[0]->nChannels; c++) {
    for (int r = 0; r < st->nRanks; r++) {
      const struct ncclRing *ring = &st->comms[r]->channels[c].ring;
      int inter = cluster_node_of(cl, r) != cluster_node_of(cl, ring->next);
      printf("  r%d -> r%d [color=\"%s\", label=\"c%d%s\"%s];\n", r, ring->next,
             colors[c % 8], c, inter ? " net" : "", inter ? ", style=bold" : "");
    }
  }
  printf("}\n");
}

int main(int argc, char **argv) {
  int nodes = 4, quiet = 0, full = 0, kanga = 0, pod = 0, network = 0;
  const char *graphFile = NULL, *locationsFile = NULL;
  enum output out = OUT_TEXT;
  int outputs = 0;
  for (int i = 1; i < argc; i++) {
    /* --flag VALUE and --flag=VALUE */
    char flag[32];
    const char *arg = argv[i], *value = NULL, *eq = strchr(arg, '=');
    if (eq && (size_t)(eq - arg) < sizeof flag) {
      snprintf(flag, sizeof flag, "%.*s", (int)(eq - arg), arg);
      arg = flag;
      value = eq + 1;
    }
    int takesValue = strcmp(arg, "--nodes") == 0 || strcmp(arg, "--graph") == 0 || strcmp(arg, "--kanga") == 0 ||
                     strcmp(arg, "--order") == 0 || strcmp(arg, "--locations") == 0;
    if (takesValue && value == NULL) {
      if (i + 1 >= argc) {
        fprintf(stderr, "ringstage: %s needs a value\n", arg);
        return 2;
      }
      value = argv[++i];
    } else if (!takesValue && value != NULL) {
      fprintf(stderr, "ringstage: %s takes no value\n", arg);
      return 2;
    }
    if (strcmp(arg, "--nodes") == 0) {
      if (parse_int("--nodes", value, 1, MAX_HOST_RANKS, &nodes) != 0) return 2;
    } else if (strcmp(arg, "--graph") == 0) {
      graphFile = value;
    } else if (strcmp(arg, "--kanga") == 0) {
      if (parse_int("--kanga", value, 0, MAX_KANGA_PATHS, &kanga) != 0) return 2;
    } else if (strcmp(arg, "--pod") == 0) {
      pod = 1;
    } else if (strcmp(arg, "--order") == 0) {
      if (strcmp(value, "rank") != 0 && strcmp(value, "network") != 0) {
        fprintf(stderr, "ringstage: --order is rank or network, not %s\n", value);
        return 2;
      }
      network = strcmp(value, "network") == 0;
    } else if (strcmp(arg, "--locations") == 0) {
      locationsFile = value;
    } else if (strcmp(arg, "--json") == 0) {
      out = OUT_JSON;
      outputs++;
    } else if (strcmp(arg, "--dot") == 0) {
      out = OUT_DOT;
      outputs++;
    } else if (strcmp(arg, "--quiet") == 0) {
      quiet = 1;
    } else if (strcmp(arg, "--full") == 0) {
      full = 1;
    } else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
      usage(stdout);
      return 0;
    } else if (strcmp(arg, "--version") == 0) {
      /* Built against NCCOMRING_VERSION; served by whatever the loader bound
       * (under LD_PRELOAD, possibly another build). */
      printf("ringstage %s (libnccomring %s)\n", NCCOMRING_VERSION, nccomring_version());
      return 0;
    } else {
      fprintf(stderr, "ringstage: unknown argument %s\n", argv[i]);
      usage(stderr);
      return 2;
    }
  }
  if (outputs > 1) {
    fprintf(stderr, "ringstage: --json and --dot are exclusive: choose one\n");
    return 2;
  }
  if (quiet && full) {
    fprintf(stderr, "ringstage: --quiet and --full are exclusive: choose one\n");
    return 2;
  }

  /* With no logging asked for, collect the library's WARN lines in a file of
   * our own (the library reads NCCL_DEBUG at its first call), so that a
   * failing call can be reported with its reason rather than a pointer to
   * NCCL_DEBUG. */
  const char *debug = getenv("NCCL_DEBUG"), *debugFile = getenv("NCCL_DEBUG_FILE");
  int collectWarns = (debug == NULL || debug[0] == '\0') && (debugFile == NULL || debugFile[0] == '\0'); /* empty is unset (P20) */
  if (collectWarns) {
    int fd = mkstemp(warnPath);
    collectWarns = fd >= 0;
    if (collectWarns) {
      close(fd);
      atexit(remove_warn_file);
      setenv("NCCL_DEBUG", "WARN", 1);
      setenv("NCCL_DEBUG_FILE", warnPath, 1);
    }
  }

  char err[512] = "";
  struct cluster *cl = graphFile ? cluster_from_graph_file(graphFile, nodes, err, sizeof err)
                                 : cluster_default(nodes);
  if (cl == NULL) {
    fprintf(stderr, "ringstage: %s\n", err[0] ? err : "out of memory");
    return 1;
  }
  if (cl->nRanks > MAX_HOST_RANKS) {
    fprintf(stderr,
            "ringstage: %d nodes x %d ranks = %d ranks; this host simulates every rank in one process "
            "(memory grows as ranks^2), at most %d\n",
            cl->nNodes, cl->localRanks[0], cl->nRanks, MAX_HOST_RANKS);
    cluster_free(cl);
    return 2;
  }
  cl->nKangaRingChannels = kanga;
  cl->enablePod = pod;
  cl->network = network;
  char **locations = NULL;
  if (locationsFile) {
    locations = read_locations(locationsFile, cl->nNodes);
    if (locations == NULL) {
      cluster_free(cl);
      return 2;
    }
    cl->locations = (const char **)locations;
  }
  const char *platform = getenv("NCCOM_RING_PLATFORM");
  cl->switchV1 = platform && strcasecmp(platform, "trn3-switchv1") == 0;
  const char *dump = getenv("NCCOM_RING_DUMP");
  progressDumps = dump != NULL && dump[0] != '\0'; /* empty is unset (P20) */
  if (cl->nRanks >= PROGRESS_RANKS || (progressDumps && cl->nRanks >= PROGRESS_DUMP_RANKS)) {
    progressLast = now_seconds();
    cl->progress = progress;
  }

  struct stage st;
  int status = 0;
  if (stage_run(&linked_ring_api, cl, &st) != 0) {
    fprintf(stderr, "ringstage: %s\n", st.failure);
    if (collectWarns) print_last_warn(warnPath);
    status = 1;
  } else {
    int violations = stage_check(cl, &st);
    if (out == OUT_JSON) {
      print_json(cl, &st, violations);
    } else if (out == OUT_DOT) {
      print_dot(cl, &st);
    } else {
      if (!quiet) print_channel_lines(&st, full);
      printf("ringstage: %s: %d %s x %d ranks = %d ranks, %d graph channels -> %d channels\n",
             graphFile ? graphFile : "default cluster", cl->nNodes, cl->nNodes == 1 ? "node" : "nodes",
             cl->localRanks[0], cl->nRanks,
             cl->graphs[0]->nChannels, st.comms[0]->nChannels);
      if (network || locations) print_order(cl, &st);
      if (violations == 0)
        printf("ringstage: every invariant held: each channel is one Hamiltonian cycle, "
               "next/prev agree, userRanks start at the rank and follow next, the doubled "
               "channels repeat the first half, every NIC follows the head/direction rule%s\n",
               cl->switchV1 && kanga ? ", kangaRing holds the first 16 ranks' path segments" : "");
      else
        printf("ringstage: %d invariant violations (listed on stderr)\n", violations);
    }
    status = violations ? 1 : 0;
  }
  stage_free(&st);
  for (int m = 0; locations && m < cl->nNodes; m++) free(locations[m]);
  free(locations);
  cluster_free(cl);
  return status;
}
