/*
 * report.c - what a run tells: async-signal-safe text (the watchdog and
 * the crash handler write with it), --keep-going's count of differing
 * cases by kind (make conformance-count), the progress lines, the --json
 * summary and the --junit file.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "conformance.h"

/* ---- async-signal-safe text: a bounded buffer and appenders ---- */

void sb_raw(struct sbuf *b, const char *s, size_t len) {
  for (size_t i = 0; i < len && b->n + 1 < b->cap; i++) b->p[b->n++] = s[i];
  b->p[b->n] = '\0';
}
void sb_str(struct sbuf *b, const char *s) { sb_raw(b, s, strlen(s)); }
void sb_long(struct sbuf *b, long long v) {
  char t[24];
  int i = 0;
  unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
  do t[i++] = (char)('0' + u % 10); while (u /= 10);
  if (v < 0) t[i++] = '-';
  while (i > 0) sb_raw(b, &t[--i], 1);
}
static void sb_hex(struct sbuf *b, unsigned long long v) {
  char t[16];
  int i = 0;
  do t[i++] = "0123456789abcdef"[v & 15]; while (v >>= 4);
  sb_str(b, "0x");
  while (i > 0) sb_raw(b, &t[--i], 1);
}
/* v >= 0 with `decimals` (1..3) digits after the point. */
void sb_fixed(struct sbuf *b, double v, int decimals) {
  long long scale = decimals == 1 ? 10 : decimals == 2 ? 100 : 1000, x = (long long)(v * (double)scale + 0.5);
  sb_long(b, x / scale);
  sb_str(b, ".");
  for (long long d = scale / 10; d > 0; d /= 10) {
    char c = (char)('0' + (x / d) % 10);
    sb_raw(b, &c, 1);
  }
}
/* A JSON string (or null), escaped, at most 16 KB of it. */
static void sb_json(struct sbuf *b, const char *s) {
  if (s == NULL) {
    sb_str(b, "null");
    return;
  }
  sb_str(b, "\"");
  for (size_t i = 0; s[i] && i < 16384; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\') {
      char e[2] = {'\\', (char)c};
      sb_raw(b, e, 2);
    } else if (c == '\n') {
      sb_str(b, "\\n");
    } else if (c == '\t') {
      sb_str(b, "\\t");
    } else if (c < 0x20 || c == 0x7f) {
      char e[6] = {'\\', 'u', '0', '0', "0123456789abcdef"[c >> 4], "0123456789abcdef"[c & 15]};
      sb_raw(b, e, 6);
    } else {
      sb_raw(b, (const char *)&c, 1);
    }
  }
  sb_str(b, "\"");
}

void write_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    p += w;
    n -= (size_t)w;
  }
}

/* The command that replays a case. */
void sb_replay(struct sbuf *b, const char *text, int kind) {
  sb_str(b, progName);
  if (crossRankMode) sb_str(b, " --cross-rank");
  sb_str(b, " --candidate ");
  sb_str(b, libs[0].path);
  sb_str(b, " --reference ");
  sb_str(b, libs[1].path);
  if (realMode) sb_str(b, " --real");
  if (podOrder) {
    sb_str(b, " --pod-order '");
    sb_str(b, podOrder);
    sb_str(b, "'");
  }
  /* the limits that differ from the defaults, so the replay stops the same way */
  if (cpuLimitSec != DEFAULT_CPU_LIMIT) {
    sb_str(b, " --cpu-limit ");
    sb_long(b, cpuLimitSec);
  }
  if (blockedLimitSec != DEFAULT_BLOCKED_LIMIT) {
    sb_str(b, " --blocked-limit ");
    sb_long(b, blockedLimitSec);
  }
  if (timeoutSec != DEFAULT_TIMEOUT) {
    sb_str(b, " --timeout ");
    sb_long(b, timeoutSec);
  }
  if (kind == CASE_SPEC) {
    sb_str(b, " --case '");
    sb_str(b, text);
    sb_str(b, "'");
  } else {
    sb_str(b, " --count 0");
  }
}
/* ---- reports, shrinking, the run ---- */

/* --keep-going (make conformance-count): every case runs, none is shrunk;
 * each one that differs prints one line with its kind and the command that
 * replays it, and the run ends with the count by kind. A kind is the call
 * and what differs in it, numbers dropped ("ncclTopoPostset: channels[N]
 * .ring.userRanks[N]"), so that one change to the rings shows as a few
 * kinds however many cases it moves. */
