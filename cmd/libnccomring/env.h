/*
 * env.h - the environment variables libnccomring and its preload shim read,
 * and the one function that reads them (internal).
 *
 * Every variable is read through nccomring_env, from C's environment:
 * getenv sees a host's setenv after load, which Go's os.Getenv (a copy of
 * the environment taken at load) does not. Their ids, names and attributes
 * are zenv.h's list, generated from params.go's registry (each variable's
 * default, parser, read time and documentation): C has a list of its own
 * because the logger reads before Go is entered and the preload shim has
 * no Go at all. log.c parses the NCCL_DEBUG variables and
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

/* A variable's attributes. */
enum {
  /* Its value names a file, a directory or a library to load: the values
   * that a rule for set-user-ID processes (AT_SECURE) would ignore, in
   * nccomring_env, for every reader at once. */
  NCCOMRING_ENV_PATH = 1 << 0
};

#include "zenv.h"

/* NCCOMRING_ENV_NCCL_DEBUG, NCCOMRING_ENV_LIBRARY, ...: zenv.h's order. */
enum nccomring_env_id {
#define NCCOMRING_ENV_ID(id, name, attrs) NCCOMRING_ENV_##id,
  NCCOMRING_ENV_VARS(NCCOMRING_ENV_ID)
#undef NCCOMRING_ENV_ID
  NCCOMRING_ENV_COUNT
};

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
