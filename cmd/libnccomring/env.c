/* env.c - the variables of env.h, and their one reader. */
#include "env.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>

static const struct {
  const char *name;
  unsigned attrs;
} vars[NCCOMRING_ENV_COUNT] = {
#define NCCOMRING_ENV_ROW(id, name, attrs) {name, attrs},
    NCCOMRING_ENV_VARS(NCCOMRING_ENV_ROW)
#undef NCCOMRING_ENV_ROW
};

int nccomring_secure(void) { return getauxval(AT_SECURE) != 0; }

/* The value as the environment has it, empty as unset. */
static const char *raw(int id) {
  if (id < 0 || id >= NCCOMRING_ENV_COUNT) return NULL;
  const char *v = getenv(vars[id].name);
  return v != NULL && v[0] != '\0' ? v : NULL;
}

static int ignores(int id) {
  return (vars[id].attrs & NCCOMRING_ENV_PATH) && nccomring_secure();
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
           id >= 0 && id < NCCOMRING_ENV_COUNT ? vars[id].name : "?");
}
