/* env.c - the variables of env.h, and their one reader. */
#include "env.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>

/* In the order of enum nccomring_env_id. */
const struct nccomring_env_var nccomring_env_vars[NCCOMRING_ENV_COUNT] = {
    [NCCOMRING_ENV_NCCL_DEBUG] = {"NCCL_DEBUG", 0},
    [NCCOMRING_ENV_NCCL_DEBUG_SUBSYS] = {"NCCL_DEBUG_SUBSYS", 0},
    [NCCOMRING_ENV_NCCL_DEBUG_FILE] = {"NCCL_DEBUG_FILE", NCCOMRING_ENV_PATH},
    [NCCOMRING_ENV_LOG_STYLE] = {"NCCOM_RING_LOG_STYLE", 0},
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

int nccomring_secure(void) { return getauxval(AT_SECURE) != 0; }

/* The value as the environment has it, empty as unset. */
static const char *raw(int id) {
  if (id < 0 || id >= NCCOMRING_ENV_COUNT) return NULL;
  const char *v = getenv(nccomring_env_vars[id].name);
  return v != NULL && v[0] != '\0' ? v : NULL;
}

static int ignores(int id) {
  return (nccomring_env_vars[id].attrs & NCCOMRING_ENV_PATH) && nccomring_secure();
}

const char *nccomring_env(int id) {
  const char *v = raw(id);
  return v != NULL && !ignores(id) ? v : NULL;
}

int nccomring_env_ignored(int id) { return raw(id) != NULL && ignores(id); }

/* Bit id: the WARN about variable id was claimed. */
static unsigned warned;
_Static_assert(NCCOMRING_ENV_COUNT <= 32, "one bit of warned per variable");

int nccomring_env_ignored_once(int id) {
  if (!nccomring_env_ignored(id)) return 0;
  unsigned bit = 1u << id;
  return !(__atomic_fetch_or(&warned, bit, __ATOMIC_RELAXED) & bit);
}

void nccomring_env_ignored_text(int id, char *out, size_t size) {
  snprintf(out, size,
           "%s is ignored: this process runs with secure execution (AT_SECURE: set-user-ID, "
           "set-group-ID or file capabilities), where no path or library is taken from the "
           "environment, as glibc ignores LD_PRELOAD there",
           id >= 0 && id < NCCOMRING_ENV_COUNT ? nccomring_env_vars[id].name : "?");
}
