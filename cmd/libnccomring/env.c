/* env.c - the variables of env.h, and their one reader. */
#include "env.h"

#include <stdlib.h>

/* In the order of enum nccomring_env_id. */
const struct nccomring_env_var nccomring_env_vars[NCCOMRING_ENV_COUNT] = {
    [NCCOMRING_ENV_NCCL_DEBUG] = {"NCCL_DEBUG", 0},
    [NCCOMRING_ENV_NCCL_DEBUG_SUBSYS] = {"NCCL_DEBUG_SUBSYS", 0},
    [NCCOMRING_ENV_NCCL_DEBUG_FILE] = {"NCCL_DEBUG_FILE", NCCOMRING_ENV_PATH},
    [NCCOMRING_ENV_LIBRARY] = {"NCCOMRING_LIBRARY", NCCOMRING_ENV_PATH},
    [NCCOMRING_ENV_PLATFORM] = {"NCCOM_RING_PLATFORM", 0},
    [NCCOMRING_ENV_POD_ORDER] = {"NCCOM_RING_POD_ORDER", 0},
    [NCCOMRING_ENV_LAYOUT] = {"NCCOM_RING_LAYOUT", NCCOMRING_ENV_PATH},
    [NCCOMRING_ENV_ABI_CHECK] = {"NCCOM_RING_ABI_CHECK", 0},
    [NCCOMRING_ENV_GOMAXPROCS] = {"NCCOM_RING_GOMAXPROCS", 0},
    [NCCOMRING_ENV_DUMP] = {"NCCOM_RING_DUMP", NCCOMRING_ENV_PATH},
    [NCCOMRING_ENV_NODE_ORDER] = {"NCCOM_RING_NODE_ORDER", 0},
    [NCCOMRING_ENV_LOCATION] = {"NCCOM_RING_LOCATION", 0},
};

const char *nccomring_env(int id) {
  if (id < 0 || id >= NCCOMRING_ENV_COUNT) return NULL;
  const char *v = getenv(nccomring_env_vars[id].name);
  return v != NULL && v[0] != '\0' ? v : NULL;
}