int keepGoing;
enum { KINDS = 64 };
static struct {
  char text[160];
  long n;
} kinds[KINDS];
static int nKinds;
static long kindsOther; /* differences past the KINDS-th kind */

/* text's first line with each run of digits as "N", up to stop. */
void kind_of(const char *text, char *out, size_t size) {
  size_t o = 0;
  const char *on = strstr(text, " on rank ");
  if (on != NULL) { /* "CALL on rank R: WHAT: candidate ..." -> "CALL: WHAT" */
    const char *what = on + strlen(" on rank ");
    while (*what >= '0' && *what <= '9') what++;
    if (strncmp(what, " (both returned", 15) == 0) what = strchr(what, ')') ? strchr(what, ')') + 1 : what;
    if (*what == ':') what++;
    while (*what == ' ') what++;
    o = (size_t)snprintf(out, size, "%.*s: ", (int)(on - text), text);
    if (o >= size) o = size - 1;
    text = what;
    int c, r;
    if (sscanf(text, "candidate returned %d, reference %d", &c, &r) == 2) { /* the codes are the kind */
      if (c == r) snprintf(out + o, size - o, "both returned %d, the lines printed differ", c);
      else snprintf(out + o, size - o, "candidate returned %d, reference %d", c, r);
      return;
    }
    if (strncmp(text, "comm byte ", 10) == 0 && strchr(text, '(')) text = strchr(text, '(') + 1;
  }
  for (; *text && *text != '\n' && o + 2 < size; text++) {
    if (strncmp(text, ": candidate", 11) == 0 || strncmp(text, " candidate ", 11) == 0 || strncmp(text, "): candidate", 12) == 0 ||
        strncmp(text, " is ", 4) == 0 || strncmp(text, " byte ", 6) == 0)
      break;
    if (*text >= '0' && *text <= '9') {
      out[o++] = 'N';
      while (text[1] >= '0' && text[1] <= '9') text++;
    } else {
      out[o++] = *text;
    }
  }
  if (strncmp(text, " byte ", 6) == 0 && o + 7 < size) memcpy(out + o, " bytes", 6), o += 6;
  out[o] = '\0';
}

/* One differing case under --keep-going: its line, and its kind counted. */
void count_difference(const char *kind, const char *replay) {
  printf("conformance: differs [%s]: %s\n", kind, replay);
  for (int k = 0; k < nKinds; k++)
    if (strcmp(kinds[k].text, kind) == 0) {
      kinds[k].n++;
      return;
    }
  if (nKinds == KINDS) {
    kindsOther++;
    return;
  }
  snprintf(kinds[nKinds].text, sizeof kinds[nKinds].text, "%s", kind);
  kinds[nKinds++].n = 1;
}

/* The count by kind, most first. Returns the number of differing cases. */
long print_kinds(const char *what, long cases) {
  long total = kindsOther;
  for (int k = 0; k < nKinds; k++) total += kinds[k].n;
  printf("conformance: %ld of %ld %s differ%s\n", total, cases, what, total ? ", by kind:" : "");
  for (int done = 0; done < nKinds; done++) {
    int best = -1;
    for (int k = 0; k < nKinds; k++)
      if (kinds[k].n > 0 && (best < 0 || kinds[k].n > kinds[best].n)) best = k;
    printf("  %6ld  %s\n", kinds[best].n, kinds[best].text);
    kinds[best].n = -kinds[best].n; /* printed */
  }
  if (kindsOther) printf("  %6ld  (kinds past the first %d)\n", kindsOther, KINDS);
  return total;
}

/* The first failing case of the run, for the --json summary. */
void record_failure(const char *text, int kind, const char *why, const char *more) {
  if (sum.haveFailure) return;
  sum.haveFailure = 1;
  sum.failureKind = kind;
  snprintf(sum.failureCase, sizeof sum.failureCase, "%s", text);
  snprintf(sum.failureDiff, sizeof sum.failureDiff, "%s%s%s", why, why[0] && more[0] ? "\n" : "", more);
}

/* ------------------------------------------------------------------ */
/* Progress lines and the --json summary                               */

/* A line on stderr every --progress seconds (main thread, between
 * cases). */
