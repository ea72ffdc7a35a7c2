/*
 * log_test - the logger (cmd/libnccomring/log.c) on its own, compiled with
 * env.c and hostsym.c as the preload shim compiles it: build/log-test
 * [STANDIN], where STANDIN is a library named libnccom.so.2 (D26).
 *
 *   - nccomring_log_format, the one formatter, for fixed parts: both line
 *     styles exactly, the timestamp's four digits and English months, the
 *     source file's last component, "libnccomring: " before the text, and
 *     the length of a line that does not fit.
 *   - The style and level a process gets, each case in a child of its
 *     own (the logger starts once per process) whose stdout is a file:
 *     NCCOM_RING_LOG_STYLE=ccom prints WARN without NCCL_DEBUG, in the CCOM
 *     form naming this file and line; nccl prints nothing without
 *     NCCL_DEBUG; NCCL_DEBUG=VERSION or INFO still sets the level under
 *     ccom; unset, the style is NCCL's until a libnccom.so.2 is loaded
 *     (STANDIN, dlopen'd), and CCOM then; an unknown value is one WARN.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"

static int failures;

#define CHECK(cond, ...)                        \
  do {                                          \
    if (!(cond)) {                              \
      printf("log-test: FAIL: " __VA_ARGS__);   \
      printf("\n");                             \
      failures++;                               \
    }                                           \
  } while (0)

/* nccomring_quote (D28): a value longer than NCCOMRING_QUOTE_MAX (256)
 * bytes is cut there and its whole length given, as Go's internal/quote
 * does; one of exactly 256 is not; a buffer too small cuts earlier, still
 * with the length. */
static void quote_cases(void) {
  static char in[1 << 20 | 1], out[4 * NCCOMRING_QUOTE_MAX + 48], want[sizeof out];
  memset(in, 'a', 256);
  in[256] = '\0';
  snprintf(want, sizeof want, "\"%.256s\"", in);
  CHECK(strcmp(nccomring_quote(out, sizeof out, in), want) == 0, "256 bytes: '%s'", out);
  memset(in, 'a', 1 << 20);
  in[1 << 20] = '\0';
  in[256] = '\0';
  snprintf(want, sizeof want, "\"%.256s\"... (1048576 bytes)", in);
  in[256] = 'a';
  CHECK(strcmp(nccomring_quote(out, sizeof out, in), want) == 0, "1 MiB: '%.300s'", out);
  char small[60];
  nccomring_quote(small, sizeof small, in);
  CHECK(strlen(small) < sizeof small && strstr(small, "\"... (1048576 bytes)") != NULL, "small buffer: '%s'", small);
  memset(in, '\n', 257);
  in[257] = '\0';
  nccomring_quote(out, sizeof out, in);
  CHECK(strncmp(out, "\"\\n\\n", 5) == 0 && strstr(out, "\"... (257 bytes)") != NULL && strlen(out) == 2 + 2 * 256 + 15,
        "257 newlines: '%s'", out);
}

