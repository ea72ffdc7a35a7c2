/* log.c - NCCL-style logging (log.h; D21, D26, P14, P15; docs/errors.md Environment). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* gethostname, strtok_r, strcasecmp, syscall, flockfile */
#endif
#include "log.h"

#include "env.h"
#include "hostsym.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

int nccomring_log_level = NCCOMRING_LOG_NONE;
int nccomring_log_subsys = NCCOMRING_SUBSYS_INIT | NCCOMRING_SUBSYS_ENV;
int nccomring_log_style = NCCOMRING_STYLE_NCCL;

static pthread_once_t log_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char log_host[256];

/* Where lines go (docs/operating.md, "Where the log lines go"): libnccom's own stream when the host
 * process has one (its ncclDebugFile), so that both libraries' lines land in
 * one file in order and nothing is overwritten; else NCCL_DEBUG_FILE, opened
 * by this library for appending (never truncated), one write() per line so
 * each line stays whole; else stdout. NCCL_DEBUG_FILE may name a place
 * another user can write (a shared /tmp, a %p name anyone can guess): it is
 * opened only when it is, or is created as, a regular file, without
 * following a symbolic link and without waiting (a FIFO would block the
 * first call, and every thread's calls behind it, inside log_once; a
 * reader that goes away would raise SIGPIPE). Writing to a regular file
 * neither blocks for long nor raises SIGPIPE. */
static FILE **host_stream;
static int log_fd = -1;
static void *init_caller; /* the first call's caller, where ncclDebugFile is looked up */
static enum nccomring_log_fallback log_fallback; /* the first call's */

/* Warnings found while parsing, printed once parsing is done. */
#define MAX_PENDING 64 /* NCCL_DEBUG, the file, the ignored paths, and each unknown subsystem */
static char pending[MAX_PENDING][1400]; /* a text with one quoted value (SHOWN) */
static int n_pending;

/* Room for a quoted value: NCCOMRING_QUOTE_MAX bytes, each at most 4
 * characters, the quotes and the length (D28). */
#define SHOWN (4 * NCCOMRING_QUOTE_MAX + 48)

char *nccomring_quote(char *out, size_t size, const char *in) {
  static const char hex[] = "0123456789abcdef";
  char tail[40]; /* "... (N bytes)" */
  if (size < sizeof tail + 3) {
    if (size > 0) out[0] = '\0';
    return out;
  }
  size_t len = strlen(in), o = 0, i = 0;
  size_t room = size - sizeof tail - 2; /* the quotes, and the tail if it is cut */
  out[o++] = '"';
  for (; i < len && i < NCCOMRING_QUOTE_MAX; i++) {
    unsigned char c = (unsigned char)in[i];
    char e[4];
    size_t n = 0;
    switch (c) {
    case '"': case '\\': e[n++] = '\\', e[n++] = (char)c; break;
    case '\n': e[n++] = '\\', e[n++] = 'n'; break;
    case '\r': e[n++] = '\\', e[n++] = 'r'; break;
    case '\t': e[n++] = '\\', e[n++] = 't'; break;
    default:
      if (c < 0x20 || c >= 0x7f)
        e[n++] = '\\', e[n++] = 'x', e[n++] = hex[c >> 4], e[n++] = hex[c & 0xf];
      else
        e[n++] = (char)c;
    }
    if (o + n > room) break;
    memcpy(out + o, e, n);
    o += n;
  }
  out[o++] = '"';
  out[o] = '\0';
  if (i < len) {
    snprintf(tail, sizeof tail, "... (%zu bytes)", len);
    memcpy(out + o, tail, strlen(tail) + 1);
  }
  return out;
}

__attribute__((format(printf, 1, 2))) static void add_pending(const char *fmt, ...) {
  if (n_pending >= MAX_PENDING) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(pending[n_pending++], sizeof pending[0], fmt, ap);
  va_end(ap);
}

/* Returns nonzero when NCCL_DEBUG is set, and so sets the level whatever
 * the line style (D26). */
static int parse_level(void) {
  static const struct { const char *name; int level; } levels[] = {
      {"VERSION", NCCOMRING_LOG_VERSION}, {"WARN", NCCOMRING_LOG_WARN},
      {"INFO", NCCOMRING_LOG_INFO},       {"ABORT", NCCOMRING_LOG_ABORT},
      {"TRACE", NCCOMRING_LOG_TRACE}};
  const char *v = nccomring_env(NCCOMRING_ENV_NCCL_DEBUG);
  if (v == NULL) return 0; /* unset or empty */
  for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++) {
    if (strcasecmp(v, levels[i].name) == 0) {
      nccomring_log_level = levels[i].level;
      return 1;
    }
  }
  nccomring_log_level = NCCOMRING_LOG_WARN;
  char shown[SHOWN];
  add_pending("NCCL_DEBUG=%s is not one of VERSION, WARN, INFO, ABORT, TRACE; using WARN",
              nccomring_quote(shown, sizeof shown, v));
  return 1;
}

