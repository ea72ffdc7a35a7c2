/* tests/install/consumer.c - the smallest program against an installed
 * libnccomring (make test-install): built once with
 * `pkg-config --cflags --libs nccomring` and once through
 * find_package(nccomring) -> nccomring::nccomring. It prints the library's
 * version and builds one ring of 4 ranks from rank 2 with ncclBuildRings. */
#include <stdio.h>
#include <string.h>

#include <nccom_ring.h>

int main(void) {
  const char *version = nccomring_version();
  if (version == NULL || strcmp(version, NCCOMRING_VERSION) != 0) {
    fprintf(stderr, "consumer: nccomring_version() is %s, the header says %s\n",
            version ? version : "NULL", NCCOMRING_VERSION);
    return 1;
  }
  /* One ring 0 -> 1 -> 2 -> 3 -> 0; the walk from rank 2 is 2 3 0 1. */
  int next[4] = {1, 2, 3, 0};
  int rings[4] = {-1, -1, -1, -1};
  ncclResult_t res = ncclBuildRings(1, rings, 2, 4, NULL, next);
  if (res != ncclSuccess || rings[0] != 2 || rings[1] != 3 || rings[2] != 0 || rings[3] != 1) {
    fprintf(stderr, "consumer: ncclBuildRings returned %d, ring %d %d %d %d (want 0, 2 3 0 1)\n",
            (int)res, rings[0], rings[1], rings[2], rings[3]);
    return 1;
  }
  printf("consumer: libnccomring %s, ring from rank 2: %d %d %d %d\n", version, rings[0],
         rings[1], rings[2], rings[3]);
  return 0;
}
