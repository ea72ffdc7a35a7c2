/*
 * host.h - what the small test hosts share, header-only so that each is
 * still built from its one file (whatever header describes the library's
 * types: nccom_ring.h, or tests/c/abi/fixture.h's profiles):
 *
 *   CHECK_AS(PROG, LIMIT, cond, ...)  when cond is false, "PROG: FAIL
 *       file:line: cond: " and the message on stderr, counted in the
 *       host's own `int failures`; exit 1 from the LIMIT-th on (0: never). A host
 *       defines its CHECK(cond, ...) with it.
 *   need_symbol(PROG, handle, name)   dlsym(handle, name), or exit 2 with
 *       "PROG: name not found: " and dlerror()'s reason.
 *   log_to_temp_file(path, level)     the library's log (NCCL_DEBUG=level,
 *       NCCL_DEBUG_FILE) to a new empty file made from the mkstemp template
 *       path; 0, or -1 when it cannot be made. Before the library's first
 *       call: it reads both once.
 *
 * Needs mkstemp and setenv: build with -D_GNU_SOURCE (or the POSIX level).
 */
#ifndef NCCOMRING_TESTS_HOST_H
#define NCCOMRING_TESTS_HOST_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define CHECK_AS(prog, limit, cond, ...)                                  \
  do {                                                                    \
    if (!(cond)) {                                                        \
      fprintf(stderr, "%s: FAIL %s:%d: %s: ", prog, __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                       \
      fputc('\n', stderr);                                                \
      if (++failures >= (limit) && (limit) > 0) exit(1);                  \
    }                                                                     \
  } while (0)

static inline void *need_symbol(const char *prog, void *handle, const char *name) {
  void *p = dlsym(handle, name);
  if (p == NULL) {
    fprintf(stderr, "%s: %s not found: %s\n", prog, name, dlerror());
    exit(2);
  }
  return p;
}

static inline int log_to_temp_file(char *path, const char *level) {
  int fd = mkstemp(path);
  if (fd < 0) return -1;
  close(fd);
  setenv("NCCL_DEBUG", level, 1);
  setenv("NCCL_DEBUG_FILE", path, 1);
  return 0;
}

#endif
