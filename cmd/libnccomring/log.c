/* log.c - NCCL-style logging (log.h; D21, P14, P15; docs/errors.md Environment). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* gethostname, strtok_r, strcasecmp, syscall, flockfile */
#endif
#include "log.h"

#include "env.h"
#include "hostsym.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

int nccomring_log_level = NCCOMRING_LOG_NONE;
int nccomring_log_subsys = NCCOMRING_SUBSYS_INIT | NCCOMRING_SUBSYS_ENV;

static pthread_once_t log_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char log_host[256];

/* Where lines go (README, "Logging"): libnccom's own stream when the host
 * process has one (its ncclDebugFile), so that both libraries' lines land in
 * one file in order and nothing is overwritten; else NCCL_DEBUG_FILE, opened
 * by this library for appending (never truncated), one write() per line so
 * each line stays whole; else stdout. */
static FILE **host_stream;
static int log_fd = -1;
static void *init_caller; /* the first call's caller, where ncclDebugFile is looked up */
static enum nccomring_log_fallback log_fallback; /* the first call's */

/* Warnings found while parsing, printed once parsing is done. */
#define MAX_PENDING 64 /* NCCL_DEBUG, the file, and each unknown subsystem */
static char pending[MAX_PENDING][320];
static int n_pending;

__attribute__((format(printf, 1, 2))) static void add_pending(const char *fmt, ...) {
  if (n_pending >= MAX_PENDING) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(pending[n_pending++], sizeof pending[0], fmt, ap);
  va_end(ap);
}

static void parse_level(void) {
  static const struct { const char *name; int level; } levels[] = {
      {"VERSION", NCCOMRING_LOG_VERSION}, {"WARN", NCCOMRING_LOG_WARN},
      {"INFO", NCCOMRING_LOG_INFO},       {"ABORT", NCCOMRING_LOG_ABORT},
      {"TRACE", NCCOMRING_LOG_TRACE}};
  const char *v = nccomring_env(NCCOMRING_ENV_NCCL_DEBUG);
  if (v == NULL) return; /* unset or empty */
  for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++) {
    if (strcasecmp(v, levels[i].name) == 0) {
      nccomring_log_level = levels[i].level;
      return;
    }
  }
  nccomring_log_level = NCCOMRING_LOG_WARN;
  add_pending("NCCL_DEBUG=%s is not one of VERSION, WARN, INFO, ABORT, TRACE; using WARN", v);
}

static void parse_subsys(void) {
  static const struct { const char *name; int bit; } names[] = {
      {"INIT", NCCOMRING_SUBSYS_INIT},     {"COLL", NCCOMRING_SUBSYS_COLL},
      {"P2P", NCCOMRING_SUBSYS_P2P},       {"SHM", NCCOMRING_SUBSYS_SHM},
      {"NET", NCCOMRING_SUBSYS_NET},       {"GRAPH", NCCOMRING_SUBSYS_GRAPH},
      {"TUNING", NCCOMRING_SUBSYS_TUNING}, {"ENV", NCCOMRING_SUBSYS_ENV},
      {"ALLOC", NCCOMRING_SUBSYS_ALLOC},   {"CALL", NCCOMRING_SUBSYS_CALL},
      {"ALL", NCCOMRING_SUBSYS_ALL}};
  const char *v = nccomring_env(NCCOMRING_ENV_NCCL_DEBUG_SUBSYS);
  if (v == NULL) return;
  char list[4096];
  snprintf(list, sizeof list, "%s", v);
  int invert = list[0] == '^';
  int mask = 0;
  char *save = NULL;
  for (char *tok = strtok_r(list + invert, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    size_t i;
    for (i = 0; i < sizeof names / sizeof names[0]; i++) {
      if (strcasecmp(tok, names[i].name) == 0) break;
    }
    if (i == sizeof names / sizeof names[0])
      add_pending("NCCL_DEBUG_SUBSYS: unknown subsystem %s ignored", tok);
    else
      mask |= names[i].bit;
  }
  nccomring_log_subsys = invert ? ~mask : mask;
}

/* Expands %h (host name), %p (pid) and %% in NCCL_DEBUG_FILE; any other %x
 * stays as it is. */
static void expand_path(const char *in, char *out, size_t size) {
  size_t o = 0;
  for (const char *p = in; *p && o + 1 < size; p++) {
    if (p[0] == '%' && p[1] == '%') {
      out[o++] = '%';
      p++;
    } else if (p[0] == '%' && (p[1] == 'h' || p[1] == 'p')) {
      int n = p[1] == 'h' ? snprintf(out + o, size - o, "%s", log_host)
                          : snprintf(out + o, size - o, "%d", (int)getpid());
      o += n > 0 ? (size_t)n : 0;
      if (o >= size) o = size - 1;
      p++;
    } else {
      out[o++] = *p;
    }
  }
  out[o] = '\0';
}

static void open_file(void) {
  const char *v = nccomring_env(NCCOMRING_ENV_NCCL_DEBUG_FILE);
  if (v == NULL || nccomring_log_level < NCCOMRING_LOG_VERSION) return;
  char path[1024];
  expand_path(v, path, sizeof path);
  log_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0)
    add_pending("NCCL_DEBUG_FILE=%s cannot be opened (%s); logging to %s", path, strerror(errno),
                log_fallback == NCCOMRING_LOG_TO_STDERR ? "stderr" : "stdout");
}

