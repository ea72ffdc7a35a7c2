/*
 * preinit - a call from the executable's .preinit_array, before the loader
 * has run the library's constructors (which start the Go runtime): it must
 * return ncclInvalidUsage at once (docs/errors.md E3), not wait forever for
 * a runtime that has not begun to start. Later calls work.
 */
#include <stdio.h>

#include "nccom_ring.h"

static ncclResult_t early = ncclSuccess;

static void call_early(int argc, char **argv, char **envp) {
  (void)argc, (void)argv, (void)envp;
  int rings[1], next[1] = {0};
  early = ncclBuildRings(1, rings, 0, 1, NULL, next);
}

__attribute__((section(".preinit_array"), used)) static void (*const preinit_entry)(int, char **, char **) = call_early;

int main(void) {
  int rings[1], next[1] = {0};
  ncclResult_t later = ncclBuildRings(1, rings, 0, 1, NULL, next);
  printf("preinit: a call from .preinit_array returned %d, a call from main %d\n", (int)early, (int)later);
  return early == ncclInvalidUsage && later == ncclSuccess ? 0 : 1;
}