void progress_tick(void) {
  if (progressSec <= 0) return;
  long long now = now_ns(CLOCK_MONOTONIC);
  if (now < nextProgressNs) return;
  nextProgressNs = now + (long long)progressSec * 1000000000LL;
  double elapsed = (double)(now - runStartNs) / 1e9;
  char extra[96] = "";
  if (sum.shrinkTries > 0) {
    snprintf(extra, sizeof extra, ", %ld smaller cases tried", sum.shrinkTries);
  } else if (randomStartNs && sum.random > 0 && sum.random < sum.count) {
    double per = (double)(now - randomStartNs) / 1e9 / (double)sum.random;
    snprintf(extra, sizeof extra, ", about %.0f s left", per * (double)(sum.count - sum.random));
  }
  if (crossRankMode)
    fprintf(stderr,
            "cross-rank: progress: %.0f s, %s: %ld cases done, %ld of %ld random clusters, %ld split verdicts, "
            "%ld differences, the WARN names the corrupted rank in %ld of %ld failures%s\n",
            elapsed, sum.phase, sum.cases, sum.random, sum.count, sum.splits, sum.differences, sum.named, sum.failed,
            extra);
  else
    fprintf(stderr, "conformance: progress: %.0f s, %s: %ld cases done, %ld of %ld random, %ld differences%s\n",
            elapsed, sum.phase, sum.cases, sum.random, sum.count, sum.differences, extra);
}

static void sb_key(struct sbuf *b, const char *key) {
  sb_str(b, ",\n  \"");
  sb_str(b, key);
  sb_str(b, "\": ");
}

/* A count, or null when the mode has none. */
static void sb_count(struct sbuf *b, const char *key, long v, int present) {
  sb_key(b, key);
  if (present) sb_long(b, v);
  else sb_str(b, "null");
}

static void sb_replay_json(struct sbuf *b, const char *text, int kind) {
  static char replay[1 << 14];
  struct sbuf r = {replay, sizeof replay, 0};
  sb_replay(&r, text, kind);
  sb_json(b, replay);
}

/* XML text or attribute content, escaped, at most 16 KB of it. XML 1.0
 * cannot hold most control characters at all: they become '?'. */
static void sb_xml(struct sbuf *b, const char *s) {
  for (size_t i = 0; s[i] && i < 16384; i++) {
    unsigned char c = (unsigned char)s[i];
    switch (c) {
    case '&': sb_str(b, "&amp;"); break;
    case '<': sb_str(b, "&lt;"); break;
    case '>': sb_str(b, "&gt;"); break;
    case '"': sb_str(b, "&quot;"); break;
    case '\'': sb_str(b, "&apos;"); break;
    case '\n': sb_str(b, "&#10;"); break;
    case '\t': sb_str(b, "&#9;"); break;
    default:
      if (c < 0x20 || c == 0x7f) sb_str(b, "?");
      else sb_raw(b, (const char *)&c, 1);
    }
  }
}

/* One <testcase NAME> with a <KIND message=MESSAGE>TEXT</KIND> (kind NULL:
 * it passed). */
static void sb_testcase(struct sbuf *b, const char *name, const char *detail, const char *kind, const char *message,
                        const char *text) {
  sb_str(b, "    <testcase classname=\"conformance\" name=\"");
  sb_xml(b, name);
  if (detail) sb_xml(b, detail);
  if (kind == NULL) {
    sb_str(b, "\"/>\n");
    return;
  }
  sb_str(b, "\">\n      <");
  sb_str(b, kind);
  sb_str(b, " message=\"");
  sb_xml(b, message);
  sb_str(b, "\">");
  sb_xml(b, text);
  sb_str(b, "</");
  sb_str(b, kind);
  sb_str(b, ">\n    </testcase>\n");
}

/* The --junit file: a testcase for loading each library (an error when
 * the run ended with exit 2 and it is not loaded), then one for the cases:
 * a failure with the first difference and its replay (exit 1), an error
 * saying what stopped the run (exits 2 to 4). Written by write_json, once,
 * async-signal-safe like it. */
