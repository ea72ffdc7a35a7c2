/*
 * graph_xml.c - loads the RING graph of an NCCL_GRAPH_FILE with libxml2.
 *
 * Format (NCCL_GRAPH_FILE / NCCL_GRAPH_DUMP_FILE):
 *   <graphs version="1"><graph id pattern crossnic nchannels ...>
 *     <channel><net dev/>? <gpu dev/>... <net dev/>?</channel> ...
 * Only the first graph with pattern="4" (RING) is read. <gpu dev> is a local
 * device index; the ranks of a node are its devices in ascending order, so
 * global rank = node's first rank + position of dev among channel 0's
 * devices. The first <net dev> of a channel is inter[2c] (entry NIC), the
 * last inter[2c+1] (exit NIC); a channel without <net> gets -1 for both.
 * graph->nChannels is the file's nchannels attribute, as NCCL reads it, so a
 * file that says nchannels="0" reaches ncclTopoPreset as such.
 */
#include "cluster.h"

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int attr_int(xmlNode *node, const char *name, int *out) {
  xmlChar *v = xmlGetProp(node, (const xmlChar *)name);
  if (v == NULL) return -1;
  char *end;
  errno = 0;
  long x = strtol((const char *)v, &end, 10);
  int ok = end != (char *)v && *end == '\0' && errno == 0 && x >= INT_MIN && x <= INT_MAX;
  xmlFree(v);
  if (!ok) return -1;
  *out = (int)x;
  return 0;
}

static int is_element(xmlNode *node, const char *name) {
  return node->type == XML_ELEMENT_NODE && strcmp((const char *)node->name, name) == 0;
}

static xmlNode *find_ring_graph(xmlNode *root) {
  for (xmlNode *g = root->children; g; g = g->next) {
    int pattern;
    if (is_element(g, "graph") && attr_int(g, "pattern", &pattern) == 0 &&
        pattern == NCCL_TOPO_PATTERN_RING)
      return g;
  }
  return NULL;
}

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

struct cluster *cluster_from_graph_file(const char *path, int nNodes, char *err, size_t errlen) {
  struct cluster *cl = NULL;
  int devs[MAXCHANNELS][NCCL_TOPO_MAX_NODES], ndevs[MAXCHANNELS] = {0};
  int nicIn[MAXCHANNELS], nicOut[MAXCHANNELS];
  int nChannelsAttr = 0, nChannels = 0;