/* A fork while another thread held log_lock would leave the child's copy
 * locked forever; the child starts with a fresh one. */
static void after_fork_in_child(void) {
  pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
  log_lock = fresh;
}

static void init_once(void) {
  if (gethostname(log_host, sizeof log_host) != 0) snprintf(log_host, sizeof log_host, "unknown");
  log_host[sizeof log_host - 1] = '\0';
  char *dot = strchr(log_host, '.');
  if (dot) *dot = '\0'; /* NCCL prints the short host name */
  parse_level();
  parse_subsys();
  host_stream = (FILE **)nccomring_host_symbol(init_caller, "ncclDebugFile", NULL);
  if (host_stream == NULL) open_file();
  for (int i = 0; i < n_pending; i++) nccomring_log(NCCOMRING_LOG_WARN, 0, -1, pending[i]);
  pthread_atfork(NULL, NULL, after_fork_in_child);
}

void nccomring_log_init(void *caller, enum nccomring_log_fallback fallback) {
  if (__atomic_load_n(&init_caller, __ATOMIC_RELAXED) == NULL) {
    __atomic_store_n(&init_caller, caller, __ATOMIC_RELAXED);
    __atomic_store_n(&log_fallback, fallback, __ATOMIC_RELAXED);
  }
  pthread_once(&log_once, init_once);
}

void nccomring_log(int level, int subsys, int rank, const char *text) {
  if (nccomring_log_level < level) return;
  if (level >= NCCOMRING_LOG_INFO && !(nccomring_log_subsys & subsys)) return;
  const char *kind = level == NCCOMRING_LOG_WARN ? "WARN" : level == NCCOMRING_LOG_TRACE ? "TRACE" : "INFO";
  /* The whole line first, so that it leaves in one piece. */
  char small[1024], *line = small;
  int n = snprintf(small, sizeof small, "%s:%d:%d [%d] NCCL %s %s\n", log_host, (int)getpid(),
                   (int)syscall(SYS_gettid), rank, kind, text);
  if (n < 0) return;
  if ((size_t)n >= sizeof small) {
    line = malloc((size_t)n + 1);
    if (line == NULL) return;
    snprintf(line, (size_t)n + 1, "%s:%d:%d [%d] NCCL %s %s\n", log_host, (int)getpid(),
             (int)syscall(SYS_gettid), rank, kind, text);
  }
  FILE *stream = host_stream ? *host_stream : NULL;
  if (stream) {
    flockfile(stream);
    fputs(line, stream);
    fflush(stream);
    funlockfile(stream);
  } else if (log_fd >= 0) {
    for (size_t done = 0; done < (size_t)n;) {
      ssize_t w = write(log_fd, line + done, (size_t)n - done);
      if (w <= 0 && errno != EINTR) break;
      if (w > 0) done += (size_t)w;
    }
  } else {
    FILE *out = log_fallback == NCCOMRING_LOG_TO_STDERR ? stderr : stdout;
    pthread_mutex_lock(&log_lock);
    fputs(line, out);
    fflush(out);
    pthread_mutex_unlock(&log_lock);
  }
  if (line != small) free(line);
}
