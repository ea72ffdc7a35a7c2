/*
 * no_local_net.c - build/no-local-net, the negative half of the D19 proof.
 *
 * Linked against build/libnccomring.so alone: no stand-in, and no object in
 * the process defines ncclTopoGetLocalNet (checked with dlsym first). Then
 * ncclTopoGetNetDev(sys, 3, NULL, 0, &dev) has nothing to fall back on and
 * must return ncclInternalError without writing *dev. The WARN line is
 * checked by tests/c/standin/check.sh, which runs this with NCCL_DEBUG=WARN
 * and NCCL_DEBUG_FILE and asserts the exact text of docs/errors.md:
 *   ncclTopoGetNetDev: graph is NULL and the host process provides no
 *   ncclTopoGetLocalNet to fall back on
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

#include "nccom_ring.h"

int main(void) {
  if (dlsym(RTLD_DEFAULT, "ncclTopoGetLocalNet") != NULL) {
    fprintf(stderr, "no-local-net: something in this process defines ncclTopoGetLocalNet\n");
    return 1;
  }
  struct ncclTopoSystem sys = {{{4}}};
  int dev = -12345;
  ncclResult_t rc = ncclTopoGetNetDev(&sys, 3, NULL, 0, &dev);
  printf("ncclTopoGetNetDev(sys, 3, NULL, 0, &dev): result %d dev %d\n", (int)rc, dev);
  if (rc != ncclInternalError || dev != -12345) {
    fprintf(stderr, "no-local-net: FAIL: want ncclInternalError (%d) and dev untouched\n",
            (int)ncclInternalError);
    return 1;
  }
  return 0;
}
