/*
 * ringstage - a libnrt-style host that runs libnccom's whole ring stage over
 * a simulated cluster through build/libnccomring.so, checks the global
 * invariants of the result, and prints it.
 *
 *   ringstage [--nodes N] [--graph FILE] [--json | --dot] [--quiet]
 *
 * Without --graph it runs the embedded default cluster (4 trn1.32xlarge-like
 * nodes of 32 ranks, 8 NICs, 8 channels; --nodes changes the node count).
 * --graph applies an NCCL_GRAPH_FILE's RING graph to every node, ranks
 * node-major. Output: NCCL-style "Channel xx/yy :" lines of rank 0 and a
 * summary (default), the full per-rank wiring as JSON (--json), or the rings
 * as a Graphviz digraph (--dot). Exit status 0 when every call succeeded and
 * every invariant held, 1 otherwise, 2 on a usage error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/cluster.h"

enum output { OUT_TEXT, OUT_JSON, OUT_DOT };

static void usage(FILE *f) {
  fputs("usage: ringstage [--nodes N] [--graph FILE] [--json | --dot] [--quiet]\n"
        "  --nodes N     number of nodes (default 4)\n"
        "  --graph FILE  an NCCL_GRAPH_FILE whose RING graph every node uses\n"
        "                (default: the embedded trn1.32xlarge-like cluster)\n"
        "  --json        print every rank's wiring as JSON\n"
        "  --dot         print the rings as a Graphviz digraph\n"
        "  --quiet       print only the summary\n",
        f);
}

static void print_channel_lines(const struct stage *st) {
  const struct ncclComm *comm = st->comms[0];
  for (int c = 0; c < comm->nChannels; c++) {
    printf("Channel %02d/%02d : ", c, comm->nChannels);
    for (int i = 0; i < st->nRanks; i++) printf(" %3d", comm->channels[c].ring.userRanks[i]);
    putchar('\n');
  }
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
  int nodes = 4, quiet = 0;
  const char *graphFile = NULL;
  enum output out = OUT_TEXT;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--nodes") == 0 && i + 1 < argc) {
      char *end;
      long v = strtol(argv[++i], &end, 10);
      if (*end != '\0' || v < 1 || v > 65536) {
        fprintf(stderr, "ringstage: --nodes wants an integer in [1, 65536], got %s\n", argv[i]);
        return 2;
      }
      nodes = (int)v;
    } else if (strcmp(argv[i], "--graph") == 0 && i + 1 < argc) {
      graphFile = argv[++i];
    } else if (strcmp(argv[i], "--json") == 0) {
      out = OUT_JSON;
    } else if (strcmp(argv[i], "--dot") == 0) {
      out = OUT_DOT;
    } else if (strcmp(argv[i], "--quiet") == 0) {
      quiet = 1;
    } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      usage(stdout);
      return 0;
    } else {
      fprintf(stderr, "ringstage: unknown argument %s\n", argv[i]);
      usage(stderr);
      return 2;
    }
  }

  char err[512] = "";
  struct cluster *cl = graphFile ? cluster_from_graph_file(graphFile, nodes, err, sizeof err)
                                 : cluster_default(nodes);
  if (cl == NULL) {
    fprintf(stderr, "ringstage: %s\n", err[0] ? err : "out of memory");
    return 1;
  }

  struct stage st;
  int status = 0;
  if (stage_run(&linked_ring_api, cl, &st) != 0) {
    fprintf(stderr, "ringstage: %s (run with NCCL_DEBUG=WARN for the reason)\n", st.failure);
    status = 1;
  } else {
    int violations = stage_check(cl, &st);
    if (out == OUT_JSON) {
      print_json(cl, &st, violations);
    } else if (out == OUT_DOT) {
      print_dot(cl, &st);
    } else {
      if (!quiet) print_channel_lines(&st);
      printf("ringstage: %s: %d nodes x %d ranks = %d ranks, %d graph channels -> %d channels\n",
             graphFile ? graphFile : "default cluster", cl->nNodes, cl->localRanks[0], cl->nRanks,
             cl->graphs[0]->nChannels, st.comms[0]->nChannels);
      if (violations == 0)
        printf("ringstage: every invariant held: each channel is one Hamiltonian cycle, "
               "next/prev agree, userRanks start at the rank and follow next, the doubled "
               "channels repeat the first half, every NIC follows the head/direction rule\n");
      else
        printf("ringstage: %d invariant violations (listed on stderr)\n", violations);
    }
    status = violations ? 1 : 0;
  }
  stage_free(&st);
  cluster_free(cl);
  return status;
}
