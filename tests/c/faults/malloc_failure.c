/*
 * malloc_failure - Postset when C malloc runs out (docs/errors.md P16, D11,
 * D12). Run under LD_PRELOAD=libfailmalloc.so with FAILMALLOC_SIZE=3996
 * (999 ranks x 4 bytes, one channel's userRanks) and FAILMALLOC_AFTER=2: the
 * third channel's buffer fails. Postset must return ncclSystemError with
 * the exact WARN, free the two buffers it had, and leave the communicator
 * byte-identical; a later Postset with memory available must succeed.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/cluster.h"

int main(void) {
  /* The lines this test reads are NCCL's (D21): chosen here, not left to
   * whether a libnccom is loaded in the process (D26). */
  setenv("NCCOM_RING_LOG_STYLE", "nccl", 1);
  char path[] = "/tmp/nccomring-malloc-XXXXXX";
  close(mkstemp(path));
  setenv("NCCL_DEBUG", "WARN", 1);
  setenv("NCCL_DEBUG_FILE", path, 1);
  enum { NODES = 27, LOCAL = 37, N = NODES * LOCAL };
  int sizes[NODES], order[LOCAL];
  for (int m = 0; m < NODES; m++) sizes[m] = LOCAL;
  for (int i = 0; i < LOCAL; i++) order[i] = i;
  struct cluster *cl = cluster_new(NODES, sizes);
  cluster_set_channel(cl, 0, order, LOCAL, 0, 0);
  cluster_set_channel(cl, 1, order, LOCAL, 1, 1);
  cluster_set_nchannels(cl, 2);
  static struct ncclTopoRanks frags[N];
  static struct ncclTopoRanks *all[N];
  struct ncclComm *comm = calloc(1, sizeof *comm), *before = malloc(sizeof *comm);
  for (int r = 0; r < N; r++) {
    memset(comm, 0, sizeof *comm);
    comm->rank = r, comm->nRanks = N, comm->localRanks = LOCAL;
    if (ncclTopoPreset(comm, cl->graphs[r / LOCAL], &frags[r]) != ncclSuccess) return 2;
    all[r] = &frags[r];
  }
  memset(comm, 0, sizeof *comm);
  comm->rank = 5, comm->nRanks = N, comm->localRanks = LOCAL;
  if (ncclTopoPreset(comm, cl->graphs[0], &frags[5]) != ncclSuccess) return 2;
  memcpy(before, comm, sizeof *comm);
  static int heads[N];
  int nch = -7, nnodes = -7, failures = 0;
  ncclResult_t res = ncclTopoPostset(comm, heads, all, &nch, &nnodes);
  if (res != ncclSystemError) fprintf(stderr, "malloc_failure: Postset returned %d, want ncclSystemError\n", (int)res), failures++;
  if (memcmp(before, comm, sizeof *comm) != 0) fprintf(stderr, "malloc_failure: the communicator changed\n"), failures++;
  if (nch != -7 || nnodes != -7) fprintf(stderr, "malloc_failure: out-parameters changed\n"), failures++;
  FILE *f = fopen(path, "r");
  char line[1024];
  int warns = 0, exact = 0;
  while (f && fgets(line, sizeof line, f)) {
    if (!strstr(line, " NCCL WARN ")) continue;
    warns++;
    exact += strstr(line, "NCCL WARN ncclTopoPostset: malloc of 3996 bytes for channels[2].ring.userRanks failed\n") != NULL;
  }
  if (f) fclose(f);
  unlink(path);
  if (warns != 1 || exact != 1) fprintf(stderr, "malloc_failure: %d WARN lines, %d exact\n", warns, exact), failures++;
  /* The failing size is used up (FAILMALLOC_AFTER counts down past it only
   * once per failure); with buffers provided, Postset must now succeed. */
  for (int c = 0; c < 4; c++) comm->channels[c].ring.userRanks = calloc(N, sizeof(int));
  if (ncclTopoPostset(comm, heads, all, &nch, &nnodes) != ncclSuccess || nch != 4)
    fprintf(stderr, "malloc_failure: Postset with buffers provided failed\n"), failures++;
  for (int c = 0; c < 4; c++) free(comm->channels[c].ring.userRanks);
  free(comm);
  free(before);
  cluster_free(cl);
  if (failures) return 1;
  printf("malloc_failure: Postset out of memory returned ncclSystemError with the exact WARN and wrote nothing\n");
  return 0;
}
