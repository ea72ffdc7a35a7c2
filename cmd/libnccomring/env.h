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
 * that the two tables agree. log.c parses the NCCL_DEBUG variables and
 * NCCOM_RING_LOG_STYLE, the preload shim NCCOMRING_LIBRARY. Nothing here
 * keeps state but one bit per variable, whether its secure-execution WARN
 * was claimed: each reader keeps what it read, for as long as its
 * variable's read time says.
 *
 * Secure execution (docs/security.md): in a process the kernel marks
 * AT_SECURE (set-user-ID, set-group-ID, or an executable with file
 * capabilities) the caller of the program chose the environment, not its
 * owner. There nccomring_env ignores every variable with the path
 * attribute, as secure_getenv does and as glibc ignores LD_PRELOAD, so that
 * no such caller makes the process load a library, or create or append to
 * a file, of the caller's choosing with the program's privileges. The
 * others (NCCL_DEBUG and the words and numbers of NCCOM_RING_*) are still
 * read: at worst they make a call fail or print to the process's own
 * stdout or stderr.
 */
#ifndef NCCOMRING_ENV_H
#define NCCOMRING_ENV_H

#include <stddef.h>

enum nccomring_env_id {
  NCCOMRING_ENV_NCCL_DEBUG,        /* log.c */
  NCCOMRING_ENV_NCCL_DEBUG_SUBSYS, /* log.c */
  NCCOMRING_ENV_NCCL_DEBUG_FILE,   /* log.c */
  NCCOMRING_ENV_LOG_STYLE,         /* log.c: NCCOM_RING_LOG_STYLE (D26) */
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
 * empty (an empty value counts as unset, P20), when it has the path
 * attribute and the process runs with secure execution, or when id is out
 * of range. The string is the environment's: read it before a setenv of
 * the same name. */
const char *nccomring_env(int id);

/* Nonzero when the kernel started this process with AT_SECURE set
 * (getauxval): set-user-ID, set-group-ID, file capabilities, or a security
 * module that asked for it. */
int nccomring_secure(void);

/* Nonzero when variable id is set (not empty) but nccomring_env ignores it
 * (a path under secure execution). */
int nccomring_env_ignored(int id);

/* As nccomring_env_ignored, but nonzero only once per variable in this
 * object (the library and the preload shim each have their own copy of
 * this file), for the one WARN that names it: the logger claims it for the
 * variables set at its start, a later reader (params.go) for one set
 * after. */
int nccomring_env_ignored_once(int id);

/* The text of that WARN for variable id, into out (size bytes). */
void nccomring_env_ignored_text(int id, char *out, size_t size);

#endif