static void format_cases(void) {
  struct tm tm = {.tm_year = 2026 - 1900, .tm_mon = 3, .tm_mday = 13, .tm_hour = 1, .tm_min = 46, .tm_sec = 31};
  static const char file[] = "cmd/libnccomring/shim.c";
  struct nccomring_log_line l = {
      .style = NCCOMRING_STYLE_CCOM, .tm = &tm, .nsec = 67598765, .host = "unused",
      .pid = 837617, .tid = 837663, .rank = 2, .file = file, .file_len = sizeof file - 1, .line = 125,
      .kind = "WARN", .text = "ncclTopoPostset: comm is NULL"};
  char out[256];
  int n = nccomring_log_format(out, sizeof out, &l);
  const char *want = "2026-Apr-13 01:46:31.0675 837617:837663 [2] shim.c:125 CCOM WARN libnccomring: "
                     "ncclTopoPostset: comm is NULL\n";
  CHECK(n == (int)strlen(want) && strcmp(out, want) == 0, "CCOM line '%s', want '%s'", out, want);

  /* Four digits, truncated; every month in English; a file with no
   * directory, and one given by length without a NUL (as Go passes it). */
  static const char *months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                 "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  for (int m = 0; m < 12; m++) {
    tm.tm_mon = m, tm.tm_mday = 1, tm.tm_hour = 0, tm.tm_min = 0, tm.tm_sec = 0;
    l.nsec = m == 0 ? 999999999 : 0;
    l.file = "log.c:no";
    l.file_len = 5;
    l.kind = "INFO", l.rank = -1, l.line = 7;
    nccomring_log_format(out, sizeof out, &l);
    char w[256];
    snprintf(w, sizeof w, "2026-%s-01 00:00:00.%s 837617:837663 [-1] log.c:7 CCOM INFO libnccomring: %s\n",
             months[m], m == 0 ? "9999" : "0000", l.text);
    CHECK(strcmp(out, w) == 0, "month %d: '%s', want '%s'", m, out, w);
  }

  struct nccomring_log_line nccl = {
      .style = NCCOMRING_STYLE_NCCL, .host = "ip-10-0-0-1", .pid = 12, .tid = 13, .rank = 3,
      .file = file, .file_len = sizeof file - 1, .line = 9, .kind = "WARN", .text = "x"};
  n = nccomring_log_format(out, sizeof out, &nccl);
  CHECK(strcmp(out, "ip-10-0-0-1:12:13 [3] NCCL WARN x\n") == 0, "NCCL line '%s'", out);
  CHECK(n == (int)strlen(out), "NCCL line length %d", n);

  /* A line that does not fit: cut, NUL-terminated, its whole length. */
  char small[16];
  l.tm = &tm, l.text = "t";
  n = nccomring_log_format(small, sizeof small, &l);
  nccomring_log_format(out, sizeof out, &l);
  CHECK(n == (int)strlen(out) && strlen(small) == sizeof small - 1, "cut line: %d, '%s'", n, small);
}

/* The two lines each child prints, the WARN at line WARN_LINE (the INFO
 * at the next). */
enum { WARN_LINE = __LINE__ + 2 };
static void print_two_lines(void) {
  nccomring_log(NCCOMRING_LOG_WARN, 0, 5, "the warning");
  nccomring_log(NCCOMRING_LOG_INFO, NCCOMRING_SUBSYS_ENV, 5, "the information");
}

/* What one process prints: sets the variables (NULL: unset), dlopens
 * standin when given, starts the logger, prints a WARN and an INFO line
 * (ENV, in the default mask) and returns its stdout, read back. */
static char *run(const char *style, const char *debug, const char *standin, int *warn_line) {
  char path[] = "/tmp/log-test.XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return NULL;
  unlink(path);
  fflush(stdout); /* or the child writes this process's buffered lines too */
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fd, 1);
    unsetenv("NCCL_DEBUG_FILE"), unsetenv("NCCL_DEBUG_SUBSYS");
    if (style) setenv("NCCOM_RING_LOG_STYLE", style, 1); else unsetenv("NCCOM_RING_LOG_STYLE");
    if (debug) setenv("NCCL_DEBUG", debug, 1); else unsetenv("NCCL_DEBUG");
    if (standin && dlopen(standin, RTLD_LAZY | RTLD_LOCAL) == NULL) {
      fprintf(stderr, "log-test: dlopen %s: %s\n", standin, dlerror());
      _exit(1);
    }
    nccomring_log_init((void *)&run, NCCOMRING_LOG_TO_STDOUT);
    print_two_lines();
    fflush(stdout);
    _exit(0);
  }
  *warn_line = WARN_LINE;
  int status;
  waitpid(pid, &status, 0);
  static char text[4096];
  ssize_t n = pread(fd, text, sizeof text - 1, 0);
  close(fd);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || n < 0) return NULL;
  text[n] = '\0';
  return text;
}

/* out is exactly the lines of pattern (an extended regex, anchored), and
 * nothing else. */
static int matches(const char *out, const char *pattern) {
  regex_t re;
  if (regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB) != 0) return 0;
  int ok = regexec(&re, out, 0, NULL, 0) == 0;
  regfree(&re);
  return ok;
}

#define TS "[0-9]{4}-(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)-[0-3][0-9] [0-2][0-9]:[0-5][0-9]:[0-6][0-9]\\.[0-9]{4} [0-9]+:[0-9]+"
#define NCCL_PREFIX "[^ :]+:[0-9]+:[0-9]+"

