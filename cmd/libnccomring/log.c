/* log.c - NCCL-style logging (D21, P14, P15; docs/errors.md Environment). */
#include "shim.h"

#include <errno.h>
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
static FILE *log_file; /* NULL means stdout */
static char log_host[256];

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
  const char *v = getenv("NCCL_DEBUG");
  if (v == NULL || v[0] == '\0') return; /* empty is unset */
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
  const char *v = getenv("NCCL_DEBUG_SUBSYS");
  if (v == NULL || v[0] == '\0') return;
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
  const char *v = getenv("NCCL_DEBUG_FILE");
  if (v == NULL || v[0] == '\0' || nccomring_log_level < NCCOMRING_LOG_WARN) return;
  char path[1024];
  expand_path(v, path, sizeof path);
  log_file = fopen(path, "w");
  if (log_file == NULL)
    add_pending("NCCL_DEBUG_FILE=%s cannot be opened (%s); logging to stdout", path, strerror(errno));
}

static void init_once(void) {
  if (gethostname(log_host, sizeof log_host) != 0) snprintf(log_host, sizeof log_host, "unknown");
  log_host[sizeof log_host - 1] = '\0';
  char *dot = strchr(log_host, '.');
  if (dot) *dot = '\0'; /* NCCL prints the short host name */
  parse_level();
  parse_subsys();
  open_file();
  for (int i = 0; i < n_pending; i++) nccomring_log(NCCOMRING_LOG_WARN, 0, -1, pending[i]);
}

void nccomring_log_init(void) { pthread_once(&log_once, init_once); }

void nccomring_log(int level, int subsys, int rank, const char *text) {
  if (nccomring_log_level < level) return;
  if (level >= NCCOMRING_LOG_INFO && !(nccomring_log_subsys & subsys)) return;
  const char *kind = level == NCCOMRING_LOG_WARN ? "WARN" : "INFO";
  FILE *out = log_file ? log_file : stdout;
  pthread_mutex_lock(&log_lock);
  fprintf(out, "%s:%d:%d [%d] NCCL %s %s\n", log_host, (int)getpid(), (int)syscall(SYS_gettid),
          rank, kind, text);
  fflush(out);
  pthread_mutex_unlock(&log_lock);
}

/* A fork while another thread held log_lock would leave the child's copy
 * locked forever; the child starts with a fresh one. */
void nccomring_log_after_fork_in_child(void) {
  pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
  log_lock = fresh;
}
