/*
 * preset_env - some ranks' ncclTopoPreset in a process of their own, for
 * the conformance harness's X_ENV_PLATFORM (D28: NCCOM_RING_PLATFORM set
 * on one node only).
 *
 * The harness cannot vary NCCOM_RING_PLATFORM between the ranks it runs in
 * its own process: both libraries read the variable once per process, and
 * the harness defines the platform hooks, which come first (D14, P18). This
 * program defines no hook and is linked without -rdynamic, so a library it
 * loads takes the platform from the NCCOM_RING_PLATFORM the harness put in
 * its environment.
 *
 *   conformance-preset-env LIB < IN > OUT
 *
 * IN: an int count, then for each call struct ncclComm, struct
 * ncclTopoGraph and struct ncclTopoRanks (the fragment before the call),
 * and the rank's NCCOM_RING_NODE_ORDER and NCCOM_RING_LOCATION, each an int
 * length (-1: unset) and its bytes. The calls run in that order, each with
 * its variables set, as the harness runs its in-process Presets. OUT, for
 * each call: the int result code, the communicator and the fragment after
 * it, and its log (an int length and the bytes): what the library appended
 * to the inherited NCCL_DEBUG_FILE, which is emptied after each call as
 * the harness does. Exit status 0 when OUT was written, 2 otherwise.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nccom_ring.h"

typedef ncclResult_t (*preset_fn)(struct ncclComm *, struct ncclTopoGraph *, struct ncclTopoRanks *);

struct call {
  struct ncclComm comm;
  struct ncclTopoGraph graph;
  struct ncclTopoRanks frag;
  char *order, *location; /* NULL: unset */
};

static int read_all(void *p, size_t n) { return fread(p, 1, n, stdin) == n ? 0 : -1; }

/* A variable's value from IN: *v malloc'ed, or NULL for unset. */
static int read_value(char **v) {
  int len;
  *v = NULL;
  if (read_all(&len, sizeof len) != 0 || len < -1 || len > 1 << 20) return -1;
  if (len < 0) return 0;
  if ((*v = malloc((size_t)len + 1)) == NULL || read_all(*v, (size_t)len) != 0) return -1;
  (*v)[len] = '\0';
  return 0;
}

static void set_var(const char *name, const char *v) {
  if (v) setenv(name, v, 1);
  else unsetenv(name);
}

/* What the library logged since the last call, written to OUT, and the
 * log emptied. */
static int pass_log(int fd) {
  static char buf[1 << 16];
  ssize_t n = fd < 0 ? 0 : pread(fd, buf, sizeof buf, 0);
  int len = n > 0 ? (int)n : 0;
  if (len > 0 && ftruncate(fd, 0) != 0) return -1;
  return fwrite(&len, sizeof len, 1, stdout) == 1 && fwrite(buf, 1, (size_t)len, stdout) == (size_t)len ? 0 : -1;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: conformance-preset-env LIB < IN > OUT\n");
    return 2;
  }
  int count;
  if (read_all(&count, sizeof count) != 0 || count < 0 || count > 4096) {
    fprintf(stderr, "conformance-preset-env: bad count\n");
    return 2;
  }
  struct call *calls = calloc((size_t)count + 1, sizeof *calls);
  if (calls == NULL) return 2;
  /* All of IN first: the harness writes it whole before it reads OUT. */
  for (int i = 0; i < count; i++) {
    struct call *c = &calls[i];
    if (read_all(&c->comm, sizeof c->comm) != 0 || read_all(&c->graph, sizeof c->graph) != 0 ||
        read_all(&c->frag, sizeof c->frag) != 0 || read_value(&c->order) != 0 || read_value(&c->location) != 0) {
      fprintf(stderr, "conformance-preset-env: short input\n");
      return 2;
    }
  }
  const char *logPath = getenv("NCCL_DEBUG_FILE");
  int logFd = logPath && logPath[0] ? open(logPath, O_RDWR) : -1;
  void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) {
    fprintf(stderr, "conformance-preset-env: %s\n", dlerror());
    return 2;
  }
  void *p = dlsym(h, "ncclTopoPreset");
  if (p == NULL) p = dlsym(h, "_Z14ncclTopoPresetP8ncclCommP13ncclTopoGraphP13ncclTopoRanks");
  if (p == NULL) {
    fprintf(stderr, "conformance-preset-env: %s has no ncclTopoPreset\n", argv[1]);
    return 2;
  }
  preset_fn preset;
  memcpy(&preset, &p, sizeof p);
  for (int i = 0; i < count; i++) {
    struct call *c = &calls[i];
    set_var("NCCOM_RING_NODE_ORDER", c->order);
    set_var("NCCOM_RING_LOCATION", c->location);
    int rc = (int)preset(&c->comm, &c->graph, &c->frag);
    if (fwrite(&rc, sizeof rc, 1, stdout) != 1 || fwrite(&c->comm, sizeof c->comm, 1, stdout) != 1 ||
        fwrite(&c->frag, sizeof c->frag, 1, stdout) != 1 || pass_log(logFd) != 0)
      return 2;
  }
  for (int i = 0; i < count; i++) free(calls[i].order), free(calls[i].location);
  free(calls); /* (a sanitized build checks for leaks) */
  /* No dlclose: the Go runtime stays for the process's short life. */
  return fflush(stdout) == 0 ? 0 : 2;
}
