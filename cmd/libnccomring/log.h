/*
 * log.h - NCCL-style logging (internal; D21, D26, P14, P15; docs/operating.md "Where
 * the log lines go", docs/errors.md Environment).
 *
 * One implementation, compiled into the library (log.c in its package) and
 * into the preload shim. It reads NCCL_DEBUG, NCCL_DEBUG_SUBSYS,
 * NCCL_DEBUG_FILE and NCCOM_RING_LOG_STYLE once per process, at
 * nccomring_log_init, and owns what it read: the level, the subsystem mask,
 * the line style, the host name, the stream or file the lines go to, and
 * the lock around stdout or stderr.
 */
#ifndef NCCOMRING_LOG_H
#define NCCOMRING_LOG_H

#include <stddef.h>
#include <time.h>

/* NCCL_DEBUG levels (D21). */
enum {
  NCCOMRING_LOG_NONE = 0,
  NCCOMRING_LOG_VERSION = 1,
  NCCOMRING_LOG_WARN = 2,
  NCCOMRING_LOG_INFO = 3,
  NCCOMRING_LOG_ABORT = 4,
  NCCOMRING_LOG_TRACE = 5
};

/* NCCL_DEBUG_SUBSYS bits. */
enum {
  NCCOMRING_SUBSYS_INIT = 1 << 0,
  NCCOMRING_SUBSYS_COLL = 1 << 1,
  NCCOMRING_SUBSYS_P2P = 1 << 2,
  NCCOMRING_SUBSYS_SHM = 1 << 3,
  NCCOMRING_SUBSYS_NET = 1 << 4,
  NCCOMRING_SUBSYS_GRAPH = 1 << 5,
  NCCOMRING_SUBSYS_TUNING = 1 << 6,
  NCCOMRING_SUBSYS_ENV = 1 << 7,
  NCCOMRING_SUBSYS_ALLOC = 1 << 8,
  NCCOMRING_SUBSYS_CALL = 1 << 9,
  NCCOMRING_SUBSYS_ALL = ~0
};

/* Where lines go when the process has no ncclDebugFile of libnccom's and
 * NCCL_DEBUG_FILE is unset (or cannot be opened): stdout for the library,
 * as NCCL; stderr for the preload shim. */
enum nccomring_log_fallback { NCCOMRING_LOG_TO_STDOUT, NCCOMRING_LOG_TO_STDERR };

/* Line styles (D26): NCCL's (D21), or libnccom's when a libnccom is loaded
 * in the process (or NCCOM_RING_LOG_STYLE says so). */
enum { NCCOMRING_STYLE_NCCL = 0, NCCOMRING_STYLE_CCOM = 1 };

/* Set once per process by nccomring_log_init; NONE and NCCL before it. */
extern int nccomring_log_level;
extern int nccomring_log_subsys;
extern int nccomring_log_style;

/* Reads the variables, once per process (later calls return at once), and
 * prints the WARNs about their values. caller: a code address in the
 * object that made the first call, where libnccom's ncclDebugFile is
 * looked up (the first call's wins); fallback: the first call's wins. */
void nccomring_log_init(void *caller, enum nccomring_log_fallback fallback);

/* How many bytes of a value nccomring_quote quotes before it cuts it and
 * gives its whole length (D28; internal/quote's MaxBytes). */
#define NCCOMRING_QUOTE_MAX 256

/* Writes in quoted into out (size bytes, NUL-terminated), as package
 * internal/quote does in Go: in double quotes, \" \\ \n \r \t, every other
 * byte outside printable ASCII as \xHH. A value longer than
 * NCCOMRING_QUOTE_MAX bytes, or one that does not fit, is cut before an
 * escape, closed, and followed by its whole length: "abc"... (N bytes).
 * Returns out. For values from the environment or from files in
 * WARN texts: a newline or a terminal escape in one shows as text. */
char *nccomring_quote(char *out, size_t size, const char *in);

/* The parts of one line, as nccomring_log_format puts them together. */
struct nccomring_log_line {
  int style;            /* NCCOMRING_STYLE_* */
  const struct tm *tm;  /* CCOM: the local time, */
  long nsec;            /* and its nanoseconds (four digits are shown) */
  const char *host;     /* NCCL: the short host name */
  int pid, tid, rank;
  const char *file;     /* CCOM: the source file that printed it (its */
  size_t file_len;      /* last component is shown), file_len bytes, */
  int line;             /* and the line */
  const char *kind;     /* "WARN", "INFO" or "TRACE" */
  const char *text;     /* one line already: no control characters */
};

/* Writes the line, with its '\n', into out (size bytes, NUL-terminated) and
 * returns its length as snprintf does (>= size: it was cut). The styles:
 *   NCCL  "<host>:<pid>:<tid> [<rank>] NCCL <kind> <text>"
 *   CCOM  "<yyyy>-<Mon>-<dd> <hh>:<mm>:<ss>.<4 digits> <pid>:<tid> [<rank>]
 *          <file>:<line> CCOM <kind> libnccomring: <text>"
 * (the month in English whatever the locale). The one formatter of both
 * styles; nccomring_log_at calls it, and the test of the logger. */
int nccomring_log_format(char *out, size_t size, const struct nccomring_log_line *l);

/* Prints one line, in the style of the process (nccomring_log_format),
 * at file:line (file_len bytes of file, not NUL-terminated when it comes
 * from Go). WARN lines print at level >= WARN whatever the subsystem; INFO
 * and TRACE lines need their level and subsys enabled; a VERSION line
 * prints at level >= VERSION, as INFO. Nothing before nccomring_log_init.
 * A control character left in text (values should be quoted already) is
 * printed as \xHH: one call, one line. */
void nccomring_log_at(const char *file, size_t file_len, int line, int level, int subsys, int rank,
                      const char *text);

/* nccomring_log_at at the line of C that calls it. */
#define nccomring_log(level, subsys, rank, text) \
  nccomring_log_at(__FILE__, sizeof __FILE__ - 1, __LINE__, (level), (subsys), (rank), (text))

#endif
