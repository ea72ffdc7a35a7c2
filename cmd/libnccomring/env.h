/*
 * env.h - the environment variables libnccomring and its preload shim read,
 * and the one function that reads them (internal).
 *
 * Every variable is read through nccomring_env, from C's environment:
 * getenv sees a host's setenv after load, which Go's os.Getenv (a copy of
 * the environment taken at load) does not. The table in env.c gives each
 * variable's name and attributes, indexed by the ids below. params.go is
 * the registry of the library's own variables (their defaults, parsers and
 * when each is read), row by row against these ids, and its test checks
 * that the two tables agree. log.c parses the NCCL_DEBUG variables and the
 * preload shim NCCOMRING_LIBRARY. Nothing here keeps state: each reader
 * keeps what it read, for as long as its variable's read time says.
 */
#ifndef NCCOMRING_ENV_H
#define NCCOMRING_ENV_H

enum nccomring_env_id {
  NCCOMRING_ENV_NCCL_DEBUG,        /* log.c */
  NCCOMRING_ENV_NCCL_DEBUG_SUBSYS, /* log.c */
  NCCOMRING_ENV_NCCL_DEBUG_FILE,   /* log.c */
  NCCOMRING_ENV_LIBRARY,           /* the preload shim: NCCOMRING_LIBRARY */
  NCCOMRING_ENV_PLATFORM,          /* the rest: params.go */
  NCCOMRING_ENV_POD_ORDER,
  NCCOMRING_ENV_LAYOUT,
  NCCOMRING_ENV_ABI_CHECK,
  NCCOMRING_ENV_GOMAXPROCS,
  NCCOMRING_ENV_DUMP,
  NCCOMRING_ENV_NODE_ORDER,
  NCCOMRING_ENV_LOCATION,
  NCCOMRING_ENV_COUNT
};

/* A variable's attributes. */
enum {
  /* Its value names a file, a directory or a library to load: the values
   * that a rule for set-user-ID processes (AT_SECURE) would ignore, in
   * nccomring_env, for every reader at once. */
  NCCOMRING_ENV_PATH = 1 << 0
};

struct nccomring_env_var {
  const char *name;
  unsigned attrs;
};

extern const struct nccomring_env_var nccomring_env_vars[NCCOMRING_ENV_COUNT];

/* The value of variable id in C's environment, or NULL when it is unset or
 * empty (an empty value counts as unset, P20) or id is out of range. The
 * string is the environment's: read it before a setenv of the same name. */
const char *nccomring_env(int id);

#endif