  /* A missing or unreadable file, and a malformed one, are different
   * mistakes: say which, with libxml2's line and column for the latter. */
  FILE *probe = fopen(path, "r");
  if (probe == NULL) {
    snprintf(err, errlen, "%s: cannot be read: %s", path, strerror(errno));
    return NULL;
  }
  fclose(probe);
  xmlResetLastError();
  xmlDoc *doc = xmlReadFile(path, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
  if (doc == NULL) {
    const xmlError *e = xmlGetLastError();
    if (e != NULL && e->message != NULL) {
      char msg[256];
      snprintf(msg, sizeof msg, "%s", e->message);
      msg[strcspn(msg, "\n")] = '\0';
      snprintf(err, errlen, "%s:%d:%d: not well-formed XML: %s", path, e->line, e->int2, msg);
    } else {
      snprintf(err, errlen, "%s: not well-formed XML", path);
    }
    return NULL;
  }
  xmlNode *root = xmlDocGetRootElement(doc);
  xmlNode *graph = root && is_element(root, "graphs") ? find_ring_graph(root) : NULL;
  if (graph == NULL) {
    snprintf(err, errlen, "%s: no <graphs><graph pattern=\"4\"> (RING) element", path);
    goto out;
  }
  if (attr_int(graph, "nchannels", &nChannelsAttr) != 0) {
    snprintf(err, errlen, "%s: the RING graph has no integer nchannels attribute", path);
    goto out;
  }
  for (xmlNode *ch = graph->children; ch; ch = ch->next) {
    if (!is_element(ch, "channel")) continue;
    if (nChannels == MAXCHANNELS) {
      snprintf(err, errlen, "%s: more than %d <channel> elements", path, MAXCHANNELS);
      goto out;
    }
    int c = nChannels++;
    nicIn[c] = nicOut[c] = -1;
    for (xmlNode *e = ch->children; e; e = e->next) {
      int dev;
      if (!is_element(e, "gpu") && !is_element(e, "net")) continue;
      if (attr_int(e, "dev", &dev) != 0) {
        snprintf(err, errlen, "%s: channel %d has a <%s> without an integer dev", path, c,
                 (const char *)e->name);
        goto out;
      }
      if (is_element(e, "net")) {
        if (nicIn[c] < 0) nicIn[c] = dev; /* the first <net> */
        nicOut[c] = dev;                  /* the last <net> */
        continue;
      }
      if (ndevs[c] == NCCL_TOPO_MAX_NODES) {
        snprintf(err, errlen, "%s: channel %d lists more than %d <gpu>", path, c,
                 NCCL_TOPO_MAX_NODES);
        goto out;
      }
      devs[c][ndevs[c]++] = dev;
    }
  }
  if (nChannels != nChannelsAttr) {
    snprintf(err, errlen, "%s: nchannels=\"%d\" but %d <channel> elements", path, nChannelsAttr,
             nChannels);
    goto out;
  }

  /* Ranks of a node: channel 0's devices in ascending order, each once. A
   * file with nchannels="0" and no channel reaches ncclTopoPreset as such
   * (one rank per node), so that the library, not the loader, rejects it. */
  int localRanks = nChannels > 0 ? ndevs[0] : 1;
  int sorted[NCCL_TOPO_MAX_NODES];
  for (int c = 0; c < nChannels; c++) {
    if (ndevs[c] == 0) {
      snprintf(err, errlen, "%s: channel %d lists no <gpu>", path, c);
      goto out;
    }
  }
  if (nChannels > 0) {
    memcpy(sorted, devs[0], (size_t)localRanks * sizeof(int));
    qsort(sorted, (size_t)localRanks, sizeof(int), cmp_int);
    for (int i = 1; i < localRanks; i++) {
      if (sorted[i] == sorted[i - 1]) {
        snprintf(err, errlen, "%s: channel 0 lists gpu dev %d twice", path, sorted[i]);
        goto out;
      }
    }
  }
  int *local = malloc((size_t)nNodes * sizeof(int));
  if (local == NULL) {
    snprintf(err, errlen, "out of memory");
    goto out;
  }
  for (int m = 0; m < nNodes; m++) local[m] = localRanks;
  cl = cluster_new(nNodes, local);
  free(local);
  if (cl == NULL) {
    snprintf(err, errlen, "out of memory");
    goto out;
  }
  for (int c = 0; c < nChannels; c++) {
    int order[NCCL_TOPO_MAX_NODES];
    if (ndevs[c] != localRanks) {
      snprintf(err, errlen, "%s: channel %d lists %d <gpu>, channel 0 lists %d", path, c,
               ndevs[c], localRanks);
      goto fail;
    }
    for (int i = 0; i < ndevs[c]; i++) {
      int *hit = bsearch(&devs[c][i], sorted, (size_t)localRanks, sizeof(int), cmp_int);
      if (hit == NULL) {
        snprintf(err, errlen, "%s: channel %d uses gpu dev %d, which channel 0 does not", path, c,
                 devs[c][i]);
        goto fail;
      }
      order[i] = (int)(hit - sorted);
    }
    cluster_set_channel(cl, c, order, localRanks, nicIn[c], nicOut[c]);
  }
  cluster_set_nchannels(cl, nChannelsAttr);
  goto out;
fail:
  cluster_free(cl);
  cl = NULL;
out:
  xmlFreeDoc(doc);
  return cl;
}