static void write_junit(int status) {
  static char buf[1 << 16], text[12288], msg[2048];
  if (junitFd < 0) return;
  struct sbuf b = {buf, sizeof buf, 0}, t = {text, sizeof text, 0}, m = {msg, sizeof msg, 0};
  int loadErr[2], failures = 0, errors = 0;
  for (int lib = 0; lib < 2; lib++) errors += loadErr[lib] = status == 2 && !libs[lib].handle;
  const char *kind = NULL;
  if (status == 1) {
    kind = "failure", failures++;
    sb_str(&m, sum.haveFailure ? sum.failureDiff : "a difference");
    if (sum.haveFailure) {
      sb_str(&t, sum.failureDiff);
      sb_str(&t, "\ncase: ");
      sb_str(&t, sum.failureCase);
      sb_str(&t, "\nreplay: ");
      sb_replay(&t, sum.haveSmallest ? sum.smallest : sum.failureCase,
                sum.haveSmallest ? sum.smallestKind : sum.failureKind);
    }
  } else if (status == 2) {
    kind = "error", errors++;
    sb_str(&m, sum.error[0] ? sum.error : "usage or load error");
    sb_str(&t, msg);
  } else if (status != 0) {
    kind = "error", errors++;
    if (status == 4 && stopInfo.limit) {
      sb_str(&m, "timeout (");
      sb_str(&m, stopInfo.limit);
      sb_str(&m, "): ");
      sb_limit(&m, &stopInfo);
    } else {
      sb_str(&m, status == 4 ? "a case hit a run limit" : status == 3 ? "a library crashed" : "an unexpected exit");
    }
    if (stopInfo.reason) {
      sb_str(&m, stopInfo.call ? (stopInfo.limit ? ", in " : " in ") : "");
      sb_str(&m, stopInfo.call ? stopInfo.call : "");
      sb_str(&m, stopInfo.lib >= 0 && stopInfo.lib < 2 ? " of the " : "");
      sb_str(&m, stopInfo.lib >= 0 && stopInfo.lib < 2 ? libs[stopInfo.lib].role : "");
    }
    sb_str(&t, msg);
    if (stopInfo.reason && stopInfo.kind >= 0) {
      sb_str(&t, "\ncase: ");
      sb_str(&t, stopInfo.text);
      sb_str(&t, "\nreplay: ");
      sb_replay(&t, stopInfo.text, stopInfo.kind);
    }
    if (status == 4 && stopInfo.limit) {
      sb_str(&t, "\n");
      sb_threads(&t, &stopInfo, "");
    }
  }
  sb_str(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"conformance\" tests=\"3\" failures=\"");
  sb_long(&b, failures);
  sb_str(&b, "\" errors=\"");
  sb_long(&b, errors);
  sb_str(&b, "\">\n  <testsuite name=\"conformance ");
  sb_str(&b, crossRankMode ? "--cross-rank" : "default");
  sb_str(&b, realMode ? " --real" : "");
  sb_str(&b, ": ");
  sb_xml(&b, libs[0].path);
  sb_str(&b, " against ");
  sb_xml(&b, libs[1].path);
  sb_str(&b, "\" tests=\"3\" failures=\"");
  sb_long(&b, failures);
  sb_str(&b, "\" errors=\"");
  sb_long(&b, errors);
  sb_str(&b, "\">\n");
  for (int lib = 0; lib < 2; lib++) {
    sb_testcase(&b, lib ? "load the reference " : "load the candidate ", libs[lib].path, loadErr[lib] ? "error" : NULL,
                sum.error[0] ? sum.error : "not loaded", sum.error[0] ? sum.error : "not loaded");
  }
  static char cases[64];
  struct sbuf c = {cases, sizeof cases, 0};
  sb_long(&c, sum.cases);
  sb_str(&c, sum.cases == 1 ? " case" : " cases");
  sb_testcase(&b, crossRankMode ? "cross-rank clusters: " : "clusters: ", cases, kind, msg, text);
  sb_str(&b, "  </testsuite>\n</testsuites>\n");
  if (lseek(junitFd, 0, SEEK_SET) == 0 && ftruncate(junitFd, 0) == 0) write_all(junitFd, b.p, b.n);
}

/* The --json summary (docs/checking.md, "The conformance suite", for the fields).
 * Written once, by whichever of the main thread, the watchdog and the
 * crash handler ends the run; async-signal-safe like report_stop. */