static void process_cases(const char *standin) {
  int at;
  char want[512];
  const char *out = run("ccom", NULL, NULL, &at);
  snprintf(want, sizeof want, "^" TS " \\[5\\] log_test\\.c:%d CCOM WARN libnccomring: the warning\n$", at);
  CHECK(out && matches(out, want), "ccom, NCCL_DEBUG unset: '%s', want /%s/", out ? out : "(failed)", want);

  out = run("CCOM", "INFO", NULL, &at);
  snprintf(want, sizeof want,
           "^" TS " \\[5\\] log_test\\.c:%d CCOM WARN libnccomring: the warning\n" TS
           " \\[5\\] log_test\\.c:%d CCOM INFO libnccomring: the information\n$", at, at + 1);
  CHECK(out && matches(out, want), "ccom, NCCL_DEBUG=INFO: '%s'", out ? out : "(failed)");

  out = run("ccom", "VERSION", NULL, &at);
  CHECK(out && out[0] == '\0', "ccom, NCCL_DEBUG=VERSION prints no WARN: '%s'", out ? out : "(failed)");

  out = run("nccl", NULL, standin, &at);
  CHECK(out && out[0] == '\0', "nccl, NCCL_DEBUG unset: nothing, even with a libnccom: '%s'", out ? out : "(failed)");

  out = run("nccl", "WARN", standin, &at);
  CHECK(out && matches(out, "^" NCCL_PREFIX " \\[5\\] NCCL WARN the warning\n$"), "nccl, NCCL_DEBUG=WARN: '%s'",
        out ? out : "(failed)");

  out = run(NULL, "WARN", NULL, &at);
  CHECK(out && matches(out, "^" NCCL_PREFIX " \\[5\\] NCCL WARN the warning\n$"),
        "unset, no libnccom: NCCL's form: '%s'", out ? out : "(failed)");

  out = run(NULL, NULL, NULL, &at);
  CHECK(out && out[0] == '\0', "unset, no libnccom, NCCL_DEBUG unset: nothing: '%s'", out ? out : "(failed)");

  out = run("bogus\n", "WARN", NULL, &at);
  CHECK(out && matches(out, "^" NCCL_PREFIX " \\[-1\\] NCCL WARN NCCOM_RING_LOG_STYLE=\"bogus\\\\n\" is not nccl or "
                            "ccom; using nccl, as no libnccom is loaded\n" NCCL_PREFIX " \\[5\\] NCCL WARN the warning\n$"),
        "an unknown value: '%s'", out ? out : "(failed)");

  if (standin == NULL) {
    printf("log-test: no STANDIN given: the cases with a libnccom loaded were not run\n");
    failures++;
    return;
  }
  out = run(NULL, NULL, standin, &at);
  snprintf(want, sizeof want, "^" TS " \\[5\\] log_test\\.c:%d CCOM WARN libnccomring: the warning\n$", at);
  CHECK(out && matches(out, want), "unset, libnccom.so.2 loaded: CCOM, WARN by default: '%s'", out ? out : "(failed)");

  out = run("bogus", NULL, standin, &at);
  CHECK(out && matches(out, "^" TS " \\[-1\\] log\\.c:[0-9]+ CCOM WARN libnccomring: NCCOM_RING_LOG_STYLE=\"bogus\" is "
                            "not nccl or ccom; using ccom, as a libnccom is loaded\n" TS " \\[5\\] log_test\\.c:[0-9]+ "
                            "CCOM WARN libnccomring: the warning\n$"),
        "an unknown value with a libnccom: '%s'", out ? out : "(failed)");
}

int main(int argc, char **argv) {
  quote_cases();
  format_cases();
  process_cases(argc > 1 ? argv[1] : NULL);
  if (failures) {
    printf("log-test: %d failed\n", failures);
    return 1;
  }
  printf("log-test: the formatter (both styles, the timestamp, the prefix) and the style and level of a "
         "process (NCCOM_RING_LOG_STYLE, a libnccom loaded, NCCL_DEBUG): passed\n");
  return 0;
}