/* The line style (D26): NCCOM_RING_LOG_STYLE when it is nccl or ccom (any
 * case), else CCOM when a libnccom is loaded in the process (hostsym.c:
 * by the loaded objects' names, looked at once, here) and NCCL when none
 * is. The first call comes from libnccom in the preload case, so it is
 * loaded by then. In the CCOM style WARN lines print without NCCL_DEBUG,
 * as libnccom's do; a NCCL_DEBUG that is set still sets the level. */
static void parse_style(int level_given) {
  const char *v = nccomring_env(NCCOMRING_ENV_LOG_STYLE);
  if (v != NULL && strcasecmp(v, "nccl") == 0) {
    nccomring_log_style = NCCOMRING_STYLE_NCCL;
  } else if (v != NULL && strcasecmp(v, "ccom") == 0) {
    nccomring_log_style = NCCOMRING_STYLE_CCOM;
  } else {
    int loaded = nccomring_libnccom_mapped();
    nccomring_log_style = loaded ? NCCOMRING_STYLE_CCOM : NCCOMRING_STYLE_NCCL;
    if (v != NULL) {
      char shown[SHOWN];
      add_pending("NCCOM_RING_LOG_STYLE=%s is not nccl or ccom; using %s", nccomring_quote(shown, sizeof shown, v),
                  loaded ? "ccom, as a libnccom is loaded" : "nccl, as no libnccom is loaded");
    }
  }
  if (nccomring_log_style == NCCOMRING_STYLE_CCOM && !level_given) nccomring_log_level = NCCOMRING_LOG_WARN;
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
    if (i == sizeof names / sizeof names[0]) {
      char shown[SHOWN];
      add_pending("NCCL_DEBUG_SUBSYS: unknown subsystem %s ignored",
                  nccomring_quote(shown, sizeof shown, tok));
    } else
      mask |= names[i].bit;
  }
  nccomring_log_subsys = invert ? ~mask : mask;
}

/* Expands %h (host name), %p (pid) and %% in NCCL_DEBUG_FILE into out (size
 * bytes); any other %x stays as it is. Returns -1, rather than cut the path
 * (and open another file than the one named), when it does not fit. */
static int expand_path(const char *in, char *out, size_t size) {
  size_t o = 0;
  for (const char *p = in; *p; p++) {
    char pid[24];
    const char *piece = p;
    size_t len = 1;
    if (p[0] == '%' && (p[1] == '%' || p[1] == 'h' || p[1] == 'p')) {
      p++;
      if (*p == 'h') {
        piece = log_host, len = strlen(log_host);
      } else if (*p == 'p') {
        snprintf(pid, sizeof pid, "%d", (int)getpid());
        piece = pid, len = strlen(pid);
      }
    }
    if (len >= size - o) return -1;
    memcpy(out + o, piece, len);
    o += len;
  }
  out[o] = '\0';
  return 0;
}

/* lstat (path) or fstat (fd, path NULL) without glibc 2.33's lstat and
 * fstat symbols, which would raise the glibc floor (docs/building.md, "Platform"; make
 * test-glibc): on x86-64 the system calls' struct stat is glibc's. */
static int stat_of(int fd, const char *path, struct stat *st) {
#if defined(__x86_64__) && defined(__GLIBC__)
  return (int)(path ? syscall(SYS_lstat, path, st) : syscall(SYS_fstat, fd, st));
#else
  return path ? lstat(path, st) : fstat(fd, st);
#endif
}

/* What a file that is not a regular one is, for the WARN. */
static const char *file_kind(mode_t mode) {
  return S_ISFIFO(mode) ? "a FIFO" : S_ISCHR(mode) ? "a character device" : S_ISBLK(mode) ? "a block device"
       : S_ISDIR(mode) ? "a directory" : S_ISSOCK(mode) ? "a socket" : S_ISLNK(mode) ? "a symbolic link"
       : "not a regular file";
}

static void open_file(void) {
  const char *v = nccomring_env(NCCOMRING_ENV_NCCL_DEBUG_FILE);
  if (v == NULL || nccomring_log_level < NCCOMRING_LOG_VERSION) return;
  const char *fallback = log_fallback == NCCOMRING_LOG_TO_STDERR ? "stderr" : "stdout";
  static char path[PATH_MAX]; /* once, under log_once: off the caller's stack */
  char shown[SHOWN];
  if (expand_path(v, path, sizeof path) != 0) {
    add_pending("NCCL_DEBUG_FILE=%s is longer than %d bytes once %%h and %%p are expanded; logging to %s",
                nccomring_quote(shown, sizeof shown, v), PATH_MAX - 1, fallback);
    return;
  }
  nccomring_quote(shown, sizeof shown, path);
  /* Not even opened when it is there and not a regular file: opening a
   * device can have effects of its own. Then checked again on what was
   * opened, in case it was replaced in between. */
  struct stat st;
  if (stat_of(-1, path, &st) == 0 && !S_ISREG(st.st_mode)) {
    add_pending("NCCL_DEBUG_FILE=%s is %s, not a regular file; logging to %s", shown,
                file_kind(st.st_mode), fallback);
    return;
  }
  int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY,
                0644);
  if (fd < 0) {
    add_pending("NCCL_DEBUG_FILE=%s cannot be opened (%s); logging to %s", shown,
                errno == ELOOP ? "it is a symbolic link" : strerror(errno), fallback);
    return;
  }
  if (stat_of(fd, NULL, &st) != 0) {
    add_pending("NCCL_DEBUG_FILE=%s cannot be opened (fstat: %s); logging to %s", shown,
                strerror(errno), fallback);
    close(fd);
    return;
  }
  if (!S_ISREG(st.st_mode)) {
    add_pending("NCCL_DEBUG_FILE=%s is %s, not a regular file; logging to %s", shown,
                file_kind(st.st_mode), fallback);
    close(fd);
    return;
  }
  log_fd = fd;
}