void write_json(int status) {
  static int written;
  static char buf[1 << 18];
  static const char *results[] = {"pass", "fail", "error", "crash", "timeout"};
  if ((jsonFd < 0 && junitFd < 0) || __atomic_exchange_n(&written, 1, __ATOMIC_SEQ_CST)) return;
  write_junit(status);
  if (jsonFd < 0) return;
  struct sbuf b = {buf, sizeof buf, 0};
  int x = crossRankMode;
  sb_str(&b, "{\n  \"harness\": \"conformance\"");
  sb_key(&b, "mode");
  sb_json(&b, x ? "cross-rank" : "default");
  sb_key(&b, "real");
  sb_str(&b, realMode ? "true" : "false");
  for (int lib = 0; lib < 2; lib++) {
    sb_key(&b, libs[lib].role);
    sb_str(&b, "{\"path\": ");
    sb_json(&b, libs[lib].path);
    sb_str(&b, ", \"loaded\": ");
    sb_str(&b, libs[lib].handle ? "true" : "false");
    sb_str(&b, ", \"cxx_names\": ");
    sb_str(&b, libs[lib].mangled ? "true" : "false");
    sb_str(&b, "}");
  }
  sb_key(&b, "seed");
  sb_str(&b, "\"");
  sb_hex(&b, sum.seed);
  sb_str(&b, "\"");
  sb_count(&b, "count", sum.count, 1);
  sb_key(&b, "case");
  sb_json(&b, sum.oneCase);
  sb_count(&b, "cpu_limit_seconds", cpuLimitSec, 1);
  sb_count(&b, "blocked_limit_seconds", blockedLimitSec, 1);
  sb_count(&b, "timeout_seconds", timeoutSec, 1);
  sb_count(&b, "cases", sum.cases, 1);
  sb_count(&b, "random_cases", sum.random, 1);
  sb_count(&b, "numbered_across_nodes", sum.numbered, 1);
  sb_count(&b, "differences", sum.differences, 1);
  sb_count(&b, "split_verdicts", sum.splits, x);
  sb_count(&b, "named_cases_run", sum.namedRun, x);
  sb_count(&b, "named_cases_failed", sum.namedFailed, x);
  sb_count(&b, "failed_clusters", sum.failed, x);
  sb_count(&b, "named_rank", sum.named, x);
  sb_key(&b, "named_rank_rate");
  if (x) sb_fixed(&b, sum.failed ? 100.0 * (double)sum.named / (double)sum.failed : 100.0, 1);
  else sb_str(&b, "null");
  sb_count(&b, "internal_errors", sum.internal, x);
  sb_count(&b, "fewer_channels", sum.fewer, x);
  sb_key(&b, "misses_by_kind");
  if (x) {
    sb_str(&b, "{");
    for (int k = X_RECV; k < X_COUNT; k++) {
      sb_str(&b, k > X_RECV ? ",\n    \"" : "\n    \"");
      sb_str(&b, xKindLabels[k]);
      sb_str(&b, "\": {\"failures\": ");
      sb_long(&b, sum.drawn[k]);
      sb_str(&b, ", \"missed\": ");
      sb_long(&b, sum.missed[k]);
      sb_str(&b, ", \"first_miss\": ");
      sb_json(&b, sum.missed[k] ? sum.missExample[k] : NULL);
      sb_str(&b, "}");
    }
    sb_str(&b, "\n  }");
  } else {
    sb_str(&b, "null");
  }
  sb_key(&b, "elapsed_seconds");
  sb_fixed(&b, (double)(now_ns(CLOCK_MONOTONIC) - runStartNs) / 1e9, 1);
  sb_key(&b, "cpu_seconds");
  sb_fixed(&b, (double)now_ns(CLOCK_PROCESS_CPUTIME_ID) / 1e9, 1);
  sb_key(&b, "slowest_case");
  if (sum.slowestNs > 0) {
    sb_str(&b, "{\"seconds\": ");
    sb_fixed(&b, (double)sum.slowestNs / 1e9, 3);
    sb_str(&b, ", \"case\": ");
    sb_json(&b, sum.slowest);
    sb_str(&b, "}");
  } else {
    sb_str(&b, "null");
  }
  sb_count(&b, "exit_status", status, 1);
  sb_key(&b, "result");
  sb_json(&b, status >= 0 && status <= 4 ? results[status] : "error");
  sb_key(&b, "first_failure");
  if (sum.haveFailure) {
    sb_str(&b, "{\n    \"case\": ");
    sb_json(&b, sum.failureCase);
    sb_str(&b, ",\n    \"replay\": ");
    sb_replay_json(&b, sum.failureCase, sum.failureKind);
    sb_str(&b, ",\n    \"difference\": ");
    sb_json(&b, sum.failureDiff);
    sb_str(&b, ",\n    \"smallest\": ");
    sb_json(&b, sum.haveSmallest ? sum.smallest : NULL);
    sb_str(&b, ",\n    \"smallest_replay\": ");
    if (sum.haveSmallest) sb_replay_json(&b, sum.smallest, sum.smallestKind);
    else sb_str(&b, "null");
    sb_str(&b, ",\n    \"smallest_difference\": ");
    sb_json(&b, sum.haveSmallest ? sum.smallestDiff : NULL);
    sb_str(&b, "\n  }");
  } else {
    sb_str(&b, "null");
  }
  sb_key(&b, "stopped");
  if (stopInfo.reason) {
    const struct stop *s = &stopInfo;
    sb_str(&b, "{\n    \"reason\": ");
    sb_json(&b, s->reason);
    sb_str(&b, ",\n    \"limit\": ");
    sb_json(&b, s->limit);
    sb_str(&b, ",\n    \"limit_seconds\": ");
    if (s->limit) sb_long(&b, s->limitSec);
    else sb_str(&b, "null");
    sb_str(&b, ",\n    \"signal\": ");
    if (s->sig) sb_long(&b, s->sig);
    else sb_str(&b, "null");
    sb_str(&b, ",\n    \"library\": ");
    sb_json(&b, s->lib >= 0 && s->lib < 2 ? libs[s->lib].role : NULL);
    sb_str(&b, ",\n    \"call\": ");
    sb_json(&b, s->call);
    sb_str(&b, ",\n    \"ran_seconds\": ");
    sb_fixed(&b, (double)s->ranNs / 1e9, 3);
    sb_str(&b, ",\n    \"case_seconds\": "); /* ran_seconds, as earlier readers know it */
    sb_fixed(&b, (double)s->ranNs / 1e9, 1);
    sb_str(&b, ",\n    \"cpu_seconds\": ");
    sb_fixed(&b, (double)(s->cpuNs > 0 ? s->cpuNs : 0) / 1e9, 3);
    sb_str(&b, ",\n    \"blocked_seconds\": ");
    if (s->limit) sb_fixed(&b, (double)s->blockedNs / 1e9, 3);
    else sb_str(&b, "null");
    sb_str(&b, ",\n    \"case\": ");
    sb_json(&b, s->kind >= 0 ? s->text : NULL);
    sb_str(&b, ",\n    \"replay\": ");
    if (s->kind >= 0) sb_replay_json(&b, s->text, s->kind);
    else sb_str(&b, "null");
    sb_str(&b, ",\n    \"threads\": ");
    if (s->limit && s->allThreads >= 0) {
      sb_str(&b, "[");
      for (int i = 0; i < s->nThreads; i++) {
        const struct thread_info *t = &s->threads[i];
        static const char *const roles[] = {"other", "main", "watchdog"};
        char state[2] = {t->state, '\0'};
        sb_str(&b, i ? ",\n      {\"tid\": " : "\n      {\"tid\": ");
        sb_long(&b, t->tid);
        sb_str(&b, ", \"name\": ");
        sb_json(&b, t->name);
        sb_str(&b, ", \"state\": ");
        sb_json(&b, state);
        sb_str(&b, ", \"wchan\": ");
        sb_json(&b, t->wchan[0] ? t->wchan : NULL);
        sb_str(&b, ", \"syscall\": ");
        /* a number when it is in one; null when running, in none (-1) or unreadable */
        int number = t->syscall[0] != '\0';
        for (const char *c = t->syscall; *c; c++) number &= *c >= '0' && *c <= '9';
        sb_str(&b, number ? t->syscall : "null");
        sb_str(&b, ", \"role\": ");
        sb_json(&b, roles[t->role]);
        sb_str(&b, "}");
      }
      sb_str(&b, s->nThreads ? "\n    ]" : "]");
    } else {
      sb_str(&b, "null");
    }
    sb_str(&b, "\n  }");
  } else {
    sb_str(&b, "null");
  }
  sb_key(&b, "error");
  sb_json(&b, sum.error[0] ? sum.error : NULL);
  sb_str(&b, "\n}\n");
  if (lseek(jsonFd, 0, SEEK_SET) == 0 && ftruncate(jsonFd, 0) == 0) write_all(jsonFd, b.p, b.n);
}
