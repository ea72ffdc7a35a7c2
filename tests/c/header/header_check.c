/* Compiled as C11 and as C++17 with -Wall -Wextra -Werror -pedantic by
 * `make test-header`: the public header must be clean in both, and its
 * _Static_assert/static_assert layout checks must hold. The prototypes are
 * taken by address so a C++ build also checks they are declared extern "C"
 * with the spec's parameter types. */
#include "nccom_ring.h"

#ifdef __cplusplus
#include <type_traits>
static_assert(std::is_same<decltype(&ncclTopoPreset),
                           ncclResult_t (*)(ncclComm *, ncclTopoGraph *, ncclTopoRanks *)>::value,
              "ncclTopoPreset signature");
static_assert(std::is_same<decltype(&ncclTopoPostset),
                           ncclResult_t (*)(ncclComm *, int *, ncclTopoRanks **, int *, int *)>::value,
              "ncclTopoPostset signature");
static_assert(std::is_same<decltype(&ncclBuildRings),
                           ncclResult_t (*)(int, int *, int, int, int *, int *)>::value,
              "ncclBuildRings signature");
static_assert(std::is_same<decltype(&ncclTopoGetNetDev),
                           ncclResult_t (*)(ncclTopoSystem *, int, ncclTopoGraph *, int, int *)>::value,
              "ncclTopoGetNetDev signature");
#endif

int header_check(void);
int header_check(void) {
  struct ncclComm comm;
  comm.rank = 0;
  return comm.rank + MAXCHANNELS - 32 + NCCL_TOPO_MAX_NODES - 256 + MAX_KANGA_PATHS - 4 +
         NCCL_TOPO_PATTERN_RING - 4 + (int)ncclSuccess;
}