/* One WARN for each path-valued variable set but ignored under secure
 * execution (env.h), printed with the others of the start. */
static void note_ignored(void) {
  for (int id = 0; id < NCCOMRING_ENV_COUNT; id++) {
    if (n_pending < MAX_PENDING && nccomring_env_ignored_once(id))
      nccomring_env_ignored_text(id, pending[n_pending++], sizeof pending[0]);
  }
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
  int level_given = parse_level();
  parse_subsys();
  parse_style(level_given);
  note_ignored();
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

/* text with every control character (a newline above all) written as
 * \xHH, so that one call prints one line whatever it was given: a copy
 * the caller frees when it is not text; NULL when memory runs out. */
static const char *one_line(const char *text) {
  const unsigned char *p = (const unsigned char *)text;
  while (*p && *p >= 0x20 && *p != 0x7f) p++;
  if (*p == '\0') return text;
  size_t len = strlen(text);
  char *out = malloc(4 * len + 1);
  if (out == NULL) return NULL;
  static const char hex[] = "0123456789abcdef";
  size_t o = 0;
  for (p = (const unsigned char *)text; *p; p++) {
    if (*p < 0x20 || *p == 0x7f) {
      out[o++] = '\\', out[o++] = 'x', out[o++] = hex[*p >> 4], out[o++] = hex[*p & 0xf];
    } else {
      out[o++] = (char)*p;
    }
  }
  out[o] = '\0';
  return out;
}

int nccomring_log_format(char *out, size_t size, const struct nccomring_log_line *l) {
  if (l->style != NCCOMRING_STYLE_CCOM)
    return snprintf(out, size, "%s:%d:%d [%d] NCCL %s %s\n", l->host, l->pid, l->tid, l->rank, l->kind, l->text);
  /* English month names: strftime's %b follows the host's locale. */
  static const char months[12][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                     "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  const struct tm *tm = l->tm;
  const char *month = tm->tm_mon >= 0 && tm->tm_mon < 12 ? months[tm->tm_mon] : "???";
  /* The source file's last component, as libnccom's lines show theirs. */
  size_t start = l->file_len;
  while (start > 0 && l->file[start - 1] != '/') start--;
  long frac = l->nsec >= 0 && l->nsec < 1000000000L ? l->nsec / 100000L : 0;
  return snprintf(out, size, "%04d-%s-%02d %02d:%02d:%02d.%04ld %d:%d [%d] %.*s:%d CCOM %s libnccomring: %s\n",
                  tm->tm_year + 1900, month, tm->tm_mday, tm->tm_hour, tm->tm_min, tm->tm_sec, frac, l->pid,
                  l->tid, l->rank, (int)(l->file_len - start), l->file + start, l->line, l->kind, l->text);
}

void nccomring_log_at(const char *file, size_t file_len, int line_no, int level, int subsys, int rank,
                      const char *raw) {
  if (nccomring_log_level < level) return;
  if (level >= NCCOMRING_LOG_INFO && !(nccomring_log_subsys & subsys)) return;
  const char *text = one_line(raw);
  if (text == NULL) return;
  struct nccomring_log_line l = {
      .style = nccomring_log_style,
      .host = log_host,
      .pid = (int)getpid(),
      .tid = (int)syscall(SYS_gettid),
      .rank = rank,
      .file = file,
      .file_len = file_len,
      .line = line_no,
      .kind = level == NCCOMRING_LOG_WARN ? "WARN" : level == NCCOMRING_LOG_TRACE ? "TRACE" : "INFO",
      .text = text,
  };
  /* libnccom's lines carry the local time. localtime_r reads the zone
   * (TZ, else /etc/localtime) at its first use in the process, as the
   * host's own logging does, and only reads. */
  struct tm tm;
  if (l.style == NCCOMRING_STYLE_CCOM) {
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    localtime_r(&now.tv_sec, &tm);
    l.tm = &tm, l.nsec = now.tv_nsec;
  }
  /* The whole line first, so that it leaves in one piece. */
  char small[1024], *line = small;
  int n = nccomring_log_format(small, sizeof small, &l);
  if (n < 0) goto out;
  if ((size_t)n >= sizeof small) {
    line = malloc((size_t)n + 1);
    if (line == NULL) goto out;
    nccomring_log_format(line, (size_t)n + 1, &l);
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
out:
  if (text != raw) free((void *)text);
}
