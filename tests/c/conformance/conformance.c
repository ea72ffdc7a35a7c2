/*
 * conformance - the ABI conformance harness: runs the same clusters through a
 * candidate and a reference library that export libnccom's four ring-stage
 * functions, and compares every output byte, return code and WARN line.
 *
 *   conformance [--candidate LIB] [--reference LIB] [--seed S] [--count N]
 *               [--case 'SPEC'] [--real] [RUN FLAGS]
 *   conformance --cross-rank [--candidate LIB] [--reference LIB] [--seed S]
 *               [--count N] [--case 'XSPEC'] [RUN FLAGS]
 *   RUN FLAGS: [--cpu-limit SECONDS] [--blocked-limit SECONDS] [--timeout SECONDS]
 *              [--no-limits] [--progress SECONDS] [--json FILE] [--junit FILE]
 *              [--pod-order VALUE] [--keep-going]
 *
 * Defaults: candidate libnccomring.so beside this program (build/), reference
 * $LIBNCCOM or libnccomref.so beside it, a time-based seed (printed, so a failure replays),
 * 20000 random clusters after the cases of regressions.inc. Both libraries
 * are dlopen'ed by path with RTLD_LOCAL and their symbols found with dlsym
 * (the C name, else the C++-mangled name a C++ build would export).
 *
 * Compared per cluster: every rank's Preset (return code, WARN, the
 * canary-filled 960-byte fragment, the whole canary-filled communicator);
 * Postset on every rank of small clusters and on sampled ranks of large ones
 * (return code, WARN, the communicator with channels[0..32) prev/next and
 * userRanks contents, nodesFirstRank, the nChannels/nNodes out-parameters,
 * kangaRing); GetNetDev for every channel and some bad ones; BuildRings on
 * the resulting rings, sometimes corrupted. Faults are injected into the
 * inputs (spec.h). A third of the random clusters number their ranks across
 * nodes (round-robin or a random permutation, spec.numbering; issue 9), so
 * node order by first appearance (D8) differs from the nodes' order. On the first difference the case is shrunk and printed
 * as a struct spec initializer to paste into regressions.inc.
 *
 * --real relaxes what only this project's reference model can match: WARN
 * texts are compared only for the spec's two exact BuildRings strings, and
 * only fault-free, generic-platform clusters with a graph are run. Use it
 * against a real libnccom.so.2 (docs/checking.md, "The conformance suite": "Against a real libnccom").
 *
 * --cross-rank (issue 8; D23, D24; docs/errors.md, ncclTopoPostset "One
 * verdict"): every case is one valid cluster (1-8 nodes of 1-8 ranks, one
 * in ten with unequal nodes, a third numbered across nodes rather than
 * node-major (xspec.numbering), random channel orders), Preset on every rank straight into its
 * slot of the gathered buffer (pre-filled with 0x00, 0xA5 or 0xFF), exactly
 * one corruption of that buffer (a ring field of one rank and channel set
 * in range, to -1 or out of range; one fragment in two slots; two slots
 * swapped; a record damaged, misplaced, stale, of another version or
 * without the magic; a channel count not the record's; spec.h, struct
 * xspec) or, D28, one rank's or node's own state at its Preset (the
 * platform by hook, or by NCCOM_RING_PLATFORM in a process of its own,
 * conformance-preset-env; enablePod; nKangaRingChannels; the graph's
 * NICs), then Postset on every rank with its own communicator, at
 * NCCL_DEBUG=INFO. Asserted per library: one verdict (the
 * same code and the same log on every rank apart from the [rank] prefix and
 * rank 0's Channel lines; on success the same channel count, nodes and
 * rings, each rank's userRanks the same cycle started at itself, prev/next
 * its neighbours in it). Asserted between the libraries: the same outcome
 * on every rank (code, every log line, the communicator, nodesFirstRank).
 * Measured: how often a failure's WARN ("ncclTopoPostset: rank S, ...")
 * names the corrupted rank (either slot of a swap; for D28's kinds of a
 * rank's own state the odd one out); below 99% fails. Asserted for the
 * record kinds and D28's: the verdict each must reach (x_expect_random). The
 * named cases (issue 8's six inputs and D23's lowered count) and the pasted
 * cases of crossrank.inc run first; --count random clusters (default 5000)
 * follow; --case replays one XSPEC as printed. A split verdict or a
 * difference is printed with its case, shrunk, and a replay command.
 *
 * Run limits (issue 32: a limit detects a hang; it never times the
 * machine). A case (one cluster, one cross-rank job, one shrinking
 * attempt, the NULL-argument calls, or the loading of a library) ends the
 * run when one of three limits fires:
 *   --cpu-limit SECONDS (default 60): the case's threads used that much
 *     CPU (a spin; the slowest case here uses 0.2 s);
 *   --blocked-limit SECONDS (default 10): for that long no thread of the
 *     process (but the watchdog) ran or waited to run (a deadlock, a
 *     sleep), read from /proc/self/task/TID/schedstat;
 *   --timeout SECONDS (default 600): the wall-clock cap, the last resort.
 * A case starved of CPU on a busy machine waits to run, so it is neither
 * blocked nor spinning, and only the wall-clock cap can end it. 0 turns
 * one limit off; --no-limits turns all three off (under a debugger),
 * later flags turn one back on. A watchdog thread then prints which limit
 * fired, the case's wall time and CPU, the case (formatted before the
 * case's first call), the call and library it is stuck in, the command
 * that replays it and where each thread waits (state, wchan, syscall),
 * writes the --json summary and exits 4.
 *
 * --progress SECONDS (default 10 when stderr is a terminal, else 0 = off):
 * a line on stderr every SECONDS (cases done, of how many, differences so
 * far, elapsed, an estimate of what is left).
 * --keep-going (make conformance-count, issue 35): every case runs, none is
 * shrunk; each differing case prints one line, "conformance: differs
 * [KIND]: REPLAY COMMAND", and the run ends with how many differ by kind.
 *
 * --json FILE: a summary written on every exit once the flag is parsed
 * (seed, counts, differences, cross-rank's named-rank rate and misses by
 * kind, the slowest case, time, exit status, the first failing case and
 * its smallest form, what stopped a crashed or timed-out run); the fields
 * are listed in docs/checking.md ("The conformance suite").
 *
 * Exit status: 0 no difference, 1 a difference (cross-rank: a split
 * verdict, a difference, a named case's expectation or the naming rate),
 * 2 usage or load error, 3 a library crashed (the case is printed),
 * 4 a run limit ended a case (the case is printed).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../common/cluster.h"
#include "spec.h"

/* ------------------------------------------------------------------ */
/* Libraries                                                           */

struct lib {
  const char *role, *path;
  void *handle;
  struct ring_api api;
  int mangled; /* symbols found by their C++ names */
};

static struct lib libs[2] = {{.role = "candidate"}, {.role = "reference"}};

/* ------------------------------------------------------------------ */
/* Run limits and reports: the per-case limits, progress, --json.      */
/*                                                                     */
/* Every case (a cluster, a cross-rank job, a shrinking attempt, the   */
/* NULL-argument calls, the loading of a library) is bracketed by      */
/* case_begin/case_end. case_begin publishes the case's text, formatted */
/* before its first library call, its start time and the CPU the       */
/* process had used, under a sequence counter (odd while they are      */
/* rewritten). A watchdog thread reads them ten times a second and     */
/* ends the run when the case hangs, judged by three signals (issue    */
/* 32; the wall clock alone would time the machine, and a 2-core CI    */
/* runner once took 65 s to give a 0.0 s case its CPU):                */
/*   cpu:     the process's CPU, less the watchdog's, since the case   */
/*            began passed --cpu-limit (a spin);                       */
/*   blocked: for --blocked-limit seconds, the threads other than the  */
/*            watchdog were neither on a CPU nor waiting for one: the  */
/*            sum of both times in their schedstat grew by less than a */
/*            tenth of the wall time, and none was runnable, in an     */
/*            uninterruptible wait or stopped (a deadlock, a sleep). A */
/*            starved case waits on a runqueue, which schedstat        */
/*            counts, so it is not blocked;                            */
/*   wall:    the case ran past --timeout, the last resort.            */
/* It then prints which fired, the case, the call and library it is in */
/* (call_begin records them), the replay command and where each thread */
/* waits, writes the --json summary and ends the process with status   */
/* 4. Why a thread: the candidate is usually a Go c-shared library,    */
/* which refuses to run in a child of fork(), so a case cannot be      */
/* isolated in a child process; and a thread needs no signal, so it    */
/* works while the stuck call blocks signals (the Go library blocks    */
/* the asynchronous ones while it runs) or spins. The watchdog and the */
/* crash handler use only what is async-signal-safe (the appenders     */
/* below, open/read/close, getdents64 through syscall(), clock_gettime, */
/* write, lseek, ftruncate, _exit; no stdio, no malloc, no opendir,    */
/* which mallocs): the main thread may be stuck holding any lock, or   */
/* be the one the signal interrupted.                                  */

static int realMode;      /* --real */
static int crossRankMode; /* --cross-rank */
static const char *podOrder; /* --pod-order: NCCOM_RING_POD_ORDER for the whole run (read once per process) */
static int podOrderNode;     /* it is "node" (ignoring case) */

/* " --pod-order 'VALUE'" for the replay lines, or "". */
static const char *podOrderFlag(void) {
  static char buf[256];
  if (podOrder == NULL) return "";
  snprintf(buf, sizeof buf, " --pod-order '%.200s'", podOrder);
  return buf;
}
/* The run limits, in seconds; 0 turns one off. The wall-clock cap is
 * far above anything a case takes on a loaded machine (the slowest here
 * takes 0.2 s of CPU): it only ends what the other two cannot see. */
enum { DEFAULT_CPU_LIMIT = 60, DEFAULT_BLOCKED_LIMIT = 10, DEFAULT_TIMEOUT = 600 };
static long cpuLimitSec = DEFAULT_CPU_LIMIT;         /* --cpu-limit */
static long blockedLimitSec = DEFAULT_BLOCKED_LIMIT; /* --blocked-limit */
static long timeoutSec = DEFAULT_TIMEOUT;            /* --timeout: the wall-clock cap */
static long progressSec = -1;             /* --progress; -1: 10 s when stderr is a terminal, else off */
static const char *jsonPath;              /* --json */
static int jsonFd = -1;                   /* opened (and truncated) before anything runs */
static const char *junitPath;             /* --junit: the same run as JUnit XML, for CI */
static int junitFd = -1;                  /* opened like jsonFd */
static const char *progName = "conformance";
static long long runStartNs, randomStartNs, nextProgressNs;

static long long now_ns(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* What the run has done so far: the final report, the progress lines
 * and the --json summary (which the watchdog and the crash handler also
 * write, while the main thread is stopped) all read it. */
enum { CASE_TEXT = 1024 };
static struct summary {
  unsigned long long seed;
  long count;          /* random cases asked for */
  const char *oneCase; /* --case */
  const char *phase;   /* what the run is doing, for progress lines */
  long cases, random, numbered, differences, shrinkTries;
  /* D25, D27 (default mode): cases that set the variables or per-rank answers, and the texts their calls
   * printed (tallied by tally_text) */
  long envCases, envTexts[8];
  /* cross-rank */
  long splits, namedRun, namedFailed, failed, named, internal, fewer, numberedFailed, numberedNamed;
  long missed[X_COUNT], drawn[X_COUNT];
  long policyJobs, recordJobs, recordRead, recordOk; /* D25, D27 */
  char recordMiss[2048];
  char missExample[X_COUNT][2048];
  /* the first failing case, as found and as shrunk; kind: enum case_kind */
  int haveFailure, failureKind, haveSmallest, smallestKind;
  char failureCase[CASE_TEXT], failureDiff[4096], smallest[CASE_TEXT], smallestDiff[4096];
  long long slowestNs;
  char slowest[CASE_TEXT];
  char error[1024]; /* exit 2: what went wrong */
} sum = {.phase = "starting"};

/* How a case replays: not at all (loading: run with --count 0), with
 * --count 0 (the fixed cases that run first), or with --case 'TEXT'. */
enum case_kind { CASE_LOAD, CASE_FIXED, CASE_SPEC };

static unsigned long caseSeq;  /* odd while the case record is rewritten */
static long long caseStartNs;  /* 0: no case running */
static char caseText[CASE_TEXT];
static int caseKind;
static const char *currentCall = "setup"; /* the library call in progress */
static int currentLib = -1;               /* whose: 0 candidate, 1 reference, -1 none */
static long long caseCpuStartNs;          /* the CPU of every thread but the watchdog at case_begin */

/* The watchdog's thread id and the CPU it has used, which it publishes
 * every tick: the CPU of a case is the process's less the watchdog's, so
 * that reading /proc for the blocked signal is not counted as the case
 * spinning. mainTid runs the cases (the reports name it). */
static long watchdogTid, mainTid;
static long long watchdogCpuNs;

/* CPU used by every thread of the process but the watchdog. The
 * watchdog's share is at most a tick old: microseconds. */
static long long others_cpu_ns(void) {
  return now_ns(CLOCK_PROCESS_CPUTIME_ID) - __atomic_load_n(&watchdogCpuNs, __ATOMIC_RELAXED);
}

static void case_begin(const char *text, enum case_kind kind) {
  __atomic_add_fetch(&caseSeq, 1, __ATOMIC_SEQ_CST);
  size_t n = strlen(text); /* every caller's text is a terminated string */
  if (n > CASE_TEXT - 1) n = CASE_TEXT - 1;
  memcpy(caseText, text, n);
  caseText[n] = '\0';
  caseKind = kind;
  __atomic_store_n(&caseCpuStartNs, others_cpu_ns(), __ATOMIC_SEQ_CST);
  __atomic_store_n(&caseStartNs, now_ns(CLOCK_MONOTONIC), __ATOMIC_SEQ_CST);
  __atomic_add_fetch(&caseSeq, 1, __ATOMIC_SEQ_CST);
}

static void case_end(void) {
  long long took = now_ns(CLOCK_MONOTONIC) - caseStartNs;
  if (caseKind != CASE_LOAD && took > sum.slowestNs) {
    sum.slowestNs = took;
    memcpy(sum.slowest, caseText, sizeof sum.slowest);
  }
  __atomic_add_fetch(&caseSeq, 1, __ATOMIC_SEQ_CST);
  __atomic_store_n(&caseStartNs, 0, __ATOMIC_SEQ_CST);
  __atomic_add_fetch(&caseSeq, 1, __ATOMIC_SEQ_CST);
}

/* Every library call is bracketed by these (call_begin/call_end below). */
static void set_call(const char *call, int lib) {
  __atomic_store_n(&currentCall, call, __ATOMIC_RELAXED);
  __atomic_store_n(&currentLib, lib, __ATOMIC_RELAXED);
}

/* ---- async-signal-safe text: a bounded buffer and appenders ---- */

struct sbuf {
  char *p;
  size_t cap, n; /* cap > 0; p[n] is always '\0'; what does not fit is dropped */
};

static void sb_raw(struct sbuf *b, const char *s, size_t len) {
  for (size_t i = 0; i < len && b->n + 1 < b->cap; i++) b->p[b->n++] = s[i];
  b->p[b->n] = '\0';
}
static void sb_str(struct sbuf *b, const char *s) { sb_raw(b, s, strlen(s)); }
static void sb_long(struct sbuf *b, long long v) {
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
static void sb_fixed(struct sbuf *b, double v, int decimals) {
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

static void write_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    p += w;
    n -= (size_t)w;
  }
}

/* The command that replays a case. */
static void sb_replay(struct sbuf *b, const char *text, int kind) {
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

/* What stopped the run (exit 3 or 4): filled by the watchdog or the crash
 * handler, reported by report_stop and the --json summary. */
enum { STOP_THREADS = 64 }; /* threads described; the report says how many more there were */
enum thread_role { ROLE_OTHER, ROLE_MAIN, ROLE_WATCHDOG };
struct thread_info {
  long tid;
  int role;         /* enum thread_role */
  char state;       /* stat's letter: R running or runnable, S sleeping, D uninterruptible, ...; '?' unreadable */
  char name[32];    /* comm */
  char wchan[64];   /* the kernel function it waits in; "" running or unreadable */
  char syscall[24]; /* the first field of its syscall file: a number, -1 (in none) or "running"; "" unreadable */
};
static struct stop {
  const char *reason; /* "timeout" or "signal"; NULL: nothing stopped the run */
  const char *limit;  /* timeout: the limit that fired, "cpu", "blocked" or "wall" */
  long limitSec;      /* its value */
  int sig, lib, kind; /* kind: enum case_kind; -1 when no case was running */
  const char *call;
  long long ranNs;     /* how long the case had run (wall clock) */
  long long cpuNs;     /* the CPU its threads had used (not the watchdog's) */
  long long blockedNs; /* for how long, at the end, no thread had run or waited to run */
  int nThreads;        /* timeout: threads described in threads[] */
  int allThreads;      /* how many the process had; -1: /proc/self/task unreadable */
  struct thread_info threads[STOP_THREADS];
  char text[CASE_TEXT];
} stopInfo;

static void write_json(int status); /* below, after the cross-rank mode */

/* "the case ran W s with C s of CPU, " and how the limit fired: the
 * first line of a timeout and its JUnit message. */
static void sb_limit(struct sbuf *b, const struct stop *s) {
  sb_str(b, "the case ran ");
  sb_fixed(b, (double)s->ranNs / 1e9, 1);
  sb_str(b, " s with ");
  sb_fixed(b, (double)(s->cpuNs > 0 ? s->cpuNs : 0) / 1e9, 1);
  sb_str(b, " s of CPU, ");
  if (strcmp(s->limit, "cpu") == 0) {
    sb_str(b, "past --cpu-limit ");
    sb_long(b, s->limitSec);
  } else if (strcmp(s->limit, "blocked") == 0) {
    sb_str(b, "no thread running or waiting to run for ");
    sb_fixed(b, (double)s->blockedNs / 1e9, 1);
    sb_str(b, " s (--blocked-limit ");
    sb_long(b, s->limitSec);
    sb_str(b, ")");
  } else {
    sb_str(b, "past --timeout ");
    sb_long(b, s->limitSec);
    sb_str(b, " (the wall-clock cap)");
  }
}

/* "CALL of the ROLE library (PATH)", or the harness's last call. */
static void sb_where(struct sbuf *b, const struct stop *s) {
  if (s->lib >= 0 && s->lib < 2) {
    sb_str(b, s->call);
    sb_str(b, " of the ");
    sb_str(b, libs[s->lib].role);
    sb_str(b, " library (");
    sb_str(b, libs[s->lib].path);
    sb_str(b, ")");
  } else {
    sb_str(b, "the harness, outside the libraries (last call: ");
    sb_str(b, s->call);
    sb_str(b, ")");
  }
}

/* One line per thread, each started with prefix: where it waits. */
static void sb_threads(struct sbuf *b, const struct stop *s, const char *prefix) {
  sb_str(b, prefix);
  if (s->allThreads < 0) {
    sb_str(b, "where each thread is: /proc/self/task cannot be read\n");
    return;
  }
  sb_str(b, "where each thread is (tid, name, state, wchan, syscall):\n");
  for (int i = 0; i < s->nThreads; i++) {
    const struct thread_info *t = &s->threads[i];
    sb_str(b, prefix);
    sb_str(b, "  thread ");
    sb_long(b, t->tid);
    sb_str(b, " ");
    sb_str(b, t->name[0] ? t->name : "?");
    sb_str(b, " ");
    sb_raw(b, &t->state, 1);
    sb_str(b, " wchan ");
    sb_str(b, t->wchan[0] ? t->wchan : "-");
    sb_str(b, " syscall ");
    sb_str(b, t->syscall[0] ? t->syscall : "-");
    sb_str(b, t->role == ROLE_MAIN ? " (the main thread: it runs the case)"
              : t->role == ROLE_WATCHDOG ? " (the watchdog)" : "");
    sb_str(b, "\n");
  }
  if (s->allThreads > s->nThreads) {
    sb_str(b, prefix);
    sb_str(b, "  and ");
    sb_long(b, s->allThreads - s->nThreads);
    sb_str(b, " more threads\n");
  }
}

/* Prints what stopped the run, writes the --json summary, exits. Only one
 * thread gets through; another that tries waits to be ended with it. */
/* The WARN capture file (below), removed on every way out. */
static void remove_warn_file(void);

static _Noreturn void report_stop(int status) {
  static int stopping;
  static char buf[1 << 15];
  if (__atomic_exchange_n(&stopping, 1, __ATOMIC_SEQ_CST))
    for (;;) pause();
  struct stop *s = &stopInfo;
  struct sbuf b = {buf, sizeof buf, 0};
  if (status == 4) {
    /* grep-able: "TIMEOUT (LIMIT): ... in CALL of the ROLE library" */
    sb_str(&b, "\nconformance: TIMEOUT (");
    sb_str(&b, s->limit);
    sb_str(&b, "): ");
    sb_limit(&b, s);
    sb_str(&b, ", in ");
  } else {
    sb_str(&b, "\nconformance: signal ");
    sb_long(&b, s->sig);
    sb_str(&b, " in ");
  }
  sb_where(&b, s);
  if (s->kind < 0) {
    sb_str(&b, ", between cases\n");
  } else {
    sb_str(&b, "; case:\n");
    sb_str(&b, s->text);
    sb_str(&b, s->kind == CASE_SPEC ? ",\n" : "\n");
    sb_str(&b, "conformance: replay with: ");
    sb_replay(&b, s->text, s->kind);
    sb_str(&b, "\n");
  }
  if (status == 4) {
    sb_threads(&b, s, "conformance: ");
    sb_str(&b, "conformance: exit 4 (timeout: the ");
    sb_str(&b, s->limit);
    sb_str(&b, " limit)\n");
  }
  write_all(2, b.p, b.n);
  write_json(status);
  remove_warn_file(); /* unlink: async-signal-safe */
  _exit(status);
}

/* Snapshot of the running case into stopInfo; 0 when it changed meanwhile. */
static int snapshot_case(unsigned long seq) {
  stopInfo.lib = __atomic_load_n(&currentLib, __ATOMIC_RELAXED);
  stopInfo.call = __atomic_load_n(&currentCall, __ATOMIC_RELAXED);
  memcpy(stopInfo.text, caseText, sizeof stopInfo.text);
  stopInfo.text[CASE_TEXT - 1] = '\0';
  stopInfo.kind = caseKind;
  return __atomic_load_n(&caseSeq, __ATOMIC_SEQ_CST) == seq;
}

/* ---- the process's threads, read from /proc by the watchdog ---- */
/* No malloc, no stdio, no opendir (which mallocs): open/read/close and  */
/* getdents64 into buffers on the stack or static ones of the watchdog's. */

/* Reads the small file path into buf (at most size - 1 bytes, then a
 * '\0'). Returns its length, or -1 when it cannot be opened or read. */
static long read_small(const char *path, char *buf, size_t size) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  size_t n = 0;
  int failed = 0;
  while (n + 1 < size) {
    ssize_t got = read(fd, buf + n, size - 1 - n);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) failed = 1;
    if (got <= 0) break;
    n += (size_t)got;
  }
  close(fd);
  buf[n] = '\0';
  return failed && n == 0 ? -1 : (long)n;
}

/* "/proc/self/task/TID/FILE" into out. */
static void task_file(char *out, size_t size, long tid, const char *file) {
  struct sbuf b = {out, size, 0};
  sb_str(&b, "/proc/self/task/");
  sb_long(&b, tid);
  sb_str(&b, "/");
  sb_str(&b, file);
}

/* A record of the getdents64 system call. glibc declares a wrapper only
 * from 2.30 on (the library's floor is 2.17), so the call goes through
 * syscall() with this layout, the kernel's. */
struct dirent64_raw {
  uint64_t ino;
  int64_t off;
  unsigned short reclen;
  unsigned char type;
  char name[];
};

enum { MAX_TASKS = 1024 }; /* threads the blocked signal follows; more: it cannot tell */
static long watchTids[MAX_TASKS]; /* the watchdog's alone */

/* The ids of the process's threads, the first max of them into tids.
 * Returns how many there are (more than max when some did not fit), or
 * -1 when /proc/self/task cannot be read. */
static int list_tasks(long *tids, int max) {
  int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buf[4096];
  int n = 0;
  long got;
  while ((got = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0) {
    for (long at = 0; at + (long)sizeof(struct dirent64_raw) <= got;) {
      struct dirent64_raw d;
      memcpy(&d, buf + at, sizeof d); /* the records need not be aligned for the struct */
      const char *name = buf + at + offsetof(struct dirent64_raw, name);
      long tid = 0;
      int digits = 0;
      for (; digits < 12 && name[digits] >= '0' && name[digits] <= '9'; digits++)
        tid = tid * 10 + (name[digits] - '0');
      if (digits > 0 && name[digits] == '\0') { /* not "." or ".." */
        if (n < max) tids[n] = tid;
        n++;
      }
      if (d.reclen == 0) break;
      at += d.reclen;
    }
  }
  close(fd);
  return got < 0 && n == 0 ? -1 : n;
}

/* The state letter of thread tid: stat's third field, after the name in
 * parentheses (which may itself hold ')' or spaces); '?' unreadable. */
static char task_state(long tid) {
  char path[64], buf[1024];
  task_file(path, sizeof path, tid, "stat");
  if (read_small(path, buf, sizeof buf) <= 0) return '?';
  const char *paren = strrchr(buf, ')');
  return paren && paren[1] == ' ' && paren[2] ? paren[2] : '?';
}

/* A thread's time on a CPU plus its time waiting on a runqueue for one
 * (schedstat's first two fields, ns). */
struct task_time {
  long tid;
  long long ns;
};

/* The times of every thread but the watchdog into out (MAX_TASKS at
 * most). Returns how many, or -1 when /proc cannot tell (unreadable, an
 * unexpected line, more threads than fit). A thread that ended between
 * the listing and the read is left out. */
static int sample_tasks(struct task_time *out) {
  int n = list_tasks(watchTids, MAX_TASKS), k = 0;
  if (n < 0 || n > MAX_TASKS) return -1;
  for (int i = 0; i < n; i++) {
    if (watchTids[i] == watchdogTid) continue;
    char path[64], buf[128];
    task_file(path, sizeof path, watchTids[i], "schedstat");
    if (read_small(path, buf, sizeof buf) <= 0) continue;
    const char *p = buf;
    long long v[2] = {0, 0};
    for (int f = 0; f < 2; f++) {
      while (*p == ' ') p++;
      if (*p < '0' || *p > '9') return -1;
      for (; *p >= '0' && *p <= '9'; p++) v[f] = v[f] * 10 + (*p - '0');
    }
    out[k].tid = watchTids[i];
    out[k++].ns = v[0] + v[1];
  }
  return k;
}

/* How much the threads of cur ran or waited to run since prev. A thread
 * new since then counts whole: starting a thread is a sign of life. Both
 * samples list the threads in the directory's order, so each search
 * resumes where the last one matched. */
static long long task_growth(const struct task_time *prev, int np, const struct task_time *cur, int nc) {
  long long grown = 0;
  int j = 0;
  for (int i = 0; i < nc; i++) {
    int k = 0;
    while (k < np && prev[(j + k) % np].tid != cur[i].tid) k++;
    if (k == np) {
      grown += cur[i].ns;
      continue;
    }
    j = (j + k) % np;
    if (cur[i].ns > prev[j].ns) grown += cur[i].ns - prev[j].ns;
    j = (j + 1) % np;
  }
  return grown;
}

/* Whether a thread but the watchdog is running or waiting to run (R),
 * in an uninterruptible wait (D: the disk or memory, the machine's
 * speed, not a hang) or stopped (T, t: job control, a debugger): then
 * the process is not blocked. schedstat counts a wait on the runqueue
 * only once it ends, so a thread starved right now shows here first.
 * When /proc cannot tell, the answer is yes: not blocked. */
static int some_task_awake(void) {
  int n = list_tasks(watchTids, MAX_TASKS);
  if (n < 0 || n > MAX_TASKS) return 1;
  for (int i = 0; i < n; i++) {
    if (watchTids[i] == watchdogTid) continue;
    char st = task_state(watchTids[i]);
    if (st == 'R' || st == 'D' || st == 'T' || st == 't') return 1;
  }
  return 0;
}

/* Where each thread is, into s: its name, state, the kernel function it
 * waits in (wchan) and the system call it is in. */
static void snapshot_threads(struct stop *s) {
  int n = list_tasks(watchTids, MAX_TASKS);
  s->allThreads = n;
  s->nThreads = 0;
  for (int i = 0; i < n && i < MAX_TASKS && s->nThreads < STOP_THREADS; i++) {
    struct thread_info *t = &s->threads[s->nThreads++];
    long tid = watchTids[i];
    char path[64], line[256];
    t->tid = tid;
    t->role = tid == mainTid ? ROLE_MAIN : tid == watchdogTid ? ROLE_WATCHDOG : ROLE_OTHER;
    task_file(path, sizeof path, tid, "comm");
    if (read_small(path, t->name, sizeof t->name) < 0) t->name[0] = '\0';
    t->name[strcspn(t->name, "\n")] = '\0';
    t->state = task_state(tid);
    t->wchan[0] = t->syscall[0] = '\0';
    if (t->role == ROLE_WATCHDOG) continue; /* it is running: this code */
    task_file(path, sizeof path, tid, "wchan");
    if (read_small(path, t->wchan, sizeof t->wchan) < 0 || strcmp(t->wchan, "0") == 0) t->wchan[0] = '\0';
    task_file(path, sizeof path, tid, "syscall");
    if (read_small(path, line, sizeof line) > 0) {
      size_t len = strcspn(line, " \n");
      if (len >= sizeof t->syscall) len = sizeof t->syscall - 1;
      memcpy(t->syscall, line, len);
      t->syscall[len] = '\0';
    }
  }
}

/* The watchdog's samples of the threads' times: the last one and this. */
static struct task_time taskTimes[2][MAX_TASKS];

static void *watchdog(void *arg) {
  (void)arg;
  __atomic_store_n(&watchdogTid, (long)syscall(SYS_gettid), __ATOMIC_SEQ_CST);
  const long long second = 1000000000LL;
  /* Ticks further apart than this mean the watchdog itself did not run
   * (the process was stopped, or the machine starved it too): such a gap
   * says nothing about the case's threads, and the blocked window
   * neither grows nor restarts over it. */
  const long long maxGap = second;
  const struct timespec tick = {0, 100 * 1000 * 1000};
  unsigned long watched = 1; /* the case the last sample is of; odd: none */
  long long lastNs = 0, blockedNs = 0;
  int last = 0, nLast = -1;
  for (;;) {
    nanosleep(&tick, NULL);
    __atomic_store_n(&watchdogCpuNs, now_ns(CLOCK_THREAD_CPUTIME_ID), __ATOMIC_RELAXED);
    unsigned long seq = __atomic_load_n(&caseSeq, __ATOMIC_SEQ_CST);
    long long start = __atomic_load_n(&caseStartNs, __ATOMIC_SEQ_CST);
    long long cpuStart = __atomic_load_n(&caseCpuStartNs, __ATOMIC_SEQ_CST);
    if ((seq & 1) || start == 0 || __atomic_load_n(&caseSeq, __ATOMIC_SEQ_CST) != seq) {
      watched = 1;
      continue;
    }
    long long now = now_ns(CLOCK_MONOTONIC), cpu = others_cpu_ns() - cpuStart;
    if (blockedLimitSec > 0) {
      int cur = 1 - last, n = sample_tasks(taskTimes[cur]);
      if (seq != watched || n < 0 || nLast < 0) {
        blockedNs = 0; /* a new case, or /proc could not tell: the window starts here */
      } else if (now - lastNs <= maxGap) {
        long long wall = now - lastNs, active = task_growth(taskTimes[last], nLast, taskTimes[cur], n);
        blockedNs = active * 10 < wall && !some_task_awake() ? blockedNs + wall : 0;
      }
      last = cur;
      nLast = n;
      lastNs = now;
    }
    watched = seq;
    const char *limit = NULL;
    long limitSec = 0;
    if (cpuLimitSec > 0 && cpu >= cpuLimitSec * second) limit = "cpu", limitSec = cpuLimitSec;
    else if (blockedLimitSec > 0 && blockedNs >= blockedLimitSec * second) limit = "blocked", limitSec = blockedLimitSec;
    else if (timeoutSec > 0 && now - start >= timeoutSec * second) limit = "wall", limitSec = timeoutSec;
    if (limit == NULL || !snapshot_case(seq)) continue;
    stopInfo.reason = "timeout";
    stopInfo.limit = limit;
    stopInfo.limitSec = limitSec;
    stopInfo.ranNs = now - start;
    stopInfo.cpuNs = cpu;
    stopInfo.blockedNs = blockedNs;
    snapshot_threads(&stopInfo);
    report_stop(4);
  }
  return NULL;
}

/* Starts the watchdog with every signal blocked in it: signals are for
 * the main thread (and the Go runtime's own threads). With every limit
 * off it does not start at all. */
static void start_watchdog(void) {
  mainTid = (long)syscall(SYS_gettid);
  if (cpuLimitSec <= 0 && blockedLimitSec <= 0 && timeoutSec <= 0) return;
  if (blockedLimitSec > 0) {
    /* Without schedstat (a kernel without CONFIG_SCHED_INFO, no /proc)
     * the blocked signal cannot be read: say so, and rely on the others. */
    char path[64], line[128];
    long tid;
    task_file(path, sizeof path, mainTid, "schedstat");
    if (list_tasks(&tid, 1) < 1 || read_small(path, line, sizeof line) <= 0 || line[0] < '0' || line[0] > '9') {
      fprintf(stderr, "conformance: cannot read %s: --blocked-limit is off (--cpu-limit and --timeout apply)\n", path);
      blockedLimitSec = 0;
    }
  }
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_t t;
  int err = pthread_create(&t, NULL, watchdog, NULL);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (err != 0) {
    fprintf(stderr, "conformance: cannot start the run limits' watchdog: %s\n", strerror(err));
    exit(2);
  }
  pthread_detach(t);
}

/* A library (or the harness) faulted: say which call of which case. */
static void on_crash(int sig) {
  unsigned long seq = __atomic_load_n(&caseSeq, __ATOMIC_SEQ_CST);
  long long start = __atomic_load_n(&caseStartNs, __ATOMIC_SEQ_CST);
  snapshot_case(seq);
  if (start == 0) stopInfo.kind = -1;
  stopInfo.reason = "signal";
  stopInfo.sig = sig;
  stopInfo.ranNs = start ? now_ns(CLOCK_MONOTONIC) - start : 0;
  stopInfo.cpuNs = start ? others_cpu_ns() - __atomic_load_n(&caseCpuStartNs, __ATOMIC_SEQ_CST) : 0;
  report_stop(3);
}

/* Exit 2 with a message, recorded for --json. */
__attribute__((format(printf, 1, 2))) static _Noreturn void fatal(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(sum.error, sizeof sum.error, fmt, ap);
  va_end(ap);
  fprintf(stderr, "%s", sum.error);
  sum.error[strcspn(sum.error, "\n")] = '\0'; /* the first line names it */
  if (caseStartNs) case_end(); /* exiting is not the case running long */
  write_json(2);
  exit(2);
}

static void *find_symbol(struct lib *l, const char *cname, const char *cxxname) {
  void *p = dlsym(l->handle, cname);
  if (p) return p;
  p = dlsym(l->handle, cxxname);
  if (p) {
    l->mangled = 1;
    return p;
  }
  fatal("conformance: the %s %s does not export %s (nor %s) to dlsym.\n"
        "  A libnccom built with -fvisibility=hidden or without extern \"C\" keeps it out of\n"
        "  .dynsym; check with: nm -D --defined-only %s | grep -i ncclTopo\n",
        l->role, l->path, cname, cxxname, l->path);
}

/* When the reference is the candidate's file, dlopen would hand back the
 * candidate's instance, and the two would share their state: D25's WARNs
 * come once per value read, per process and library. The reference then
 * loads from a private copy (removed once loaded). Returns the path to
 * load: l->path, or the copy in buf. */
static const char *private_copy(const struct lib *l, char *buf, size_t size) {
  struct stat a, b;
  if (l != &libs[1] || stat(libs[0].path, &a) != 0 || stat(l->path, &b) != 0 || a.st_dev != b.st_dev ||
      a.st_ino != b.st_ino)
    return l->path;
  snprintf(buf, size, "/tmp/conformance-reference-XXXXXX.so");
  int out = mkstemps(buf, 3), in = open(l->path, O_RDONLY | O_CLOEXEC);
  char chunk[1 << 16];
  ssize_t got = 0;
  while (in >= 0 && out >= 0 && (got = read(in, chunk, sizeof chunk)) > 0) write_all(out, chunk, (size_t)got);
  if (in >= 0) close(in);
  if (out >= 0) close(out);
  if (in < 0 || out < 0 || got < 0) {
    if (out >= 0) unlink(buf);
    return l->path;
  }
  return buf;
}

/* Loading is a case of its own for the run limits: a library whose
 * constructors (a Go runtime starting) never return ends the run too. */
static void load(struct lib *l) {
  char what[CASE_TEXT], copy[64];
  snprintf(what, sizeof what, "loading the %s library %.900s", l->role, l->path);
  sum.phase = "loading the libraries";
  case_begin(what, CASE_LOAD);
  const char *path = private_copy(l, copy, sizeof copy);
  set_call("dlopen", (int)(l - libs));
  l->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  set_call("setup", -1);
  if (path != l->path) unlink(path);
  if (l->handle == NULL) fatal("conformance: cannot load the %s %s: %s\n", l->role, l->path, dlerror());
  /* Function pointers from dlsym: POSIX guarantees the conversion. */
  void *p;
  p = find_symbol(l, "ncclTopoPreset", "_Z14ncclTopoPresetP8ncclCommP13ncclTopoGraphP13ncclTopoRanks");
  memcpy(&l->api.preset, &p, sizeof p);
  p = find_symbol(l, "ncclTopoPostset", "_Z15ncclTopoPostsetP8ncclCommPiPP13ncclTopoRanksS1_S1_");
  memcpy(&l->api.postset, &p, sizeof p);
  p = find_symbol(l, "ncclBuildRings", "_Z14ncclBuildRingsiPiiiS_S_");
  memcpy(&l->api.build_rings, &p, sizeof p);
  p = find_symbol(l, "ncclTopoGetNetDev", "_Z17ncclTopoGetNetDevP14ncclTopoSystemiP13ncclTopoGraphiPi");
  memcpy(&l->api.get_net_dev, &p, sizeof p);
  case_end();
}

/* ------------------------------------------------------------------ */
/* Host hooks both libraries find with dlsym (D14, D19): this program is */
/* linked with -rdynamic. Each case sets them.                         */

static bool hookSwitchV1;
static int hookVcore, hookJbogMode;
/* Per-rank answers (platform 4, named cases): the virtual-core hook has no
 * rank argument, so it answers for hookRank, the rank whose Preset runs. */
static const int *hookVcoreOf, *hookJbogOf;
static int hookRanks, hookRank;

bool neuronIsTrn3SwitchV1Family(void);
int nec_get_virtual_core_size(void);
int neuronTrnSwitchV1JbogId(int rank);
ncclResult_t ncclTopoGetLocalNet(struct ncclTopoSystem *sys, int rank, int *dev);

bool neuronIsTrn3SwitchV1Family(void) { return hookSwitchV1; }
int nec_get_virtual_core_size(void) {
  return hookVcoreOf && hookRank >= 0 && hookRank < hookRanks ? hookVcoreOf[hookRank] : hookVcore;
}
int neuronTrnSwitchV1JbogId(int rank) {
  if (hookJbogOf) return rank >= 0 && rank < hookRanks ? hookJbogOf[rank] : 1;
  return hookJbogMode ? rank % 5 : 1;
}
ncclResult_t ncclTopoGetLocalNet(struct ncclTopoSystem *sys, int rank, int *dev) {
  *dev = 500 + rank + (sys ? 1 : 0);
  return rank % 3 == 0 ? ncclSystemError : ncclSuccess;
}

/* ------------------------------------------------------------------ */
/* WARN capture: both libraries log to NCCL_DEBUG_FILE, a temporary      */
/* regular file of the harness's (the library refuses a FIFO or a link   */
/* there, docs/security.md). Both append to it, so after every call the  */
/* harness reads what the call wrote and empties the file: the next      */
/* call's lines start at offset 0 again and the file never grows.        */

static char warnPath[] = "/tmp/nccomring-conformance-XXXXXX";
static int warnFd = -1;

static void drain(char *out, size_t size) {
  size_t n = 0;
  off_t at = 0;
  for (;;) {
    char buf[4096];
    ssize_t got = pread(warnFd, buf, sizeof buf, at);
    if (got <= 0) break;
    at += got;
    for (ssize_t i = 0; i < got && n + 1 < size; i++) out[n++] = buf[i];
  }
  if (at > 0 && ftruncate(warnFd, 0) != 0) fatal("conformance: %s: ftruncate: %s\n", warnPath, strerror(errno));
  if (out) out[n < size ? n : size - 1] = '\0';
}

static void remove_warn_file(void) {
  if (warnFd >= 0) unlink(warnPath);
}

/* The comparable part of captured WARN lines: "[rank] NCCL WARN text" of
 * each line (host, pid and tid are the same process anyway). */
static void warn_text(const char *raw, char *out, size_t size) {
  size_t n = 0;
  out[0] = '\0';
  for (const char *line = raw; *line;) {
    const char *end = strchr(line, '\n');
    if (end == NULL) end = line + strlen(line);
    const char *br = memchr(line, '[', (size_t)(end - line));
    if (br) {
      int w = snprintf(out + n, size - n, "%.*s\n", (int)(end - br), br);
      if (w > 0 && (size_t)w < size - n) n += (size_t)w;
    }
    line = *end ? end + 1 : end;
  }
}

/* Only the spec's two exact strings (D16) are comparable with a real
 * libnccom. */
static int spec_string(const char *text) {
  return strstr(text, "does not loop back to start") || strstr(text, "does not contain rank");
}

/* The cross-rank job being run, for failure reports. */
static char xLabel[512];

/* ------------------------------------------------------------------ */
/* Deterministic randomness                                            */

static uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

struct rng {
  uint64_t s;
};

static uint64_t next_u64(struct rng *r) { return r->s = mix(r->s); }
static int below(struct rng *r, int n) { return n <= 1 ? 0 : (int)(next_u64(r) % (uint64_t)n); }

/* The seed of a case's rank permutation (CLUSTER_PERMUTED): from the
 * case's seed, apart from the stream that draws its sizes and orders. */
static unsigned long long numbering_seed(unsigned long long seed) { return mix(seed ^ 0x6e756d62ULL); }

static const char *numberingNames[CLUSTER_NUMBERINGS] = {"CLUSTER_NODE_MAJOR", "CLUSTER_ROUND_ROBIN",
                                                         "CLUSTER_PERMUTED"};

/* A spec's numbering value: a CLUSTER_* name or a number. Returns 1 when
 * text is a CLUSTER_ name (known: *v set; unknown: *v = -1). */
static int numbering_name(const char *text, long long *v) {
  if (strncmp(text, "CLUSTER_", 8) != 0) return 0;
  *v = -1;
  for (int i = 0; i < CLUSTER_NUMBERINGS; i++)
    if (strcmp(text, numberingNames[i]) == 0) *v = i;
  return 1;
}

/* A random numbering: a third of the clusters across nodes, half of those
 * round-robin, half permuted. */
static int random_numbering(struct rng *r) {
  return below(r, 3) == 0 ? CLUSTER_ROUND_ROBIN + below(r, 2) : CLUSTER_NODE_MAJOR;
}

/* ------------------------------------------------------------------ */
/* D25's variables and D27's answers, per rank                         */
/*                                                                     */
/* A case that sets them holds each rank's NCCOM_RING_NODE_ORDER and    */
/* NCCOM_RING_LOCATION (NULL: unset) and, on SwitchV1 with per-rank    */
/* answers, its virtual-core size and JBOG id. The harness is single-  */
/* threaded: set_rank_env sets the rank's variables (setenv, which     */
/* both libraries read with getenv) and hooks just before each of its  */
/* Presets in both libraries, and clear_rank_env unsets everything     */
/* after the case, so a case without them runs as it always did.       */

struct rank_env {
  int n;
  char **order, **location; /* [n] each rank's value, or NULL: unset */
  int *vcore, *jbog;        /* [n] SwitchV1 answers, or NULL: the case's hooks as set_platform set them */
};

static void rank_env_free(struct rank_env *e) {
  for (int r = 0; r < e->n; r++) {
    if (e->order) free(e->order[r]);
    if (e->location) free(e->location[r]);
  }
  free(e->order);
  free(e->location);
  free(e->vcore);
  free(e->jbog);
  memset(e, 0, sizeof *e);
}

static int rank_env_alloc(struct rank_env *e, int n) {
  memset(e, 0, sizeof *e);
  e->n = n;
  e->order = calloc((size_t)n, sizeof(char *));
  e->location = calloc((size_t)n, sizeof(char *));
  return e->order && e->location ? 0 : -1;
}

static void set_var(const char *name, const char *value) {
  if (value) setenv(name, value, 1);
  else unsetenv(name);
}

static void set_rank_env(const struct rank_env *e, int rank) {
  hookRank = rank;
  if (e == NULL || e->n == 0 || rank < 0 || rank >= e->n) {
    set_var("NCCOM_RING_NODE_ORDER", NULL);
    set_var("NCCOM_RING_LOCATION", NULL);
    return;
  }
  set_var("NCCOM_RING_NODE_ORDER", e->order[rank]);
  set_var("NCCOM_RING_LOCATION", e->location[rank]);
  hookVcoreOf = e->vcore;
  hookJbogOf = e->jbog;
  hookRanks = e->n;
}

static void clear_rank_env(void) {
  unsetenv("NCCOM_RING_NODE_ORDER");
  unsetenv("NCCOM_RING_LOCATION");
  hookVcoreOf = hookJbogOf = NULL;
  hookRanks = 0;
  hookRank = -1;
}

/* NCCOM_RING_LOCATION values that are no location (errors.md: 1 to 8 names
 * of 1 to 64 bytes of [A-Za-z0-9._:-] separated by '/'), printable ASCII
 * but for one tab. */
static const char *const badLocations[] = {
    "spine0//leafA", "spine0/", "/leafA", "leaf?A", "s/l/r/a/b/c/d/e/f", "spine0/leaf A", "tab\tbed",
    "spine0/xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "\"quoted\"", "back\\slash",
    /* 300 bytes: a WARN quotes the first 256 and gives the length (D28) */
    "spine0/leaf0123456789/leaf0123456789/leaf0123456789/leaf0123456789/leaf0123456789/leaf0123"
    "456789/leaf0123456789/leaf0123456789/leaf0123456789/leaf0123456789/leaf0123456789/leaf0123"
    "456789/leaf0123456789/leaf0123456789/leaf0123456789/leaf0123456789/leaf0123456789/leaf0123"
    "456789/leaf0123456789/leaf0123"};
/* NCCOM_RING_NODE_ORDER values that are neither rank nor network. */
static const char *const badOrders[] = {"netwrok", "ring", "networks", "rank,network", "1", "net work"};

/* One location per node from a small random tree: depth 1-3 (now and then
 * up to 8), 1-3 branches a level, the same names under different parents
 * (leaf1 under spine0 and under spine1 are different groups); now and
 * then a node's path is cut short (unequal depths). */
static int tree_locations(struct rng *r, int nodes, char **out) {
  static const char *const level[8] = {"spine", "leaf", "rack", "row", "pod", "hall", "sw", "tor"};
  int depth = below(r, 8) == 0 ? 1 + below(r, 8) : 1 + below(r, 3);
  int branch = 1 + below(r, 3);
  for (int m = 0; m < nodes; m++) {
    int d = below(r, 6) == 0 ? 1 + below(r, depth) : depth;
    char buf[256];
    int len = 0;
    for (int l = 0; l < d; l++)
      len += snprintf(buf + len, sizeof buf - (size_t)len, "%s%s%d", l ? "/" : "", level[l], below(r, branch));
    if ((out[m] = strdup(buf)) == NULL) return -1;
  }
  return 0;
}

/* Gives every rank its node's location (mode 1), some ranks none or an
 * invalid value (2), or another node's (3). nodeOf maps ranks to nodes. */
static int spread_locations(struct rng *r, int mode, int nodes, int n, const int *nodeOf, struct rank_env *e) {
  char **loc = calloc((size_t)nodes, sizeof(char *));
  if (loc == NULL || tree_locations(r, nodes, loc) != 0) {
    for (int m = 0; loc && m < nodes; m++) free(loc[m]);
    free(loc);
    return -1;
  }
  for (int k = 0; k < n; k++) {
    const char *v = loc[nodeOf[k]];
    if (mode == 2 && below(r, 4) == 0)
      v = below(r, 2) ? NULL : badLocations[below(r, (int)(sizeof badLocations / sizeof badLocations[0]))];
    else if (mode == 3 && below(r, 3) == 0)
      v = loc[below(r, nodes)];
    e->location[k] = v ? strdup(v) : NULL;
  }
  for (int m = 0; m < nodes; m++) free(loc[m]);
  free(loc);
  return 0;
}

/* ------------------------------------------------------------------ */
/* A materialized case                                                 */

struct world {
  struct spec sp;
  struct cluster *cl;
  int nRanks, channels;
  int *postRanks, nPost; /* ranks Postset runs on */
  struct rank_env env;   /* D25's variables and D27's answers; n == 0: none */
};

static void world_free(struct world *w) {
  cluster_free(w->cl);
  free(w->postRanks);
  rank_env_free(&w->env);
  memset(w, 0, sizeof *w);
}

/* The case's variables and answers (D25, D27), from their own stream of
 * the seed; and the NICs of spec.nics. Nothing when the spec sets none. */
static int world_env(const struct spec *sp, struct world *w) {
  int n = w->nRanks, M = sp->nodes;
  if (sp->nics > 0 && M > 1) {
    const struct ncclTopoGraph *g0 = w->cl->graphs[0];
    for (int m = 1; m < M; m++) memcpy(w->cl->graphs[m]->inter, g0->inter, sizeof g0->inter);
    if (sp->nics == 2) w->cl->graphs[M - 1]->inter[0] = g0->inter[0] + 1;
  }
  if (sp->order == 0 && sp->locations == 0 && sp->platform != 4) return 0;
  struct rng r = {mix(sp->seed ^ 0xD25D27ULL)};
  if (rank_env_alloc(&w->env, n) != 0) return -1;
  int odd = sp->oddRank % n;
  for (int k = 0; k < n && sp->order; k++) {
    const char *v = below(&r, 20) == 0 ? "NETWORK" : "network"; /* matched ignoring case, as the library does */
    if (k == odd && sp->order == 2) v = below(&r, 2) ? NULL : "rank";
    if (k == odd && sp->order == 3) v = badOrders[below(&r, (int)(sizeof badOrders / sizeof badOrders[0]))];
    if (v && (w->env.order[k] = strdup(v)) == NULL) return -1;
  }
  if (sp->locations) {
    int *nodeOf = malloc((size_t)n * sizeof(int));
    if (nodeOf == NULL) return -1;
    for (int k = 0; k < n; k++) nodeOf[k] = cluster_node_of(w->cl, k);
    int bad = spread_locations(&r, sp->locations, M, n, nodeOf, &w->env);
    free(nodeOf);
    if (bad) return -1;
  }
  if (sp->platform == 4) {
    /* Every rank's answers pass, but now and then one or two ranks' fail. */
    w->env.vcore = calloc((size_t)n, sizeof(int));
    w->env.jbog = calloc((size_t)n, sizeof(int));
    if (!w->env.vcore || !w->env.jbog) return -1;
    for (int k = 0; k < n; k++) w->env.jbog[k] = 1 + k % 3;
    for (int bad = below(&r, 4) == 0 ? 0 : 1 + below(&r, 2); bad > 0; bad--) {
      static const int vcores[] = {1, 2, -1}, jbogs[] = {0, 4, 5, -1};
      int k = below(&r, n);
      if (below(&r, 3) == 0) w->env.vcore[k] = vcores[below(&r, 3)];
      else w->env.jbog[k] = jbogs[below(&r, 4)];
    }
  }
  return 0;
}

/* Builds the cluster of a spec: node sizes, each node's channel orders (a
 * random permutation per node and channel) and NICs. */
static int world_build(const struct spec *sp, struct world *w) {
  memset(w, 0, sizeof *w);
  w->sp = *sp;
  struct rng r = {sp->seed};
  int *sizes = malloc((size_t)sp->nodes * sizeof(int));
  if (sizes == NULL) return -1;
  for (int m = 0; m < sp->nodes; m++) sizes[m] = sp->unequal ? 1 + below(&r, sp->local) : sp->local;
  w->cl = cluster_new_numbered(sp->nodes, sizes, sp->numbering, numbering_seed(sp->seed));
  free(sizes);
  if (w->cl == NULL) return -1;
  w->nRanks = w->cl->nRanks;
  w->channels = sp->channels;
  int perm[NCCL_TOPO_MAX_NODES];
  for (int m = 0; m < sp->nodes; m++) {
    struct ncclTopoGraph *g = w->cl->graphs[m];
    int L = w->cl->localRanks[m];
    int nc = sp->channels < 1 ? 1 : sp->channels > MAXCHANNELS ? MAXCHANNELS : sp->channels;
    for (int c = 0; c < nc && c * L + L <= NCCOM_RING_MAX_INTRA; c++) {
      for (int i = 0; i < L; i++) perm[i] = i;
      for (int i = L - 1; i > 0; i--) {
        int j = below(&r, i + 1), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
      }
      for (int i = 0; i < L; i++) g->intra[c * L + i] = cluster_rank(w->cl, m, perm[i]);
      g->inter[2 * c] = below(&r, 9) - 1;
      g->inter[2 * c + 1] = below(&r, 9) - 1;
    }
    g->nChannels = sp->channels;
    g->crossracktorack = below(&r, 3);
  }
  w->cl->enablePod = sp->pod;
  if (world_env(sp, w) != 0) return -1;

  /* The Postset sample: every rank of small clusters, else rank 0, the last
   * rank, the fault's rank and random ones. */
  int want = sp->postRanks == 0 || sp->postRanks >= w->nRanks ? w->nRanks : sp->postRanks;
  w->postRanks = malloc((size_t)want * sizeof(int));
  if (w->postRanks == NULL) return -1;
  if (want == w->nRanks) {
    for (int i = 0; i < want; i++) w->postRanks[i] = i;
    w->nPost = want;
  } else {
    int cand[4] = {0, w->nRanks - 1, sp->faultRank % w->nRanks, below(&r, w->nRanks)};
    for (int i = 0; w->nPost < want; i++) {
      int v = i < 4 ? cand[i] : below(&r, w->nRanks), dup = 0;
      for (int j = 0; j < w->nPost; j++) dup |= w->postRanks[j] == v;
      if (!dup) w->postRanks[w->nPost++] = v;
    }
  }
  return 0;
}

static int fault_rank(const struct world *w) { return w->sp.faultRank % w->nRanks; }
static int fault_channel(const struct world *w) {
  return w->sp.faultChannel % (w->channels < 1 ? 1 : w->channels);
}

/* The graph a rank's Preset sees: its node's, or, on the node of a graph
 * fault, a copy with the fault applied in scratch. */
static const struct ncclTopoGraph *graph_for(const struct world *w, int rank, struct ncclTopoGraph *g) {
  int m = cluster_node_of(w->cl, rank);
  int graphFault = w->sp.fault == F_INTRA_VALUE || w->sp.fault == F_INTRA_DUP || w->sp.fault == F_NCHANNELS;
  if (!graphFault || cluster_node_of(w->cl, fault_rank(w)) != m) return w->cl->graphs[m];
  memcpy(g, w->cl->graphs[m], sizeof *g);
  int L = w->cl->localRanks[m], c = fault_channel(w);
  switch (w->sp.fault) {
  case F_INTRA_VALUE:
    g->intra[c * L + (unsigned)w->sp.faultValue % (unsigned)L] = w->sp.faultValue % 2 ? -1 : w->nRanks;
    break;
  case F_INTRA_DUP:
    if (L > 1) {
      int i = 1 + (int)((unsigned)w->sp.faultValue % (unsigned)(L - 1));
      g->intra[c * L + i] = g->intra[c * L + i - 1];
    }
    break;
  case F_NCHANNELS:
    g->nChannels = w->sp.faultValue;
    break;
  default:
    break;
  }
  return g;
}

/* A communicator as a host hands it over: canary bytes everywhere the ring
 * stage must not care about, then the fields it reads. */
static void comm_init(const struct world *w, int rank, struct ncclComm *c, int **callerBufs) {
  memset(c, 0x5A, sizeof *c);
  int m = cluster_node_of(w->cl, rank);
  struct rng r = {w->sp.seed ^ 0xC0FFEEULL};
  for (int ch = 0; ch < MAXCHANNELS; ch++) {
    c->channels[ch].ring.userRanks = NULL;
    c->channels[ch].ring.devUserRanks = (int *)(uintptr_t)(0xDE000000u + (unsigned)ch); /* never touched */
    if (callerBufs) {
      callerBufs[ch] = NULL;
      if (w->sp.userBufs && below(&r, 3) == 0) {
        /* as long as the comm's nRanks says (F_NRANKS may claim more) */
        size_t len = (size_t)(w->sp.fault == F_NRANKS && w->sp.faultValue > w->nRanks ? w->sp.faultValue : w->nRanks);
        callerBufs[ch] = malloc(len * sizeof(int));
        memset(callerBufs[ch], 0x77, len * sizeof(int));
        c->channels[ch].ring.userRanks = callerBufs[ch];
      }
    }
  }
  c->nKangaRingChannels = w->sp.kanga;
  uint64_t k = mix(w->sp.seed ^ (uint64_t)rank);
  for (int p = 0; p < MAX_KANGA_PATHS; p++)
    for (int i = 0; i < NCCOM_RING_KANGA_WIDTH; i++)
      c->kangaRing[p][i] = (int)((k >> ((p * 64 + i) % 52)) & 4095) + 4096 * p;
  c->topo = &w->cl->systems[m];
  c->rank = rank;
  c->nRanks = w->nRanks;
  c->localRanks = w->cl->localRanks[m];
  c->enablePod = w->sp.pod;
  if (rank != fault_rank(w)) return;
  switch (w->sp.fault) {
  case F_LOCALRANKS: c->localRanks = w->sp.faultValue; break;
  case F_KANGA_COUNT: c->nKangaRingChannels = w->sp.faultValue; break;
  case F_RANK: c->rank = w->sp.faultValue; break;
  case F_NRANKS: c->nRanks = w->sp.faultValue; break;
  default: break;
  }
}

static void set_platform(const struct spec *sp) {
  hookSwitchV1 = sp->platform != 0;
  hookVcore = sp->platform == 2 ? 1 : 0;
  hookJbogMode = sp->platform == 3;
}

/* ------------------------------------------------------------------ */
/* Comparison                                                          */

static int silent;       /* shrinking: do not print differences */
static char diffText[2048];

__attribute__((format(printf, 1, 2))) static int differ(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(diffText, sizeof diffText, fmt, ap);
  va_end(ap);
  return 1;
}

/* Names the communicator member at a byte offset, for difference reports. */
static void comm_field(size_t off, char *out, size_t size) {
  size_t chan = sizeof(struct ncclChannel);
  if (off < MAXCHANNELS * chan) {
    size_t in = off % chan;
    snprintf(out, size, "channels[%zu].%s", off / chan,
             in < 4 ? "ring.prev" : in < 8 ? "ring.next" : in < 16 ? "ring.userRanks" : in < 24 ? "ring.devUserRanks" : "opaque");
  } else if (off < offsetof(struct ncclComm, kangaRing)) {
    snprintf(out, size, "nKangaRingChannels");
  } else if (off < offsetof(struct ncclComm, nMlaInCycle)) {
    size_t i = (off - offsetof(struct ncclComm, kangaRing)) / 4;
    snprintf(out, size, "kangaRing[%zu][%zu]", i / 64, i % 64);
  } else {
    static const struct { size_t off; const char *name; } f[] = {
        {offsetof(struct ncclComm, topo), "topo"},     {offsetof(struct ncclComm, rank), "rank"},
        {offsetof(struct ncclComm, nRanks), "nRanks"}, {offsetof(struct ncclComm, node), "node"},
        {offsetof(struct ncclComm, nNodes), "nNodes"}, {offsetof(struct ncclComm, localRanks), "localRanks"},
        {offsetof(struct ncclComm, nChannels), "nChannels"}, {offsetof(struct ncclComm, enablePod), "enablePod"}};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
      if (off >= f[i].off && off < f[i].off + 4) {
        snprintf(out, size, "%s", f[i].name);
        return;
      }
    snprintf(out, size, "padding");
  }
}

struct outcome {
  ncclResult_t res;
  char warn[1024];
};

static int compare_outcome(const char *call, int rank, const struct outcome *a, const struct outcome *b) {
  if (a->res != b->res)
    return differ("%s on rank %d: candidate returned %d, reference %d\n  candidate WARN: %s  reference WARN: %s", call,
                  rank, (int)a->res, (int)b->res, a->warn[0] ? a->warn : "(none)\n", b->warn[0] ? b->warn : "(none)\n");
  if (realMode && !(spec_string(a->warn) || spec_string(b->warn))) return 0;
  if (strcmp(a->warn, b->warn) != 0)
    return differ("%s on rank %d (both returned %d): WARN differs\n  candidate: %s  reference: %s", call, rank,
                  (int)a->res, a->warn[0] ? a->warn : "(none)\n", b->warn[0] ? b->warn : "(none)\n");
  return 0;
}

static int compare_bytes(const char *call, int rank, const char *what, const void *a, const void *b, size_t n) {
  const unsigned char *x = a, *y = b;
  for (size_t i = 0; i < n; i++)
    if (x[i] != y[i])
      return differ("%s on rank %d: %s byte %zu: candidate 0x%02x, reference 0x%02x", call, rank, what, i, x[i], y[i]);
  return 0;
}

/* Preset's fragments, byte for byte. A real libnccom does not write
 * channels c >= graph->nChannels of the four ring arrays, where this
 * project's Preset marks them -1 (D23), nor the record (D25), so --real
 * compares those entries as equal. */
static int compare_fragments(int rank, const struct ncclTopoRanks *a, const struct ncclTopoRanks *b, int nChannels) {
  struct ncclTopoRanks x = *a, y = *b;
  for (int c = nChannels < 0 ? 0 : nChannels; realMode && c < MAXCHANNELS; c++) {
    x.ringRecv[c] = y.ringRecv[c] = x.ringSend[c] = y.ringSend[c] = 0;
    x.ringPrev[c] = y.ringPrev[c] = x.ringNext[c] = y.ringNext[c] = 0;
  }
  if (realMode) {
    memset((unsigned char *)&x + NCCOM_RING_RECORD_OFFSET, 0, sizeof(struct nccomRingRecord));
    memset((unsigned char *)&y + NCCOM_RING_RECORD_OFFSET, 0, sizeof(struct nccomRingRecord));
  }
  return compare_bytes("ncclTopoPreset", rank, "fragment", &x, &y, sizeof x);
}

/* Compares two communicators: userRanks pointers by role (NULL, the
 * caller's buffer, or the library's) and contents; every other byte as is. */
static int compare_comms(const char *call, int rank, const struct ncclComm *a, const struct ncclComm *b,
                         int *const *bufsA, int *const *bufsB) {
  if (a->nRanks != b->nRanks) return differ("%s on rank %d: comm->nRanks candidate %d, reference %d", call, rank, a->nRanks, b->nRanks);
  int nRanks = a->nRanks; /* userRanks buffers hold comm->nRanks ints (D12) */
  for (int ch = 0; ch < MAXCHANNELS; ch++) {
    const int *ua = a->channels[ch].ring.userRanks, *ub = b->channels[ch].ring.userRanks;
    int roleA = ua == NULL ? 0 : bufsA && ua == bufsA[ch] ? 1 : 2;
    int roleB = ub == NULL ? 0 : bufsB && ub == bufsB[ch] ? 1 : 2;
    static const char *roles[] = {"NULL", "the caller's buffer", "a new buffer"};
    if (roleA != roleB)
      return differ("%s on rank %d: channels[%d].ring.userRanks is %s in the candidate, %s in the reference", call,
                    rank, ch, roles[roleA], roles[roleB]);
    if (ua && memcmp(ua, ub, (size_t)nRanks * sizeof(int)) != 0) {
      for (int i = 0; i < nRanks; i++)
        if (ua[i] != ub[i])
          return differ("%s on rank %d: channels[%d].ring.userRanks[%d]: candidate %d, reference %d", call, rank, ch,
                        i, ua[i], ub[i]);
    }
  }
  if (memcmp(a, b, sizeof *a) == 0) return 0; /* the common case: identical, pointers included */
  static struct ncclComm ca, cb;
  memcpy(&ca, a, sizeof ca);
  memcpy(&cb, b, sizeof cb);
  for (int ch = 0; ch < MAXCHANNELS; ch++) ca.channels[ch].ring.userRanks = cb.channels[ch].ring.userRanks = NULL;
  const unsigned char *x = (const unsigned char *)&ca, *y = (const unsigned char *)&cb;
  for (size_t i = 0; i < sizeof ca; i++) {
    if (x[i] != y[i]) {
      char name[64];
      comm_field(i, name, sizeof name);
      size_t base = i & ~(size_t)3;
      int va, vb;
      memcpy(&va, x + base, 4);
      memcpy(&vb, y + base, 4);
      return differ("%s on rank %d: comm byte %zu (%s): candidate %d, reference %d", call, rank, i, name, va, vb);
    }
  }
  return 0;
}

static void free_lib_bufs(struct ncclComm *c, int *const *callerBufs) {
  for (int ch = 0; ch < MAXCHANNELS; ch++) {
    int *u = c->channels[ch].ring.userRanks;
    if (u && !(callerBufs && u == callerBufs[ch])) free(u);
    if (callerBufs) free(callerBufs[ch]);
  }
}

/* ------------------------------------------------------------------ */
/* Running one case                                                    */

static struct ncclComm *commA, *commB;

/* Every call is followed by a drain, so the pipe is empty when the next
 * begins. */
static void call_begin(const char *call, int lib) { set_call(call, lib); }

static void call_end(struct outcome *o) {
  char raw[4096];
  drain(raw, sizeof raw);
  warn_text(raw, o->warn, sizeof o->warn);
  set_call(currentCall, -1);
}

static int run_preset(const struct world *w, int lib, int rank, struct ncclComm *c, int **bufs,
                      struct ncclTopoRanks *frag, struct outcome *o) {
  static struct ncclTopoGraph scratch;
  /* The libraries take a non-const graph; neither writes it (spec §2). */
  struct ncclTopoGraph *g = (struct ncclTopoGraph *)(uintptr_t)graph_for(w, rank, &scratch);
  comm_init(w, rank, c, bufs);
  memset(frag, 0xA5, sizeof *frag);
  set_rank_env(&w->env, rank);
  call_begin("ncclTopoPreset", lib);
  o->res = libs[lib].api.preset(c, w->sp.fault == F_NULL_GRAPH && rank == fault_rank(w) ? NULL : g, frag);
  call_end(o);
  return o->res;
}

static int check_get_net_dev(const struct world *w, int rank, int nChannels) {
  struct rng r = {w->sp.seed ^ 0xD00DULL ^ (uint64_t)rank};
  static struct ncclTopoGraph g;
  int m = cluster_node_of(w->cl, rank);
  memcpy(&g, w->cl->graphs[m], sizeof g);
  struct ncclTopoSystem sys = w->cl->systems[m];
  int ids[80], n = 0;
  ids[n++] = -1;
  for (int c = 0; c < nChannels + 2 && n < 70; c++) ids[n++] = c;
  ids[n++] = 1000 + below(&r, 1000);
  ids[n++] = INT_MAX;
  for (int mode = 0; mode < 6; mode++) {
    /* 0: as built; 1: graph NULL (the host's ncclTopoGetLocalNet, D19);
     * 2: bad count; 3: bad nChannels; 4: sys NULL; 5: dev NULL. */
    if (realMode && mode != 0) break;
    struct ncclTopoSystem s = sys;
    struct ncclTopoGraph *gp = &g;
    int nch = g.nChannels;
    if (mode == 2) {
      static const int counts[] = {0, -1, 257, 1, 256};
      s.nodes[0].count = counts[below(&r, 5)];
    }
    if (mode == 3) {
      static const int chans[] = {0, -3, 40, 64, 33};
      g.nChannels = chans[below(&r, 5)];
    }
    for (int i = 0; i < n; i++) {
      if (mode != 0 && i % 7 != 0) continue;
      struct outcome o[2];
      int dev[2] = {-12345, -12345};
      for (int lib = 0; lib < 2; lib++) {
        call_begin("ncclTopoGetNetDev", lib);
        o[lib].res = libs[lib].api.get_net_dev(mode == 4 ? NULL : &s, rank, mode == 1 ? NULL : gp, ids[i],
                                               mode == 5 ? NULL : &dev[lib]);
        call_end(&o[lib]);
      }
      char call[96];
      snprintf(call, sizeof call, "ncclTopoGetNetDev(channelId %d, %s)", ids[i],
               (const char *[]){"graph", "graph NULL", "bad sys count", "bad graph nChannels", "sys NULL",
                                "dev NULL"}[mode]);
      if (compare_outcome(call, rank, &o[0], &o[1])) return 1;
      if (dev[0] != dev[1]) return differ("%s on rank %d: *dev candidate %d, reference %d", call, rank, dev[0], dev[1]);
    }
    g.nChannels = nch;
  }
  return 0;
}

/* BuildRings on the rings Postset made (next taken from userRanks), now and
 * then with a corrupted next or rank. */
static int check_build_rings(const struct world *w, const struct ncclComm *c) {
  int n = w->nRanks, nrings = c->nChannels;
  if (c->nRanks != n || nrings < 0 || nrings > MAXCHANNELS || n > 512) return 0;
  size_t cells = (size_t)(nrings > 0 ? nrings : 1) * (size_t)n;
  int *next = malloc(cells * sizeof(int)), *rings[2];
  rings[0] = malloc(cells * sizeof(int));
  rings[1] = malloc(cells * sizeof(int));
  if (!next || !rings[0] || !rings[1]) return differ("harness out of memory");
  struct rng r = {w->sp.seed ^ 0xB1ULL};
  for (int ch = 0; ch < nrings; ch++) {
    const int *u = c->channels[ch].ring.userRanks;
    for (int i = 0; i < n; i++) next[(size_t)ch * (size_t)n + (size_t)u[i]] = u[(i + 1) % n];
  }
  int rank = c->rank;
  int mode = realMode ? 0 : below(&r, 4);
  if (mode == 1 && nrings > 0) next[below(&r, (int)cells)] = below(&r, 3) == 0 ? n + below(&r, 3) : below(&r, n);
  if (mode == 2) rank = below(&r, 2) ? -1 : n;
  if (mode == 3 && nrings > 0 && n > 1) { /* a short cycle: two ranks pointing at each other */
    int ch = below(&r, nrings), a = below(&r, n), b = (a + 1) % n;
    next[(size_t)ch * (size_t)n + (size_t)a] = b;
    next[(size_t)ch * (size_t)n + (size_t)b] = a;
  }
  struct outcome o[2];
  for (int lib = 0; lib < 2; lib++) {
    memset(rings[lib], 0x3C, cells * sizeof(int));
    call_begin("ncclBuildRings", lib);
    o[lib].res = libs[lib].api.build_rings(nrings, rings[lib], rank, n, NULL, next);
    call_end(&o[lib]);
  }
  int d = compare_outcome("ncclBuildRings", rank, &o[0], &o[1]) ||
          compare_bytes("ncclBuildRings", rank, "rings", rings[0], rings[1], cells * sizeof(int));
  free(next);
  free(rings[0]);
  free(rings[1]);
  return d;
}

/* The D25/D27 texts a run has seen, for its last line: what the cases with
 * the variables exercised. */
static const char *const envTextKeys[8] = {
    "is not rank or network",   "this rank has no location", "the most common): network on", "has graph fingerprint",
    "has no location (",        "comm->enablePod is set on", "virtual core size of rank", "JBOG id of rank"};
static const char *const envTextLabels[8] = {
    "unknown NCCOM_RING_NODE_ORDER", "invalid NCCOM_RING_LOCATION", "case 4 (a policy's odd one out)",
    "case 5 (a graph's odd one out)",        "case 6 with nodes without a location", "P12", "P13", "P14"};
static void tally_text(const char *warn) {
  if (silent) return;
  for (int k = 0; k < 8; k++)
    if (strstr(warn, envTextKeys[k])) sum.envTexts[k]++;
}

/* Runs one case through both libraries. Returns 1 on the first difference
 * (described in diffText), 0 when they agree. */
static void format_spec(char *out, size_t size, const struct spec *s);

static int run_case(const struct spec *sp) {
  struct world w;
  char text[CASE_TEXT];
  format_spec(text, sizeof text, sp);
  case_begin(text, CASE_SPEC);
  if (world_build(sp, &w) != 0) {
    world_free(&w);
    case_end();
    return differ("harness out of memory building the case");
  }
  set_platform(sp);
  int n = w.nRanks, d = 0;
  if (!silent && w.env.n > 0) sum.envCases++;
  /* A comm that claims more ranks (F_NRANKS) gets arrays that long, as its
   * host would pass them: the extra fragment pointers are NULL. */
  size_t room = (size_t)(sp->fault == F_NRANKS && sp->faultValue > n ? sp->faultValue : n);
  struct ncclTopoRanks *frags[2] = {calloc((size_t)n, sizeof(struct ncclTopoRanks)),
                                    calloc((size_t)n, sizeof(struct ncclTopoRanks))};
  struct ncclTopoRanks **all[2] = {calloc(room, sizeof(void *)), calloc(room, sizeof(void *))};
  int *heads[2] = {malloc(room * sizeof(int)), malloc(room * sizeof(int))};
  int *bufs[2][MAXCHANNELS];
  if (!frags[0] || !frags[1] || !all[0] || !all[1] || !heads[0] || !heads[1]) {
    d = differ("harness out of memory");
    goto out;
  }

  /* Preset on every rank, compared on every rank of nodes up to 32 ranks.
   * On larger nodes the reference model's O(L^2) duplicate check makes that
   * too slow for 20,000 cases, so it is compared on the first 4 and the last
   * rank of each node, the fault's rank and the Postset ranks; elsewhere the
   * candidate's fragment stands for both (Postset still gets equal input).
   * A case that sets D25's variables runs every Preset in both libraries:
   * each prints a variable's WARN when it reads a new value, so both must
   * read every rank's. */
  for (int r = 0; r < n && !d; r++) {
    struct outcome o[2];
    struct ncclComm *c[2] = {commA, commB};
    int m = cluster_node_of(w.cl, r), local = cluster_local_of(w.cl, r), L = w.cl->localRanks[m];
    int compare = L <= 32 || local < 4 || local == L - 1 || r == fault_rank(&w) || w.env.n > 0;
    for (int i = 0; i < w.nPost && !compare; i++) compare = w.postRanks[i] == r;
    if (!compare) {
      run_preset(&w, 0, r, commA, NULL, &frags[0][r], &o[0]);
      if (o[0].res != ncclSuccess) {
        compare = 1; /* an error is always compared */
      } else {
        frags[1][r] = frags[0][r];
        continue;
      }
    }
    for (int lib = 0; lib < 2; lib++) run_preset(&w, lib, r, c[lib], NULL, &frags[lib][r], &o[lib]);
    d = compare_outcome("ncclTopoPreset", r, &o[0], &o[1]) || compare_fragments(r, &frags[0][r], &frags[1][r], w.channels) ||
        compare_comms("ncclTopoPreset", r, commA, commB, NULL, NULL);
    tally_text(o[0].warn);
    if (!d && o[0].res != ncclSuccess) goto out; /* both refused alike: the case ends here */
  }
  if (d) goto out;

  /* The AllGather, then fragment faults. */
  for (int lib = 0; lib < 2; lib++) {
    for (int r = 0; r < n; r++) all[lib][r] = &frags[lib][r];
    int fr = fault_rank(&w), fc = fault_channel(&w), v = sp->faultValue;
    switch (sp->fault) {
    case F_FRAG_RECV: frags[lib][fr].ringRecv[fc] = v; break;
    case F_FRAG_SEND: frags[lib][fr].ringSend[fc] = v; break;
    case F_FRAG_PREV: frags[lib][fr].ringPrev[fc] = v; break;
    case F_FRAG_NEXT: frags[lib][fr].ringNext[fc] = v; break;
    case F_FRAG_NULL: all[lib][fr] = NULL; break;
    case F_FRAG_SWAP: all[lib][fr] = &frags[lib][(unsigned)v % (unsigned)n]; break;
    case F_REC_FLIP: ((unsigned char *)&frags[lib][fr])[NCCOM_RING_RECORD_OFFSET + (unsigned)v % 64] ^= 0xFF; break;
    case F_REC_ZERO: memset((unsigned char *)&frags[lib][fr] + NCCOM_RING_RECORD_OFFSET, 0, sizeof(int)); break;
    default: break;
    }
  }

  /* Postset on the sampled ranks, each on the comm its own Preset left. */
  for (int i = 0; i < w.nPost && !d; i++) {
    int r = w.postRanks[i];
    struct ncclComm *c[2] = {commA, commB};
    struct outcome o[2];
    int nch[2] = {-777, -777}, nnodes[2] = {-777, -777};
    for (int lib = 0; lib < 2; lib++) {
      struct ncclTopoRanks scratchFrag;
      if (run_preset(&w, lib, r, c[lib], bufs[lib], &scratchFrag, &o[lib]) != ncclSuccess) {
        d = differ("ncclTopoPreset on rank %d failed when repeated for Postset", r);
        break;
      }
      if (sp->fault == F_COMM_NCHANNELS) c[lib]->nChannels = sp->faultValue;
      for (size_t k = 0; k < room; k++) heads[lib][k] = -999;
      call_begin("ncclTopoPostset", lib);
      o[lib].res = libs[lib].api.postset(c[lib], heads[lib], all[lib], &nch[lib], &nnodes[lib]);
      call_end(&o[lib]);
    }
    if (!d)
      d = compare_outcome("ncclTopoPostset", r, &o[0], &o[1]) ||
          compare_comms("ncclTopoPostset", r, commA, commB, bufs[0], bufs[1]) ||
          compare_bytes("ncclTopoPostset", r, "nodesFirstRank", heads[0], heads[1], room * sizeof(int)) ||
          (nch[0] != nch[1] && differ("ncclTopoPostset on rank %d: *nChannels candidate %d, reference %d", r, nch[0], nch[1])) ||
          (nnodes[0] != nnodes[1] && differ("ncclTopoPostset on rank %d: *nNodes candidate %d, reference %d", r, nnodes[0], nnodes[1]));
    if (!d && i == 0) tally_text(o[0].warn);
    if (!d && o[0].res == ncclSuccess) {
      d = check_get_net_dev(&w, r, commA->nChannels);
      if (!d && i == 0) d = check_build_rings(&w, commA);
    }
    free_lib_bufs(commA, bufs[0]);
    free_lib_bufs(commB, bufs[1]);
  }
out:
  for (int lib = 0; lib < 2; lib++) {
    free(frags[lib]);
    free(all[lib]);
    free(heads[lib]);
  }
  clear_rank_env();
  world_free(&w);
  case_end();
  return d;
}

/* ------------------------------------------------------------------ */
/* Case generation, printing, parsing, shrinking                      */

static const char *faultNames[F_COUNT] = {
    "F_NONE",      "F_INTRA_VALUE", "F_INTRA_DUP", "F_NCHANNELS", "F_LOCALRANKS", "F_KANGA_COUNT",
    "F_RANK",      "F_NRANKS",      "F_NULL_GRAPH", "F_FRAG_RECV", "F_FRAG_SEND",  "F_FRAG_PREV",
    "F_FRAG_NEXT", "F_FRAG_NULL",   "F_FRAG_SWAP", "F_COMM_NCHANNELS", "F_REC_FLIP", "F_REC_ZERO"};

/* A case as a struct spec initializer, "{...}" (a regressions.inc line
 * adds a comma). */
static void format_spec(char *out, size_t size, const struct spec *s) {
  FILE *f = fmemopen(out, size, "w");
  if (f == NULL) {
    snprintf(out, size, "{.seed = 0x%llxULL}", s->seed);
    return;
  }
  fprintf(f, "{.seed = 0x%llxULL, .nodes = %d, .local = %d, .channels = %d", s->seed, s->nodes, s->local,
          s->channels);
  if (s->unequal) fprintf(f, ", .unequal = 1");
  if (s->platform) fprintf(f, ", .platform = %d", s->platform);
  if (s->kanga) fprintf(f, ", .kanga = %d", s->kanga);
  if (s->pod) fprintf(f, ", .pod = %d", s->pod);
  if (s->userBufs) fprintf(f, ", .userBufs = 1");
  if (s->fault)
    fprintf(f, ", .fault = %s, .faultRank = %d, .faultChannel = %d, .faultValue = %d", faultNames[s->fault],
            s->faultRank, s->faultChannel, s->faultValue);
  if (s->postRanks) fprintf(f, ", .postRanks = %d", s->postRanks);
  if (s->numbering > 0 && s->numbering < CLUSTER_NUMBERINGS) fprintf(f, ", .numbering = %s", numberingNames[s->numbering]);
  else if (s->numbering) fprintf(f, ", .numbering = %d", s->numbering);
  if (s->order) fprintf(f, ", .order = %d, .oddRank = %d", s->order, s->oddRank);
  if (s->locations) fprintf(f, ", .locations = %d", s->locations);
  if (s->nics) fprintf(f, ", .nics = %d", s->nics);
  fprintf(f, "}");
  fclose(f);
}


/* Reads the ".name = value" fields of a spec line, as print_spec and
 * format_xspec write them (braces, commas and "ULL" optional): a value is a
 * name of the kind enum (names, which all begin with prefix), a numbering
 * name, or an integer in int's range ("seed" excepted: 64 bits). set stores
 * each field; it returns nonzero for a name it does not know. Returns 0, or
 * -1 on anything malformed. */
typedef int (*spec_setter)(void *target, const char *name, long long v, unsigned long long seed);

static int parse_fields(const char *text, const char *const *names, int count, const char *prefix, spec_setter set,
                        void *target) {
  char buf[1024];
  snprintf(buf, sizeof buf, "%s", text);
  char *save = NULL;
  for (char *tok = strtok_r(buf, ",{}", &save); tok; tok = strtok_r(NULL, ",{}", &save)) {
    char name[32], value[64];
    if (sscanf(tok, " .%31[a-zA-Z] = %63s", name, value) != 2) {
      if (strspn(tok, " \t\n") == strlen(tok)) continue;
      return -1;
    }
    long long v = 0;
    int found = 0, isSeed = strcmp(name, "seed") == 0;
    for (int i = 0; i < count; i++)
      if (strcmp(value, names[i]) == 0) v = i, found = 1;
    if (!found && strncmp(value, prefix, strlen(prefix)) == 0) return -1; /* an unknown name of the enum */
    if (!found && numbering_name(value, &v)) {
      if (v < 0) return -1; /* an unknown numbering name */
      found = 1;
    }
    if (!found) {
      char *end;
      v = strtoll(value, &end, 0);
      if (*end != '\0' && strcmp(end, "ULL") != 0) return -1;
      if (!isSeed && (v < INT_MIN || v > INT_MAX)) return -1;
    }
    if (set(target, name, v, isSeed ? strtoull(value, NULL, 0) : 0) != 0) return -1;
  }
  return 0;
}

static int set_spec_field(void *target, const char *name, long long v, unsigned long long seed) {
  struct spec *s = target;
#define FIELD(F) else if (strcmp(name, #F) == 0) s->F = (int)v;
  if (strcmp(name, "seed") == 0) s->seed = seed;
  FIELD(nodes) FIELD(local) FIELD(unequal) FIELD(channels) FIELD(platform) FIELD(kanga) FIELD(pod)
  FIELD(userBufs) FIELD(fault) FIELD(faultRank) FIELD(faultChannel) FIELD(faultValue) FIELD(postRanks)
  FIELD(numbering) FIELD(order) FIELD(oddRank) FIELD(locations) FIELD(nics)
  else return -1;
#undef FIELD
  return 0;
}

/* Parses what print_spec prints. */
static int parse_spec(const char *text, struct spec *s) {
  memset(s, 0, sizeof *s);
  if (parse_fields(text, faultNames, F_COUNT, "F_", set_spec_field, s) != 0) return -1;
  /* The ranges the generator and the harness's buffers are built for. */
  if (s->nodes < 1 || s->nodes > 64 || s->local < 1 || s->local > NCCL_TOPO_MAX_NODES || s->channels < 1 ||
      s->channels > MAXCHANNELS || s->platform < 0 || s->platform > 4 || s->kanga < -1 || s->kanga > 5 ||
      s->fault < 0 || s->fault >= F_COUNT || s->faultRank < 0 || s->faultChannel < 0 || s->postRanks < 0 ||
      s->numbering < 0 || s->numbering >= CLUSTER_NUMBERINGS ||
      (s->fault == F_NRANKS && s->faultValue > 1 << 20) || s->order < 0 || s->order > 3 || s->oddRank < 0 ||
      s->locations < 0 || s->locations > 3 || s->nics < 0 || s->nics > 2)
    return -1;
  return 0;
}

/* A random valid-looking cluster, small most of the time, with faults now
 * and then. */
static void random_spec(uint64_t seed, struct spec *s) {
  struct rng r = {seed};
  memset(s, 0, sizeof *s);
  s->seed = next_u64(&r);
  int p = below(&r, 100);
  s->nodes = p < 55 ? 1 + below(&r, 4) : p < 85 ? 5 + below(&r, 12) : p < 97 ? 17 + below(&r, 16) : 33 + below(&r, 32);
  p = below(&r, 100);
  s->local = p < 60 ? 1 + below(&r, 8) : p < 92 ? 1 + below(&r, 32) : (int[]){64, 128, 256}[below(&r, 3)];
  if (s->local >= 64 && s->nodes > 4) s->nodes = 1 + below(&r, 4);
  s->channels = 1 + below(&r, 32);
  while (s->channels * s->local > NCCOM_RING_MAX_INTRA) s->channels /= 2;
  s->unequal = below(&r, 10) == 0;
  s->userBufs = below(&r, 5) == 0;
  int nRanks = s->nodes * s->local;
  s->postRanks = nRanks <= 8 ? 0 : nRanks <= 256 ? 4 : 2;
  s->numbering = random_numbering(&r);
  if (realMode) return;
  p = below(&r, 100);
  s->platform = p < 80 ? 0 : p < 94 ? 1 : p < 97 ? 2 : 3;
  s->kanga = s->platform ? below(&r, 5) : below(&r, 10) == 0 ? below(&r, 5) : 0;
  s->pod = below(&r, 25) == 0;
  if (below(&r, 100) < 25) {
    s->fault = 1 + below(&r, F_FIRST_ROUNDS - 1);
    s->faultRank = below(&r, nRanks > 0 ? nRanks : 1);
    s->faultChannel = below(&r, 32);
    static const int values[] = {-2, -1, 0, 1, 5, 32, 33, 257};
    s->faultValue = below(&r, 3) == 0 ? values[below(&r, 8)] : below(&r, nRanks + 2) - 1;
  }
  /* D25, D27, drawn after everything else so that the draws above stay as
   * they were: mostly no variable; sometimes NCCOM_RING_NODE_ORDER=network
   * on every rank, or on all but one; locations from a small tree, on some
   * ranks unset, invalid or another node's; NICs that differ per node or
   * not; SwitchV1 with per-rank answers; a record corrupted after the
   * AllGather. Only on clusters where comparing every rank's Preset is
   * cheap (the model's duplicate check is quadratic in the node size). */
  if (nRanks <= 1024 && s->local <= 32) {
    p = below(&r, 100);
    s->order = p < 80 ? 0 : p < 92 ? 1 : p < 96 ? 2 : 3;
    s->oddRank = below(&r, nRanks);
    p = below(&r, 100);
    if (s->order) s->locations = p < 10 ? 0 : p < 60 ? 1 : p < 80 ? 2 : 3;
    else s->locations = p < 8 ? 1 + below(&r, 3) : 0;
    p = below(&r, 100);
    s->nics = s->order ? (p < 70 ? 1 : p < 85 ? 0 : 2) : 0;
    if (s->platform == 0 && below(&r, 100) < 5) s->platform = 4, s->kanga = below(&r, 5);
  }
  if (s->fault == F_NONE && below(&r, 100) < 4) {
    s->fault = F_REC_FLIP + below(&r, 2);
    s->faultRank = below(&r, nRanks > 0 ? nRanks : 1);
    s->faultValue = below(&r, 64);
  }
}

/* How big a case is: shrinking only ever moves to a strictly smaller one,
 * so it ends. */
static long long spec_size(const struct spec *s) {
  long long v = s->faultValue < 0 ? -(long long)s->faultValue : s->faultValue;
  return ((long long)s->nodes * s->local * s->channels) * 1000000 + (long long)s->faultRank * 1000 +
         s->faultChannel * 100 + v * 10 + s->unequal + s->platform + s->kanga + s->pod + s->userBufs +
         (s->fault != 0) + (s->postRanks != 1) + s->numbering + s->order + (s->oddRank != 0) + s->locations +
         s->nics;
}

/* Greedy shrinking: keep any smaller case that still differs. */
static void progress_tick(void);

static void shrink(struct spec *s) {
  silent = 1;
  sum.phase = "shrinking the failing case";
  for (int progress = 1; progress;) {
    progress = 0;
    struct spec tries[48];
    int n = 0;
#define TRY(FIELD, VALUE)                         \
  if (s->FIELD != (VALUE)) {                      \
    tries[n] = *s;                                \
    tries[n].FIELD = (VALUE);                     \
    n++;                                          \
  }
    TRY(nodes, 1) TRY(nodes, s->nodes / 2 > 0 ? s->nodes / 2 : 1) TRY(nodes, s->nodes > 1 ? s->nodes - 1 : 1)
    TRY(local, 1) TRY(local, s->local / 2 > 0 ? s->local / 2 : 1) TRY(local, s->local > 1 ? s->local - 1 : 1)
    TRY(channels, 1) TRY(channels, s->channels / 2 > 0 ? s->channels / 2 : 1)
    TRY(channels, s->channels > 1 ? s->channels - 1 : 1)
    TRY(unequal, 0) TRY(platform, 0) TRY(kanga, 0) TRY(kanga, s->kanga > 1 ? s->kanga - 1 : 0)
    TRY(pod, 0) TRY(userBufs, 0) TRY(fault, 0)
    TRY(order, 0) TRY(order, s->order > 1 ? 1 : s->order) TRY(oddRank, 0) TRY(locations, 0)
    TRY(locations, s->locations > 1 ? 1 : s->locations) TRY(nics, 0) TRY(nics, s->nics > 1 ? 1 : s->nics)
    TRY(numbering, CLUSTER_NODE_MAJOR) TRY(numbering, s->numbering > 1 ? CLUSTER_ROUND_ROBIN : s->numbering)
    /* fault coordinates: into the shrunk cluster, then toward 0 */
    TRY(faultRank, s->faultRank % (s->nodes * s->local)) TRY(faultRank, s->faultRank / 2) TRY(faultRank, 0)
    TRY(faultChannel, s->faultChannel % s->channels) TRY(faultChannel, 0)
    TRY(faultValue, 0) TRY(faultValue, -1) TRY(faultValue, s->faultValue / 2) TRY(postRanks, 1)
#undef TRY
    for (int i = 0; i < n && !progress; i++) {
      if (spec_size(&tries[i]) < spec_size(s) && run_case(&tries[i])) {
        *s = tries[i];
        progress = 1;
      }
      sum.shrinkTries++;
      progress_tick();
    }
  }
  silent = 0;
}

/* ------------------------------------------------------------------ */

static int null_argument_calls(void) {
  /* Each NULL argument, once, through both libraries. */
  struct ncclComm *c = commA;
  struct ncclTopoGraph *g = calloc(1, sizeof *g);
  struct ncclTopoRanks fr, *allp[1] = {&fr};
  int x, y, ring[1], next[1] = {0};
  struct {
    const char *name;
    int which;
  } calls[] = {{"Preset(comm NULL)", 0},     {"Preset(graph NULL)", 1},      {"Preset(topoRanks NULL)", 2},
               {"Postset(comm NULL)", 3},    {"Postset(nodesFirstRank NULL)", 4}, {"Postset(allTopoRanks NULL)", 5},
               {"Postset(nChannels NULL)", 6}, {"Postset(nNodes NULL)", 7},  {"BuildRings(rings NULL)", 8},
               {"BuildRings(next NULL)", 9}};
  int d = 0;
  if (!realMode) case_begin("the NULL-argument calls (they run first)", CASE_FIXED);
  for (size_t i = 0; i < sizeof calls / sizeof calls[0] && !d && !realMode; i++) {
    struct outcome o[2];
    for (int lib = 0; lib < 2; lib++) {
      const struct ring_api *a = &libs[lib].api;
      memset(c, 0, sizeof *c);
      c->nRanks = 1;
      c->localRanks = 1;
      call_begin(calls[i].name, lib);
      switch (calls[i].which) {
      case 0: o[lib].res = a->preset(NULL, g, &fr); break;
      case 1: o[lib].res = a->preset(c, NULL, &fr); break;
      case 2: o[lib].res = a->preset(c, g, NULL); break;
      case 3: o[lib].res = a->postset(NULL, &x, allp, &x, &y); break;
      case 4: o[lib].res = a->postset(c, NULL, allp, &x, &y); break;
      case 5: o[lib].res = a->postset(c, &x, NULL, &x, &y); break;
      case 6: o[lib].res = a->postset(c, &x, allp, NULL, &y); break;
      case 7: o[lib].res = a->postset(c, &x, allp, &x, NULL); break;
      case 8: o[lib].res = a->build_rings(1, NULL, 0, 1, NULL, next); break;
      case 9: o[lib].res = a->build_rings(1, ring, 0, 1, NULL, NULL); break;
      }
      call_end(&o[lib]);
    }
    d = compare_outcome(calls[i].name, -1, &o[0], &o[1]);
  }
  if (!realMode) case_end();
  free(g);
  return d;
}

/* ------------------------------------------------------------------ */
/* Cross-rank mode: one AllGather, one verdict (issue 8; D23, D24;     */
/* docs/errors.md, ncclTopoPostset: "One verdict", "Diagnosis").       */
/*                                                                     */
/* In a job every rank calls Postset on the same gathered fragments;   */
/* if one rank fails while the others succeed, the job hangs. A job    */
/* here is one cluster: Preset on every rank straight into its slot of */
/* the gathered buffer, one corruption of that buffer, then Postset on */
/* every rank, each with its own communicator as Preset left it,       */
/* through each library. Asserted: one verdict per library (the same   */
/* code and log on every rank apart from the [rank] prefix and rank    */
/* 0's Channel lines, and on success the same channel and node counts  */
/* and the same rings), the same outcome in both libraries, and how    */
/* often a failure's WARN names the rank whose slot was corrupted.     */

static const char *xKindNames[X_COUNT] = {
    "X_NONE",      "X_RECV",     "X_SEND",      "X_PREV",  "X_NEXT",        "X_DUP",         "X_SWAP",
    "X_REC_FLIP",  "X_REC_COPY", "X_REC_STALE", "X_PLATFORM", "X_ENABLEPOD", "X_KANGA",      "X_GRAPH",
    "X_STALE_COUNT", "X_REC_VERSION", "X_REC_NONE", "X_ENV_PLATFORM"};
static const char *xKindLabels[X_COUNT] = {
    "none",         "ringRecv",    "ringSend",     "ringPrev", "ringNext",  "duplicate", "swap",
    "record byte",  "record copy", "stale record", "platform", "enablePod", "nKangaRingChannels", "graph",
    "channel count", "record version", "no magic", "NCCOM_RING_PLATFORM"};

/* The largest job --case accepts: two libraries' communicators for every
 * rank are held at once (about 19 KB each). */
enum { X_MAX_RANKS = 1024 };

/* One materialized cross-rank job. */
struct xjob {
  struct cluster *cl;
  int nRanks;
  const struct ncclTopoGraph **graphOf; /* [nRanks]: the graph each rank's Preset is handed */
  struct ncclTopoGraph *own;            /* a graph of the job's own (named cases), freed with it */
  unsigned char fill;                   /* what the gathered buffer held before Preset */
  int kind, rank, channel, value;       /* the corruption, reduced into the job's ranges */
  void (*corrupt)(struct ncclTopoRanks *slots); /* a named case's own corruption, or NULL */
  struct rank_env env;                  /* D25's variables (and D27's answers) per rank; n == 0: none */
  int pod;                              /* comm->enablePod on every rank */
  int switchV1;                         /* the family hook says TRN3-SwitchV1 */
  int carries;                          /* every rank's record carries something (the policy, a
                                         * location, --pod-order node or SwitchV1) */
  /* D28: whose own state differs at Preset (X_PLATFORM, X_ENABLEPOD,
   * X_KANGA, X_GRAPH): rank j->rank, or every rank of its node */
  int oddNode;
  int kanga, oddKanga;                  /* comm->nKangaRingChannels at Preset: every rank's, the odd ones' */
  void (*beforePostset)(int rank, struct ncclComm *c); /* a named case's change to a rank's comm, or NULL */
};

static void x_job_free(struct xjob *j) {
  cluster_free(j->cl);
  free(j->graphOf);
  free(j->own);
  rank_env_free(&j->env);
  memset(j, 0, sizeof *j);
}

/* Whether rank k is one of the ranks whose own state differs (D28's
 * kinds): j->rank, or with oddNode every rank of its node. */
static int x_odd(const struct xjob *j, int k) {
  return j->oddNode ? cluster_node_of(j->cl, k) == cluster_node_of(j->cl, j->rank) : k == j->rank;
}

/* The rank D28's WARN names when the odd ranks' value differs from the
 * others': the lowest rank that does not hold the value most ranks hold
 * (ties: the value rank 0 holds); -1 when every rank holds one value. */
static int x_odd_one_out(const struct xjob *j) {
  int odd = 0;
  for (int k = 0; k < j->nRanks; k++) odd += x_odd(j, k);
  if (odd == 0 || odd == j->nRanks) return -1;
  int refOdd = odd > j->nRanks - odd || (2 * odd == j->nRanks && x_odd(j, 0));
  for (int k = 0; k < j->nRanks; k++)
    if (x_odd(j, k) != refOdd) return k;
  return -1;
}

/* D25's policy on every rank of a job: NCCOM_RING_NODE_ORDER=network and
 * each node's location (mode as spread_locations'), from the seed's own
 * stream. */
static int x_job_policy(struct xjob *j, unsigned long long seed, int mode) {
  int n = j->nRanks, nodes = j->cl->nNodes;
  struct rng r = {mix(seed ^ 0xD25D27ULL)};
  int *nodeOf = malloc((size_t)n * sizeof(int));
  if (nodeOf == NULL || rank_env_alloc(&j->env, n) != 0) {
    free(nodeOf);
    return -1;
  }
  for (int k = 0; k < n; k++) {
    nodeOf[k] = cluster_node_of(j->cl, k);
    if ((j->env.order[k] = strdup("network")) == NULL) {
      free(nodeOf);
      return -1;
    }
  }
  int bad = spread_locations(&r, mode, nodes, n, nodeOf, &j->env);
  free(nodeOf);
  return bad;
}

/* Node sizes of a spec; the rng goes on to draw the channel orders, so
 * both come from the spec's seed alone. Returns nRanks. */
static int x_sizes(const struct xspec *s, struct rng *r, int *sizes) {
  int n = 0;
  for (int m = 0; m < s->nodes; m++) {
    sizes[m] = s->unequal ? 1 + below(r, s->local) : s->local;
    n += sizes[m];
  }
  return n;
}

static int x_nranks(const struct xspec *s) {
  struct rng r = {s->seed};
  int sizes[64];
  return x_sizes(s, &r, sizes);
}

/* Every rank is handed its node's graph. */
static int x_job_graphs(struct xjob *j) {
  j->nRanks = j->cl->nRanks;
  j->graphOf = malloc((size_t)j->nRanks * sizeof *j->graphOf);
  if (j->graphOf == NULL) return -1;
  for (int r = 0; r < j->nRanks; r++) j->graphOf[r] = j->cl->graphs[cluster_node_of(j->cl, r)];
  return 0;
}

/* Builds the job of a spec: node sizes, a random permutation per node and
 * channel, the corruption reduced into the cluster's ranges. */
static int x_job_from_spec(const struct xspec *s, struct xjob *j) {
  memset(j, 0, sizeof *j);
  struct rng r = {s->seed};
  int sizes[64];
  int n = x_sizes(s, &r, sizes);
  j->cl = cluster_new_numbered(s->nodes, sizes, s->numbering, numbering_seed(s->seed));
  if (j->cl == NULL || x_job_graphs(j) != 0) return -1;
  int perm[NCCL_TOPO_MAX_NODES];
  for (int m = 0; m < s->nodes; m++) {
    struct ncclTopoGraph *g = j->cl->graphs[m];
    int L = sizes[m];
    for (int c = 0; c < s->channels; c++) {
      for (int i = 0; i < L; i++) perm[i] = i;
      for (int i = L - 1; i > 0; i--) {
        int k = below(&r, i + 1), t = perm[i];
        perm[i] = perm[k];
        perm[k] = t;
      }
      for (int i = 0; i < L; i++) g->intra[c * L + i] = cluster_rank(j->cl, m, perm[i]);
    }
    g->nChannels = s->channels;
  }
  j->fill = (unsigned char)s->fill;
  j->kind = s->kind;
  j->rank = s->rank % n;
  j->channel = s->channel % MAXCHANNELS;
  j->value = s->kind == X_DUP || s->kind == X_SWAP || s->kind == X_REC_COPY ? ((s->value % n) + n) % n : s->value;
  j->pod = s->pod;
  j->switchV1 = s->platform;
  if (s->policy && x_job_policy(j, s->seed, s->policy == 1 ? 1 : 2 + (int)(mix(s->seed) % 2)) != 0) return -1;
  j->carries = s->policy || podOrderNode || s->platform;
  /* D28's per-rank inputs */
  j->oddNode = (j->kind == X_PLATFORM || j->kind == X_ENABLEPOD || j->kind == X_KANGA || j->kind == X_GRAPH ||
                j->kind == X_ENV_PLATFORM) &&
               (j->value & 1);
  if (j->kind == X_KANGA) {
    j->kanga = ((unsigned)j->value >> 1) % 5;
    j->oddKanga = (j->kanga + 1 + ((unsigned)j->value >> 4) % 4) % 5;
  }
  if (j->kind == X_GRAPH) {
    /* the odd ranks' graph: their node's, with another NIC on channel 0 */
    int m = cluster_node_of(j->cl, j->rank);
    if ((j->own = malloc(sizeof *j->own)) == NULL) return -1;
    memcpy(j->own, j->cl->graphs[m], sizeof *j->own);
    j->own->inter[0] += 1 + ((unsigned)j->value >> 1) % 7;
    for (int k = 0; k < n; k++)
      if (x_odd(j, k)) j->graphOf[k] = j->own;
  }
  return 0;
}

/* The record's checksums, as include/nccom_ring.h describes them: version
 * 2's four lanes of FNV-1a's arithmetic on whole words, and version 1's
 * FNV-1a over the 64 bytes; the checksum word (+28) counts as 0. The
 * harness's own reading, to write records of either version. */
static uint32_t x_checksum(const unsigned char *rec, int version) {
  uint32_t w[16];
  memcpy(w, rec, sizeof w);
  w[offsetof(struct nccomRingRecord, checksum) / 4] = 0;
  if (version == 1) {
    uint32_t h = 2166136261u;
    for (int i = 0; i < 64; i++) h = (h ^ ((const unsigned char *)w)[i]) * 16777619u;
    return h;
  }
  uint32_t l[4] = {2166136261u, 2166136261u, 2166136261u, 2166136261u};
  for (int i = 0; i < 16; i++) l[i % 4] = (l[i % 4] ^ w[i]) * 16777619u;
  return ((((l[0] * 16777619u) ^ l[1]) * 16777619u ^ l[2]) * 16777619u ^ l[3]) * 16777619u;
}

/* rec, a valid record, as the same rank would carry it under another
 * version of the library: version's number and version's checksum (3 and
 * up: version 2's). */
static void x_rewrite_version(unsigned char *rec, int version) {
  memcpy(rec + offsetof(struct nccomRingRecord, version), &version, 4);
  uint32_t sum = x_checksum(rec, version);
  memcpy(rec + offsetof(struct nccomRingRecord, checksum), &sum, 4);
}

/* The one corruption of the gathered buffer, the same in both libraries;
 * staleChecksum: the checksum word rank j->rank's Preset wrote for another
 * communicator (X_REC_STALE). */
static void x_corrupt(const struct xjob *j, struct ncclTopoRanks *slots, unsigned staleChecksum) {
  struct ncclTopoRanks *f = &slots[j->rank], t;
  unsigned char *rec = (unsigned char *)f + NCCOM_RING_RECORD_OFFSET;
  switch (j->kind) {
  case X_REC_FLIP: rec[((unsigned)j->value) % 64] ^= 0xFF; break;
  case X_REC_COPY: memcpy(rec, (unsigned char *)&slots[j->value] + NCCOM_RING_RECORD_OFFSET, 64); break;
  case X_REC_STALE: memcpy(rec + offsetof(struct nccomRingRecord, checksum), &staleChecksum, 4); break;
  case X_REC_VERSION: x_rewrite_version(rec, j->value & 1 ? 3 : 1); break;
  case X_REC_NONE:
    if (j->value & 1) {
      struct rng r = {mix((uint64_t)(unsigned)j->value)};
      for (int i = 0; i < 64; i++) rec[i] = (unsigned char)next_u64(&r);
      if (memcmp(rec, &(int){NCCOM_RING_RECORD_MAGIC}, 4) == 0) rec[0] ^= 1;
    } else {
      memset(rec, 0, 64);
    }
    break;
  case X_STALE_COUNT: {
    int n = 0;
    while (n < MAXCHANNELS && f->ringRecv[n] >= 0) n++;
    if (!(j->value & 1) && n < MAXCHANNELS) { /* one more channel: what an earlier job left */
      f->ringRecv[n] = f->ringRecv[0], f->ringSend[n] = f->ringSend[0];
      f->ringPrev[n] = f->ringPrev[0], f->ringNext[n] = f->ringNext[0];
    } else {
      f->ringRecv[n - 1] = -1;
    }
    break;
  }
  case X_RECV: f->ringRecv[j->channel] = j->value; break;
  case X_SEND: f->ringSend[j->channel] = j->value; break;
  case X_PREV: f->ringPrev[j->channel] = j->value; break;
  case X_NEXT: f->ringNext[j->channel] = j->value; break;
  case X_DUP: *f = slots[j->value]; break;
  case X_SWAP:
    t = *f;
    *f = slots[j->value];
    slots[j->value] = t;
    break;
  default: break;
  }
  if (j->corrupt) j->corrupt(slots);
}

static void format_xspec(char *out, size_t size, const struct xspec *s) {
  int n = snprintf(out, size, "{.seed = 0x%llxULL, .nodes = %d, .local = %d, .channels = %d", s->seed, s->nodes,
                   s->local, s->channels);
  if (n < 0 || (size_t)n >= size) return;
  if (s->unequal) n += snprintf(out + n, size - (size_t)n, ", .unequal = 1");
  if (s->fill) n += snprintf(out + n, size - (size_t)n, ", .fill = 0x%02x", s->fill);
  if (n < 0 || (size_t)n >= size) return;
  if (s->numbering > 0 && s->numbering < CLUSTER_NUMBERINGS)
    n += snprintf(out + n, size - (size_t)n, ", .numbering = %s", numberingNames[s->numbering]);
  else if (s->numbering)
    n += snprintf(out + n, size - (size_t)n, ", .numbering = %d", s->numbering);
  if (n < 0 || (size_t)n >= size) return;
  if (s->policy) n += snprintf(out + n, size - (size_t)n, ", .policy = %d", s->policy);
  if (s->pod) n += snprintf(out + n, size - (size_t)n, ", .pod = %d", s->pod);
  if (s->platform) n += snprintf(out + n, size - (size_t)n, ", .platform = %d", s->platform);
  if (n < 0 || (size_t)n >= size) return;
  int kind = s->kind >= 0 && s->kind < X_COUNT ? s->kind : 0;
  snprintf(out + n, size - (size_t)n, ", .kind = %s, .rank = %d, .channel = %d, .value = %d}", xKindNames[kind],
           s->rank, s->channel, s->value);
}

static int set_xspec_field(void *target, const char *name, long long v, unsigned long long seed) {
  struct xspec *s = target;
#define FIELD(F) else if (strcmp(name, #F) == 0) s->F = (int)v;
  if (strcmp(name, "seed") == 0) s->seed = seed;
  FIELD(nodes) FIELD(local) FIELD(unequal) FIELD(channels) FIELD(fill) FIELD(kind) FIELD(rank) FIELD(channel)
  FIELD(value) FIELD(numbering) FIELD(policy) FIELD(pod) FIELD(platform)
  else return -1;
#undef FIELD
  return 0;
}

/* Parses what format_xspec prints. */
static int parse_xspec(const char *text, struct xspec *s) {
  memset(s, 0, sizeof *s);
  if (parse_fields(text, xKindNames, X_COUNT, "X_", set_xspec_field, s) != 0) return -1;
  /* The ranges the generator and the harness's buffers are built for. */
  if (s->nodes < 1 || s->nodes > 64 || s->local < 1 || s->local > NCCL_TOPO_MAX_NODES || s->channels < 1 ||
      s->channels > MAXCHANNELS || s->channels * s->local > NCCOM_RING_MAX_INTRA || s->fill < 0 || s->fill > 255 ||
      s->kind < 0 || s->kind >= X_COUNT || s->rank < 0 || s->channel < 0 || s->nodes * s->local > X_MAX_RANKS ||
      s->numbering < 0 || s->numbering >= CLUSTER_NUMBERINGS || s->policy < 0 || s->policy > 2 || s->pod < 0 ||
      s->platform < 0 || s->platform > 1)
    return -1;
  return 0;
}

/* A random valid cluster of at most 64 ranks and one random corruption:
 * one ring field of one rank and channel (in range, -1 or out of range;
 * now and then a channel past the graph's, whose -1 marks D23 reads), or a
 * fragment in two slots, or two slots swapped. */
static void random_xspec(uint64_t seed, struct xspec *s) {
  struct rng r = {seed};
  memset(s, 0, sizeof *s);
  s->seed = next_u64(&r);
  s->nodes = 1 + below(&r, 8);
  s->local = 1 + below(&r, 8);
  s->unequal = below(&r, 10) == 0;
  /* few channels half the time: a corrupted channel is then more often the
   * one the diagnosis reads first */
  s->channels = below(&r, 2) ? 1 + below(&r, 4) : 1 + below(&r, MAXCHANNELS);
  static const int fills[] = {0x00, 0xA5, 0xFF};
  s->fill = fills[below(&r, 3)];
  int n = x_nranks(s);
  s->kind = X_RECV + below(&r, 6);
  if (n == 1 && s->kind >= X_DUP) s->kind = X_RECV + below(&r, 4); /* one slot: nothing to copy or swap */
  s->rank = below(&r, n);
  s->channel = below(&r, 10) == 0 ? below(&r, MAXCHANNELS) : below(&r, s->channels);
  if (s->kind >= X_DUP) {
    s->value = (s->rank + 1 + below(&r, n - 1)) % n; /* another slot */
  } else {
    int p = below(&r, 100);
    s->value = p < 60 ? below(&r, n) : p < 75 ? -1 : p < 90 ? n + below(&r, 3) : -2 - below(&r, 2);
  }
  s->numbering = random_numbering(&r);
  /* D25, D27, drawn last so that the draws above stay as they were: the
   * policy on every rank in 4 jobs of 10 (a quarter of those with mixed,
   * missing or invalid locations), and then a third of the time a
   * corruption of one record instead (now and then without the policy,
   * where it must change nothing); one job in ten on TRN3-SwitchV1 (where
   * the policy is not applied); with --pod-order node, enablePod in a
   * quarter of the jobs. */
  s->policy = below(&r, 10) < 4 ? 1 + (below(&r, 4) == 0) : 0;
  if (below(&r, s->policy ? 3 : 20) == 0) {
    s->kind = n > 1 ? X_REC_FLIP + below(&r, 3) : X_REC_FLIP;
    s->value = s->kind == X_REC_COPY ? (s->rank + 1 + below(&r, n - 1)) % n : below(&r, 64);
  }
  s->platform = below(&r, 10) == 0;
  if (podOrderNode) s->pod = below(&r, 4) == 0;
  /* D28, drawn after all of the above: a record corruption on
   * TRN3-SwitchV1 now and then (where every record is needed), and in a
   * quarter of the jobs of two or more ranks one of D28's kinds instead
   * of the corruption drawn: one rank's (or node's) own platform,
   * enablePod, nKangaRingChannels (mostly on SwitchV1, where it counts)
   * or graph; NCCOM_RING_PLATFORM on that rank (or node) alone, its
   * Preset run in a process without the hooks; a fragment whose channel
   * count is not its record's; a record of another version; a fragment
   * without the magic. */
  if (s->kind >= X_REC_FLIP && below(&r, 4) == 0) s->platform = 1;
  if (n > 1 && below(&r, 4) == 0) {
    static const int kinds[] = {X_PLATFORM,    X_ENABLEPOD,   X_KANGA,    X_GRAPH,
                                X_STALE_COUNT, X_REC_VERSION, X_REC_NONE, X_ENV_PLATFORM};
    s->kind = kinds[below(&r, sizeof kinds / sizeof kinds[0])];
    s->value = below(&r, 1 << 12);
    s->platform = s->kind == X_KANGA ? below(&r, 4) != 0 : below(&r, 4) == 0;
  }
}

/* ---- running one job ---- */

/* One library's verdict: rank 0's outcome, which every other rank's must
 * equal. */
struct xverdict {
  ncclResult_t res;
  char shared[8192]; /* the log lines every rank prints alike, "[rank] NCCL " cut off */
  char warn[1024];   /* the first WARN's text, after "NCCL WARN " */
  char log[32768];   /* rank 0's whole log (its walk lines, "Walks on rank 0") */
  int nChannels, nNodes;
  int ringsOk; /* rank 0's channels [0, ringsOk) are checked cycles */
  int *heads; /* [nRanks] nodesFirstRank */
  int *ring;  /* [MAXCHANNELS * nRanks] rank 0's userRanks, channel by channel */
  int *pos;   /* [MAXCHANNELS * nRanks] where each rank stands in ring */
};

static struct xverdict xv[2];
static int xSplit, xDiff;                  /* this job's split verdicts, differences */
static char xSplitText[2048], xDiffText[2048]; /* the first of each */

/* Records a split verdict (split) or a difference; the first of each is
 * kept for the report. Returns 1. */
__attribute__((format(printf, 2, 3))) static int x_fail(int split, const char *fmt, ...) {
  int *count = split ? &xSplit : &xDiff;
  if ((*count)++ > 0) return 1;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(split ? xSplitText : xDiffText, sizeof xSplitText, fmt, ap);
  va_end(ap);
  return 1;
}

static char xRaw[65536];

/* The log lines of the call that just returned, "[rank] NCCL KIND text"
 * each (host, pid and tid cut off). */
static void x_capture(char *lines, size_t size) {
  drain(xRaw, sizeof xRaw);
  warn_text(xRaw, lines, size);
  set_call(currentCall, -1);
}

/* The start of D27's WARN to a rank whose own graph has more channels. */
#define OWN_GRAPH_WARN "ncclTopoPostset: this rank's graph has "
/* The start of D25's summary, which rank 0 alone prints. */
#define ORDER_SUMMARY "ncclTopoPostset: NCCOM_RING_NODE_ORDER=network: nodes"

/* Splits a call's log into what every rank must print alike (WARN and INFO
 * lines with "[rank] NCCL " cut off) and the number of lines rank 0 alone
 * prints: the Channel lines (D17, "Walks on rank 0") and D25's summary of
 * the node order; warn gets the first WARN's
 * text. D27's WARN to a rank whose own graph has more channels than the
 * job's is about that rank alone and is left out of both (its result code
 * is every rank's). */
static void x_split_log(const char *lines, char *shared, size_t ssize, char *warn, size_t wsize, int *channelLines) {
  size_t n = 0;
  shared[0] = warn[0] = '\0';
  *channelLines = 0;
  for (const char *line = lines; *line;) {
    const char *end = strchr(line, '\n');
    if (end == NULL) end = line + strlen(line);
    const char *kind = strstr(line, "] NCCL ");
    if (kind && kind < end) {
      kind += strlen("] NCCL ");
      const char *text = kind + strlen("WARN ");
      int isWarn = strncmp(kind, "WARN ", 5) == 0;
      if (!isWarn && (strncmp(text, "Channel ", 8) == 0 || strncmp(text, ORDER_SUMMARY, strlen(ORDER_SUMMARY)) == 0)) {
        (*channelLines)++;
      } else if (isWarn && strncmp(text, OWN_GRAPH_WARN, strlen(OWN_GRAPH_WARN)) == 0) {
        /* rank-relative (D27) */
      } else {
        if (isWarn && warn[0] == '\0') snprintf(warn, wsize, "%.*s", (int)(end - text), text);
        int w = snprintf(shared + n, ssize - n, "%.*s\n", (int)(end - kind), kind);
        if (w > 0 && (size_t)w < ssize - n) n += (size_t)w;
      }
    }
    line = *end ? end + 1 : end;
  }
}

/* strcpy, cut to size. */
static void copy_text(char *dst, size_t size, const char *src) {
  size_t n = strnlen(src, size - 1);
  memcpy(dst, src, n);
  dst[n] = '\0';
}

/* The rank a Postset WARN names ("ncclTopoPostset: rank S, ..." of the
 * checks and the diagnosis; "(rank S did not)" of P12; "... of rank S is"
 * of P13 and P14; "rank S does not ask for it" of D25's case 4), or -1. */
static int x_named_rank(const char *warn) {
  int s;
  const char *at;
  if (sscanf(warn, "ncclTopoPostset: rank %d", &s) == 1) return s;
  if ((at = strstr(warn, "(rank ")) && sscanf(at, "(rank %d did not)", &s) == 1) return s;
  if ((at = strstr(warn, " of rank ")) && sscanf(at, " of rank %d is", &s) == 1) return s;
  if ((at = strstr(warn, "is not applied: rank ")) && sscanf(at, "is not applied: rank %d does", &s) == 1) return s;
  return -1;
}

static void x_comm_init(const struct xjob *j, int rank, struct ncclComm *c) {
  memset(c, 0x5A, sizeof *c); /* canaries wherever the ring stage must not care */
  int m = cluster_node_of(j->cl, rank);
  for (int ch = 0; ch < MAXCHANNELS; ch++) {
    c->channels[ch].ring.userRanks = NULL;
    c->channels[ch].ring.devUserRanks = (int *)(uintptr_t)(0xDE000000u + (unsigned)ch); /* never touched */
  }
  c->topo = &j->cl->systems[m];
  c->rank = rank;
  c->nRanks = j->nRanks;
  c->localRanks = j->cl->localRanks[m];
  /* The rank's own state as its Preset sees it (D28: it travels in the
   * record): enablePod, nKangaRingChannels (with rows of its own, which
   * SwitchV1 lifts into the fragment) and the family hook's answer. */
  int odd = x_odd(j, rank);
  c->enablePod = j->kind == X_ENABLEPOD && odd ? !j->pod : j->pod;
  c->nKangaRingChannels = j->kind == X_KANGA && odd ? j->oddKanga : j->kanga;
  for (int k = 0; k < MAX_KANGA_PATHS; k++)
    for (int i = 0; i < 4 * 16; i++) c->kangaRing[k][i] = 1000 * rank + 100 * k + i;
  hookSwitchV1 = j->switchV1 ^ (j->kind == X_PLATFORM && odd);
}

/* Checks rank r's Postset in library lib against rank 0's (or, for rank 0,
 * records it): the one verdict of D24. Returns 1 on a split. */
static int x_check_rank(int lib, int r, ncclResult_t res, const char *lines, const struct ncclComm *comm,
                         const int *heads, int nch, int nnodes, struct ncclTopoRanks *const *all) {
  static char shared[8192], warn[1024];
  struct xverdict *v = &xv[lib];
  int n = comm->nRanks, channelLines;
  const char *who = libs[lib].role;
  x_split_log(lines, shared, sizeof shared, warn, sizeof warn, &channelLines);
  if (r == 0) {
    v->res = res;
    copy_text(v->shared, sizeof v->shared, shared);
    copy_text(v->warn, sizeof v->warn, warn);
    copy_text(v->log, sizeof v->log, lines);
    v->nChannels = nch;
    v->nNodes = nnodes;
    v->ringsOk = 0;
    memcpy(v->heads, heads, (size_t)n * sizeof(int));
  } else {
    if (channelLines > 0)
      return x_fail(1, "%s: rank %d printed %d Channel lines or node-order summaries; only rank 0 prints them (D17, "
                    "\"Walks on rank 0\", D25)", who, r, channelLines);
    if (res != v->res || strcmp(shared, v->shared) != 0)
      return x_fail(1,
                    "split verdict in the %s: rank 0 returned %d, rank %d returned %d\n"
                    "  rank 0 printed: %s  rank %d printed: %s",
                    who, (int)v->res, r, (int)res, v->shared[0] ? v->shared : "(nothing)\n", r,
                    shared[0] ? shared : "(nothing)\n");
  }
  if (res != ncclSuccess) return 0;

  if (nch < 1 || nch > MAXCHANNELS || comm->nChannels != nch || nnodes < 1 || nnodes > n || comm->nNodes != nnodes)
    return x_fail(1, "%s: rank %d succeeded with *nChannels %d (comm %d), *nNodes %d (comm %d)", who, r, nch,
                  comm->nChannels, nnodes, comm->nNodes);
  if (r > 0 && (nch != v->nChannels || nnodes != v->nNodes ||
                memcmp(heads, v->heads, (size_t)nnodes * sizeof(int)) != 0))
    return x_fail(1,
                  "split verdict in the %s: rank 0 has %d channels and %d nodes, rank %d %d channels and %d nodes "
                  "(or other node heads)",
                  who, v->nChannels, v->nNodes, r, nch, nnodes);
  /* D8: a rank is in the node keyed by its own fragment's ringRecv[0]. */
  if (comm->node < 0 || comm->node >= nnodes || heads[comm->node] != all[r]->ringRecv[0])
    return x_fail(1, "%s: rank %d is in node %d, whose head is not its ringRecv[0] %d", who, r, comm->node,
                  all[r]->ringRecv[0]);
  for (int c = 0; c < nch; c++) {
    const struct ncclRing *ring = &comm->channels[c].ring;
    const int *u = ring->userRanks;
    int *ring0 = v->ring + (size_t)c * (size_t)n, *pos0 = v->pos + (size_t)c * (size_t)n;
    if (u == NULL) return x_fail(1, "%s: rank %d succeeded without channels[%d].ring.userRanks", who, r, c);
    if (u[0] != r) return x_fail(1, "%s: rank %d's channel %d userRanks starts at %d", who, r, c, u[0]);
    if (ring->prev != u[n - 1] || ring->next != u[1 % n])
      return x_fail(1, "%s: rank %d channel %d: prev %d and next %d, but its userRanks ends with %d and goes on to %d",
                    who, r, c, ring->prev, ring->next, u[n - 1], u[1 % n]);
    if (r == 0) {
      /* rank 0's ring must be a cycle through every rank once */
      for (int i = 0; i < n; i++) pos0[i] = -1;
      for (int i = 0; i < n; i++) {
        if (u[i] < 0 || u[i] >= n || pos0[u[i]] >= 0)
          return x_fail(1, "%s: rank 0's channel %d userRanks[%d] is %d: not a cycle through every rank", who, c,
                        i, u[i]);
        pos0[u[i]] = i;
        ring0[i] = u[i];
      }
      v->ringsOk = c + 1;
      continue;
    }
    if (c >= v->ringsOk) break; /* rank 0's ring is already reported */
    /* the same cycle as rank 0's, started at this rank */
    for (int i = 0, at = pos0[r]; i < n; i++)
      if (u[i] != ring0[(at + i) % n])
        return x_fail(1, "split verdict in the %s: channel %d: rank %d's userRanks[%d] is %d, rank 0's ring gives %d", who,
                      c, r, i, u[i], ring0[(at + i) % n]);
  }
  return 0;
}

/* X_ENV_PLATFORM: the NCCOM_RING_PLATFORM values of the odd ranks
 * (value >> 1) % 5, and the platform each names (D14, D28: 0 generic, 1
 * TRN3-SwitchV1, 2 unknown; empty is unset: generic, with the "assuming a
 * generic platform" INFO line). */
static const char *const xEnvPlatforms[5] = {"trn3-switchv1", "generic", "trn4\tswitchv2", "TRN3-SwitchV1", ""};
static const int xEnvPlatformKind[5] = {1, 0, 2, 1, 0};

static const char *presetEnvHelper; /* conformance-preset-env beside this program (main) */

static void x_write_value(FILE *f, const char *v) {
  int len = v ? (int)strlen(v) : -1;
  fwrite(&len, sizeof len, 1, f);
  if (v) fwrite(v, 1, (size_t)len, f);
}

/* X_ENV_PLATFORM: library lib's Presets of the job's odd ranks, in rank
 * order, in one process of their own, the helper preset_env.c, which
 * defines no platform hook, with NCCOM_RING_PLATFORM set as the job says
 * and otherwise this process's environment; each with the rank's
 * NCCOM_RING_NODE_ORDER and NCCOM_RING_LOCATION, into comms[r] and
 * slots[r] as prepared, outcome and log into out[r]. */
static void x_presets_in_child(const struct xjob *j, int lib, struct ncclComm *comms, struct ncclTopoRanks *slots,
                               struct outcome *out) {
  static char inPath[] = "/tmp/nccomring-preset-env-in-XXXXXX", outPath[] = "/tmp/nccomring-preset-env-out-XXXXXX";
  static int made;
  if (!made) {
    int a = mkstemp(inPath), b = mkstemp(outPath);
    if (a < 0 || b < 0) fatal("conformance: mkstemp: %s\n", strerror(errno));
    close(a), close(b);
    made = 1;
  }
  if (access(presetEnvHelper, X_OK) != 0)
    fatal("conformance: %s: %s (X_ENV_PLATFORM runs Presets in it; make builds it beside conformance)\n",
          presetEnvHelper, strerror(errno));
  FILE *in = fopen(inPath, "w");
  if (in == NULL) fatal("conformance: %s: %s\n", inPath, strerror(errno));
  int count = 0;
  for (int r = 0; r < j->nRanks; r++) count += x_odd(j, r);
  fwrite(&count, sizeof count, 1, in);
  for (int r = 0; r < j->nRanks; r++) {
    if (!x_odd(j, r)) continue;
    fwrite(&comms[r], sizeof comms[r], 1, in);
    fwrite(j->graphOf[r], sizeof *j->graphOf[r], 1, in);
    fwrite(&slots[r], sizeof slots[r], 1, in);
    int has = j->env.n > 0 && r < j->env.n;
    x_write_value(in, has ? j->env.order[r] : NULL);
    x_write_value(in, has ? j->env.location[r] : NULL);
  }
  if (ferror(in) || fclose(in) != 0) fatal("conformance: %s: write failed\n", inPath);
  /* The environment: this process's, NCCOM_RING_PLATFORM replaced. */
  size_t n = 0;
  while (environ[n]) n++;
  char **envp = malloc((n + 2) * sizeof *envp), *var = NULL;
  if (envp == NULL ||
      asprintf(&var, "NCCOM_RING_PLATFORM=%s", xEnvPlatforms[((unsigned)j->value >> 1) % 5]) < 0)
    fatal("conformance: out of memory\n");
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (strncmp(environ[i], "NCCOM_RING_PLATFORM=", 20) != 0) envp[k++] = environ[i];
  envp[k++] = var;
  envp[k] = NULL;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, inPath, O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, outPath, O_WRONLY | O_TRUNC, 0);
  char *argv[] = {(char *)presetEnvHelper, (char *)libs[lib].path, NULL};
  static char raw[1 << 16];
  drain(raw, sizeof raw); /* the log is empty when the child starts */
  pid_t pid;
  int err = posix_spawn(&pid, presetEnvHelper, &fa, NULL, argv, envp), status = 0;
  posix_spawn_file_actions_destroy(&fa);
  free(var);
  free(envp);
  if (err != 0) fatal("conformance: posix_spawn %s: %s\n", presetEnvHelper, strerror(err));
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) fatal("conformance: waitpid: %s\n", strerror(errno));
  FILE *o = fopen(outPath, "r");
  int bad = !WIFEXITED(status) || WEXITSTATUS(status) != 0 || o == NULL;
  for (int r = 0; r < j->nRanks && !bad; r++) {
    if (!x_odd(j, r)) continue;
    int rc, len;
    bad = fread(&rc, sizeof rc, 1, o) != 1 || fread(&comms[r], sizeof comms[r], 1, o) != 1 ||
          fread(&slots[r], sizeof slots[r], 1, o) != 1 || fread(&len, sizeof len, 1, o) != 1 || len < 0 ||
          (size_t)len >= sizeof raw || fread(raw, 1, (size_t)len, o) != (size_t)len;
    if (bad) break;
    raw[len] = '\0';
    out[r].res = (ncclResult_t)rc;
    warn_text(raw, out[r].warn, sizeof out[r].warn);
  }
  if (o) fclose(o);
  if (bad)
    fatal("conformance: %s %s failed (status 0x%x) in %s\n", presetEnvHelper, libs[lib].path, (unsigned)status,
          xLabel);
}

/* Runs one job through both libraries. Returns 1 when it found a split
 * verdict or a difference (xSplitText, xDiffText), else 0; xv[] holds
 * each library's verdict. */
static int x_run(const struct xjob *j) {
  int n = j->nRanks;
  size_t nn = (size_t)n;
  /* xLabel names the job: an XSPEC ("{...}", replayed by --case) or a
   * named case (replayed by --count 0) */
  case_begin(xLabel, xLabel[0] == '{' ? CASE_SPEC : CASE_FIXED);
  xSplit = xDiff = 0;
  xSplitText[0] = xDiffText[0] = '\0';
  set_platform(&(struct spec){.platform = j->switchV1 ? 1 : 0}); /* no kangaRing rows either way */
  struct ncclComm *comms[2] = {malloc(nn * sizeof(struct ncclComm)), malloc(nn * sizeof(struct ncclComm))};
  struct ncclTopoRanks *slots[2] = {malloc(nn * sizeof(struct ncclTopoRanks)),
                                    malloc(nn * sizeof(struct ncclTopoRanks))};
  struct ncclTopoRanks **all[2] = {malloc(nn * sizeof(void *)), malloc(nn * sizeof(void *))};
  int *heads[2] = {malloc(nn * sizeof(int)), malloc(nn * sizeof(int))};
  struct outcome *envOut[2] = {NULL, NULL}; /* X_ENV_PLATFORM: the odd ranks' Presets */
  static char lines[2][32768];
  for (int lib = 0; lib < 2; lib++) {
    free(xv[lib].heads);
    free(xv[lib].ring);
    free(xv[lib].pos);
    xv[lib].heads = malloc(nn * sizeof(int));
    xv[lib].ring = malloc(MAXCHANNELS * nn * sizeof(int));
    xv[lib].pos = malloc(MAXCHANNELS * nn * sizeof(int));
    xv[lib].res = ncclSuccess;
    xv[lib].warn[0] = xv[lib].shared[0] = xv[lib].log[0] = '\0';
    if (!comms[lib] || !slots[lib] || !all[lib] || !heads[lib] || !xv[lib].heads || !xv[lib].ring || !xv[lib].pos) {
      x_fail(0, "harness out of memory");
      goto out;
    }
  }

  /* Preset on every rank, straight into its slot of the gathered buffer
   * (which holds the fill byte before, as an AllGather buffer holds
   * whatever it held). Every job is valid up to here. */
  /* X_ENV_PLATFORM: the odd ranks' Presets first, in a process of their own
   * per library (as the other ranks' in rank order), taken below. */
  if (j->kind == X_ENV_PLATFORM) {
    for (int lib = 0; lib < 2; lib++) {
      if ((envOut[lib] = calloc(nn, sizeof *envOut[lib])) == NULL) {
        x_fail(0, "harness out of memory");
        goto out;
      }
      for (int r = 0; r < n; r++) {
        if (!x_odd(j, r)) continue;
        x_comm_init(j, r, &comms[lib][r]);
        memset(&slots[lib][r], j->fill, sizeof slots[lib][r]);
      }
      call_begin("ncclTopoPreset (conformance-preset-env)", lib);
      x_presets_in_child(j, lib, comms[lib], slots[lib], envOut[lib]);
      set_call(currentCall, -1);
    }
  }
  for (int r = 0; r < n; r++) {
    struct outcome o[2];
    for (int lib = 0; lib < 2; lib++) {
      all[lib][r] = &slots[lib][r];
      if (envOut[lib] && x_odd(j, r)) {
        o[lib] = envOut[lib][r];
      } else {
        x_comm_init(j, r, &comms[lib][r]);
        memset(&slots[lib][r], j->fill, sizeof slots[lib][r]);
        /* The libraries take a non-const graph; neither writes it (spec §2). */
        struct ncclTopoGraph *g = (struct ncclTopoGraph *)(uintptr_t)j->graphOf[r];
        set_rank_env(&j->env, r);
        call_begin("ncclTopoPreset", lib);
        o[lib].res = libs[lib].api.preset(&comms[lib][r], g, &slots[lib][r]);
        call_end(&o[lib]);
      }
      if (o[lib].res != ncclSuccess) {
        x_fail(0, "ncclTopoPreset on rank %d of a valid cluster: the %s returned %d\n  WARN: %s", r,
               libs[lib].role, (int)o[lib].res, o[lib].warn[0] ? o[lib].warn : "(none)\n");
        goto out;
      }
    }
    if (compare_outcome("ncclTopoPreset", r, &o[0], &o[1]) ||
        compare_bytes("ncclTopoPreset", r, "fragment", &slots[0][r], &slots[1][r], sizeof slots[0][r]) ||
        compare_comms("ncclTopoPreset", r, &comms[0][r], &comms[1][r], NULL, NULL)) {
      x_fail(0, "%s", diffText);
      goto out;
    }
  }
  /* X_REC_STALE: the checksum the corrupted rank's Preset writes for another
   * communicator, the same rank with its graph's NICs changed. */
  unsigned stale[2] = {0, 0};
  if (j->kind == X_REC_STALE) {
    static struct ncclTopoGraph other;
    static struct ncclComm scratchComm;
    struct ncclTopoRanks scratch;
    memcpy(&other, j->graphOf[j->rank], sizeof other);
    other.inter[0] += 1;
    for (int lib = 0; lib < 2; lib++) {
      struct outcome o;
      x_comm_init(j, j->rank, &scratchComm);
      memset(&scratch, j->fill, sizeof scratch);
      set_rank_env(&j->env, j->rank);
      call_begin("ncclTopoPreset", lib);
      o.res = libs[lib].api.preset(&scratchComm, &other, &scratch);
      call_end(&o);
      memcpy(&stale[lib], (unsigned char *)&scratch + NCCOM_RING_RECORD_OFFSET + offsetof(struct nccomRingRecord, checksum), 4);
    }
  }
  clear_rank_env(); /* Postset reads none of them */
  hookSwitchV1 = j->switchV1; /* the job's, should a Postset ask (D28: only when no record is valid) */
  for (int lib = 0; lib < 2; lib++) x_corrupt(j, slots[lib], stale[lib]);
  if (j->beforePostset)
    for (int lib = 0; lib < 2; lib++)
      for (int r = 0; r < n; r++) j->beforePostset(r, &comms[lib][r]);

  /* Postset on every rank: compared between the libraries rank by rank,
   * and within each library against rank 0's verdict. */
  for (int r = 0; r < n; r++) {
    struct outcome o[2];
    int nch[2] = {-777, -777}, nnodes[2] = {-777, -777};
    for (int lib = 0; lib < 2; lib++) {
      for (int i = 0; i < n; i++) heads[lib][i] = -999;
      call_begin("ncclTopoPostset", lib);
      o[lib].res = libs[lib].api.postset(&comms[lib][r], heads[lib], all[lib], &nch[lib], &nnodes[lib]);
      x_capture(lines[lib], sizeof lines[lib]);
    }
    if (!xDiff) {
      if (o[0].res != o[1].res || strcmp(lines[0], lines[1]) != 0)
        x_fail(0, "ncclTopoPostset on rank %d: candidate returned %d, reference %d\n  candidate printed: %s  reference printed: %s",
               r, (int)o[0].res, (int)o[1].res, lines[0][0] ? lines[0] : "(nothing)\n",
               lines[1][0] ? lines[1] : "(nothing)\n");
      else if (compare_comms("ncclTopoPostset", r, &comms[0][r], &comms[1][r], NULL, NULL) ||
               compare_bytes("ncclTopoPostset", r, "nodesFirstRank", heads[0], heads[1], nn * sizeof(int)) ||
               (nch[0] != nch[1] && differ("ncclTopoPostset on rank %d: *nChannels candidate %d, reference %d", r, nch[0], nch[1])) ||
               (nnodes[0] != nnodes[1] && differ("ncclTopoPostset on rank %d: *nNodes candidate %d, reference %d", r, nnodes[0], nnodes[1])))
        x_fail(0, "%s", diffText);
    }
    for (int lib = 0; lib < 2; lib++) {
      x_check_rank(lib, r, o[lib].res, lines[lib], &comms[lib][r], heads[lib], nch[lib], nnodes[lib], all[lib]);
      free_lib_bufs(&comms[lib][r], NULL);
    }
  }
out:
  clear_rank_env();
  for (int lib = 0; lib < 2; lib++) {
    free(envOut[lib]);
    free(comms[lib]);
    free(slots[lib]);
    free(all[lib]);
    free(heads[lib]);
  }
  case_end();
  return xSplit > 0 || xDiff > 0;
}

/* ---- named cases: the six inputs of issue 8, and D23's twist ---- */

/* nodes x local ranks, every channel in the same local order. */
static int x_job_uniform(struct xjob *j, int nodes, int local, int nChannels, const int *order) {
  memset(j, 0, sizeof *j);
  int sizes[64];
  for (int m = 0; m < nodes; m++) sizes[m] = local;
  j->cl = cluster_new(nodes, sizes);
  if (j->cl == NULL) return -1;
  for (int c = 0; c < nChannels; c++) cluster_set_channel(j->cl, c, order, local, -1, -1);
  cluster_set_nchannels(j->cl, nChannels);
  return x_job_graphs(j);
}

/* 1: rank 2's fragment says its predecessor is 0 (it is 1). */
static int x_case_wrong_prev(struct xjob *j) {
  static const int order[] = {0, 1, 2, 3};
  if (x_job_uniform(j, 2, 4, 1, order) != 0) return -1;
  j->kind = X_PREV, j->rank = 2, j->channel = 0, j->value = 0;
  return 0;
}

/* 2: rank 2's own graph differs from its node's in rank 2's prev only
 * (same head, tail and next). */
static int x_case_own_graph(struct xjob *j) {
  static const int order[] = {0, 1, 4, 2, 3}, own[] = {0, 4, 1, 2, 3};
  if (x_job_uniform(j, 2, 5, 1, order) != 0 || (j->own = malloc(sizeof *j->own)) == NULL) return -1;
  memcpy(j->own, j->cl->graphs[0], sizeof *j->own);
  for (int i = 0; i < 5; i++) j->own->intra[i] = own[i]; /* node 0's ranks are 0..4 */
  j->graphOf[2] = j->own;
  return 0;
}

/* 3: the AllGather delivers rank 0's fragment in rank 9's slot too. */
static int x_case_wrong_slot(struct xjob *j) {
  static const int order[] = {0, 7, 6, 5, 4, 3, 2, 1};
  if (x_job_uniform(j, 2, 8, 1, order) != 0) return -1;
  j->kind = X_DUP, j->rank = 9, j->value = 0;
  return 0;
}

/* 4: ranks 0-2 are handed a 14-channel graph (odd channels reversed),
 * rank 3 its first 12 channels, as when a graph file reaches some ranks
 * only. */
static int x_case_counts(struct xjob *j) {
  static const int forward[] = {0, 1, 2, 3}, reversed[] = {0, 3, 2, 1};
  enum { many = 14, few = 12 };
  if (x_job_uniform(j, 1, 4, many, forward) != 0 || (j->own = malloc(sizeof *j->own)) == NULL) return -1;
  for (int c = 1; c < many; c += 2) cluster_set_channel(j->cl, c, reversed, 4, -1, -1);
  memcpy(j->own, j->cl->graphs[0], sizeof *j->own);
  j->own->nChannels = few;
  j->graphOf[3] = j->own;
  return 0;
}

/* D27: rank 3's slot still holds, for channels 12 and 13, what an earlier
 * 14-channel AllGather of this job left there (its ring fields of those
 * channels), as a Preset that does not mark the channels it lacks leaves
 * them: every fragment then says 14 channels, while rank 3's own comm
 * says 12. */
static void x_corrupt_stale_slots(struct ncclTopoRanks *slots) {
  static const int recv[2] = {0, 0}, send[2] = {3, 1}, prev[2] = {2, 0}, next[2] = {-1, 2};
  for (int k = 0; k < 2; k++) {
    slots[3].ringRecv[12 + k] = recv[k], slots[3].ringSend[12 + k] = send[k];
    slots[3].ringPrev[12 + k] = prev[k], slots[3].ringNext[12 + k] = next[k];
  }
}

/* 4b: input 4 with rank 3's stale slots (D27). */
static int x_case_stale_counts(struct xjob *j) {
  if (x_case_counts(j) != 0) return -1;
  j->corrupt = x_corrupt_stale_slots;
  return 0;
}

static void x_corrupt_two_links(struct ncclTopoRanks *slots) {
  slots[52].ringPrev[0] = 53;
  slots[52].ringNext[0] = 54;
}

/* 5: 8x8, rank 52's fragment says prev 53 and next 54 on channel 0. */
static int x_case_two_links(struct xjob *j) {
  static const int order[] = {0, 1, 2, 3, 4, 5, 6, 7};
  if (x_job_uniform(j, 8, 8, 1, order) != 0) return -1;
  j->corrupt = x_corrupt_two_links;
  return 0;
}

/* 6: channel 1's ring 4 -> 5 -> 4 ..., which rank 0 walks at INFO. */
static int x_case_walk(struct xjob *j) {
  static const int order[] = {0, 1, 2, 3};
  if (x_job_uniform(j, 2, 4, 2, order) != 0) return -1;
  j->kind = X_NEXT, j->rank = 5, j->channel = 1, j->value = 4;
  return 0;
}

/* D23: ringRecv[2] = -1 in one fragment says it has 2 channels. */
static int x_case_fewer(struct xjob *j) {
  static const int order[] = {0, 1, 2, 3};
  if (x_job_uniform(j, 2, 4, 3, order) != 0) return -1;
  j->kind = X_RECV, j->rank = 6, j->channel = 2, j->value = -1;
  return 0;
}

/* Input 4's rings: channel c is channel c % n of the graph, n = 12 or,
 * with the stale slots, 14; odd ones reversed. */
static int x_rings_counts(const struct xverdict *v, int n, char *why, size_t size) {
  static const int forward[] = {0, 1, 2, 3}, reversed[] = {0, 3, 2, 1};
  for (int c = 0; c < v->nChannels; c++) {
    const int *want = c % (v->nChannels / 2) % 2 ? reversed : forward;
    for (int i = 0; i < n; i++)
      if (v->ring[c * n + i] != want[i]) {
        snprintf(why, size, "rank 0's channel %d userRanks[%d] is %d, want %d", c, i, v->ring[c * n + i], want[i]);
        return 1;
      }
  }
  return 0;
}

/* ---- named cases of D25 and D27 ---- */

/* The local order of channel c in the D25 cases: forward on even channels,
 * backward from local rank 0 on odd ones. */
static const int d25Forward[] = {0, 1, 2, 3}, d25Backward[] = {0, 3, 2, 1};

/* nodes x 4 ranks, 2 channels (forward, backward); every rank network and
 * the location loc(node) (NULL: unset), its own NCCOM_RING_NODE_ORDER
 * unset when it is `unsetRank`. */
static int x_job_d25(struct xjob *j, int nodes, const char *(*loc)(int node), int unsetRank) {
  if (x_job_uniform(j, nodes, 4, 2, d25Forward) != 0) return -1;
  cluster_set_channel(j->cl, 1, d25Backward, 4, -1, -1);
  int n = j->nRanks;
  if (rank_env_alloc(&j->env, n) != 0) return -1;
  for (int k = 0; k < n; k++) {
    const char *l = loc(cluster_node_of(j->cl, k));
    if ((k != unsetRank && (j->env.order[k] = strdup("network")) == NULL) ||
        (l && (j->env.location[k] = strdup(l)) == NULL))
      return -1;
  }
  j->carries = 1;
  return 0;
}

static const char *alternating(int node) { return node % 2 ? "spine0/leafB" : "spine0/leafA"; }
static const char *grouped(int node) { return node < 4 ? "spine0/leafA" : "spine0/leafB"; }

/* D25's example: 8 nodes of 4 ranks whose locations alternate between
 * spine0/leafA and spine0/leafB in rank order. */
static int x_case_d25_example(struct xjob *j) { return x_job_d25(j, 8, alternating, -1); }
/* The same nodes already grouped in rank order: D8's order, the same rings. */
static int x_case_d25_grouped(struct xjob *j) { return x_job_d25(j, 8, grouped, -1); }
/* One rank of 32, rank 13, without NCCOM_RING_NODE_ORDER. */
static int x_case_d25_one_rank(struct xjob *j) { return x_job_d25(j, 8, alternating, 13); }

/* Network on every rank of 4 nodes, and no location anywhere: every node
 * is placed last, in D8's order, and the summary has no level. */
static const char *nowhere(int node) {
  (void)node;
  return NULL;
}
static int x_case_d25_nowhere(struct xjob *j) { return x_job_d25(j, 4, nowhere, -1); }

/* A node without a location: node 1's ranks 4 and 5 have none, rank 6 an
 * invalid one and rank 7 spine0/leafA, so node 1 has none (3 of 4). */
static const char *one_without(int node) {
  static const char *const loc[] = {"spine0/leafB", NULL, "spine0/leafA", "spine0/leafB"};
  return loc[node];
}
static int x_case_d25_no_location(struct xjob *j) {
  if (x_job_d25(j, 4, one_without, -1) != 0) return -1;
  free(j->env.location[6]);
  free(j->env.location[7]);
  j->env.location[6] = strdup("spine0/leaf?A");
  j->env.location[7] = strdup("spine0/leafA");
  return j->env.location[6] && j->env.location[7] ? 0 : -1;
}

/* D25's plurality and its ties: 4 nodes of 2 ranks whose head is the odd
 * rank (channel order 1 0). Node 0: 0 s0/l1, 1 s0/l0 (a tie: the head's,
 * s0/l0); node 1: 2 s0/l1/deep/er, 3 s0/l1 (the head's; the deeper location
 * is no node's, so the summary stops at level 2); node 2: 4 s0/l0, 5 none
 * (the head's: no location); node 3: both s0/l1. */
static int x_case_d25_ties(struct xjob *j) {
  static const int order[] = {1, 0};
  static const char *const loc[] = {"s0/l1", "s0/l0", "s0/l1/deep/er", "s0/l1", "s0/l0", NULL, "s0/l1", "s0/l1"};
  if (x_job_uniform(j, 4, 2, 1, order) != 0 || rank_env_alloc(&j->env, 8) != 0) return -1;
  for (int k = 0; k < 8; k++)
    if ((j->env.order[k] = strdup("network")) == NULL || (loc[k] && (j->env.location[k] = strdup(loc[k])) == NULL))
      return -1;
  j->carries = 1;
  return 0;
}

/* D27: on TRN3-SwitchV1, node 2 (ranks 8-11) answers JBOG id 4. */
static int x_case_jbog4(struct xjob *j) {
  static const int order[] = {0, 1, 2, 3};
  if (x_job_uniform(j, 4, 4, 1, order) != 0 || rank_env_alloc(&j->env, 16) != 0) return -1;
  j->env.vcore = calloc(16, sizeof(int));
  j->env.jbog = calloc(16, sizeof(int));
  if (!j->env.vcore || !j->env.jbog) return -1;
  for (int k = 0; k < 16; k++) j->env.jbog[k] = k / 4 == 2 ? 4 : 1 + k % 3;
  j->switchV1 = j->carries = 1;
  return 0;
}

/* D27, D28: enablePod on 2x4, and rank 5's record damaged after the
 * AllGather (its checksum word changed): unreadable in a pod job. (A
 * record zeroed, another ring stage's, is not checked: D28.) */
static void x_corrupt_damaged_record(struct ncclTopoRanks *slots) {
  ((unsigned char *)&slots[5])[NCCOM_RING_RECORD_OFFSET + offsetof(struct nccomRingRecord, checksum)] ^= 1;
}
static int x_case_pod_record(struct xjob *j) {
  static const int order[] = {0, 1, 2, 3};
  if (x_job_uniform(j, 2, 4, 1, order) != 0) return -1;
  j->pod = 1;
  j->corrupt = x_corrupt_damaged_record;
  j->carries = podOrderNode;
  return 0;
}

/* ---- named cases of D28: every per-rank input from the gathered bytes ---- */

static const int d28Order[] = {0, 1, 2, 3};

/* 2x4, node 1's family hook says TRN3-SwitchV1 to its Presets. */
static int x_case_platform_node(struct xjob *j) {
  if (x_job_uniform(j, 2, 4, 1, d28Order) != 0) return -1;
  j->kind = X_PLATFORM, j->rank = 4, j->oddNode = 1;
  return 0;
}

/* 2x4, rank 5's comm->enablePod is set for its Preset. */
static int x_case_pod_one_rank(struct xjob *j) {
  if (x_job_uniform(j, 2, 4, 1, d28Order) != 0) return -1;
  j->kind = X_ENABLEPOD, j->rank = 5;
  return 0;
}

/* 2x4, rank 5's comm->enablePod set after its Preset, for Postset only:
 * Postset no longer reads it (D28). */
static void x_pod_for_postset(int rank, struct ncclComm *c) {
  if (rank == 5) c->enablePod = 1;
}
static int x_case_pod_postset_only(struct xjob *j) {
  if (x_job_uniform(j, 2, 4, 1, d28Order) != 0) return -1;
  j->beforePostset = x_pod_for_postset;
  return 0;
}

/* 2x4 on TRN3-SwitchV1, nKangaRingChannels 2 but 3 on rank 1. */
static int x_case_kanga_one_rank(struct xjob *j) {
  if (x_job_uniform(j, 2, 4, 1, d28Order) != 0) return -1;
  j->switchV1 = j->carries = 1;
  j->kind = X_KANGA, j->rank = 1, j->kanga = 2, j->oddKanga = 3;
  return 0;
}

/* 1x4 on TRN3-SwitchV1, nKangaRingChannels 2 on every rank's Preset, and
 * rank 2's comm says 0 at Postset: the records' 2 paths are built (D28). */
static void x_no_paths_for_postset(int rank, struct ncclComm *c) {
  if (rank == 2) c->nKangaRingChannels = 0;
}
static int x_case_kanga_paths(struct xjob *j) {
  if (x_job_uniform(j, 1, 4, 1, d28Order) != 0) return -1;
  j->switchV1 = j->carries = 1;
  j->kanga = 2;
  j->beforePostset = x_no_paths_for_postset;
  return 0;
}

/* 2x4 on TRN3-SwitchV1, rank 3's record as version 1 of the library writes it. */
static int x_case_version1(struct xjob *j) {
  if (x_job_uniform(j, 2, 4, 1, d28Order) != 0) return -1;
  j->switchV1 = j->carries = 1;
  j->kind = X_REC_VERSION, j->rank = 3, j->value = 0;
  return 0;
}

/* 2x4, rank 6's fragment without the magic (another ring stage's). */
static int x_case_no_magic(struct xjob *j) {
  if (x_job_uniform(j, 2, 4, 1, d28Order) != 0) return -1;
  j->kind = X_REC_NONE, j->rank = 6, j->value = 0;
  return 0;
}

/* 2x4, a host that does not gather bytes +832...+895: every record zeroed. */
static void x_corrupt_no_records(struct ncclTopoRanks *slots) {
  for (int r = 0; r < 8; r++) memset((unsigned char *)&slots[r] + NCCOM_RING_RECORD_OFFSET, 0, 64);
}
static int x_case_no_records(struct xjob *j) {
  if (x_job_uniform(j, 2, 4, 1, d28Order) != 0) return -1;
  j->corrupt = x_corrupt_no_records;
  return 0;
}

/* 2x4, NCCOM_RING_PLATFORM="trn4\tswitchv2" for node 1's Presets only,
 * run in a process without the hooks (xEnvPlatforms[2]). */
static int x_case_env_unknown_node(struct xjob *j) {
  if (x_job_uniform(j, 2, 4, 1, d28Order) != 0) return -1;
  j->kind = X_ENV_PLATFORM, j->rank = 4, j->value = 5, j->oddNode = 1;
  return 0;
}

/* 2x4, NCCOM_RING_PLATFORM=trn3-switchv1 for rank 6's Preset only. */
static int x_case_env_switchv1_rank(struct xjob *j) {
  if (x_job_uniform(j, 2, 4, 1, d28Order) != 0) return -1;
  j->kind = X_ENV_PLATFORM, j->rank = 6, j->value = 0;
  return 0;
}

/* D25's grouped 8x4 with network on every rank, and rank 9 (node 2)
 * handed its node's graph with another NIC: another fingerprint. */
static int x_case_graph_one_rank(struct xjob *j) {
  if (x_job_d25(j, 8, grouped, -1) != 0 || (j->own = malloc(sizeof *j->own)) == NULL) return -1;
  memcpy(j->own, j->cl->graphs[2], sizeof *j->own);
  j->own->inter[0] += 1;
  j->graphOf[9] = j->own;
  j->kind = X_GRAPH, j->rank = 9;
  return 0;
}

/* Rank 0's rings follow the node sequence seq: on channel c, node seq[i]'s
 * ranks in its channel c % n order (forward or backward), node after node;
 * and, when leaves, each ring crosses between nodes of other leaves
 * (leaf(node)) exactly `crossings` times, the wrap-around included. */
static int x_rings_follow(const struct xverdict *v, int n, const int *seq, int nodes, const char *(*leaf)(int),
                          int crossings, char *why, size_t size) {
  int graphChannels = v->nChannels / 2;
  for (int c = 0; c < v->nChannels; c++) {
    const int *local = c % graphChannels % 2 ? d25Backward : d25Forward;
    for (int i = 0; i < nodes; i++)
      for (int k = 0; k < 4; k++) {
        int want = 4 * seq[i] + local[k], got = v->ring[c * n + 4 * i + k];
        if (got != want) {
          snprintf(why, size, "rank 0's channel %d userRanks[%d] is %d, want %d (nodes in the order of D25)", c,
                   4 * i + k, got, want);
          return 1;
        }
      }
    int cross = 0;
    for (int i = 0; leaf && i < n; i++) cross += strcmp(leaf(v->ring[c * n + i] / 4), leaf(v->ring[c * n + (i + 1) % n] / 4)) != 0;
    if (leaf && cross != crossings) {
      snprintf(why, size, "rank 0's channel %d crosses between leaves %d times, want %d", c, cross, crossings);
      return 1;
    }
  }
  return 0;
}

static int x_rings_d25_example(const struct xverdict *v, int n, char *why, size_t size) {
  static const int seq[] = {0, 2, 4, 6, 1, 3, 5, 7};
  return x_rings_follow(v, n, seq, 8, alternating, 2, why, size);
}
static int x_rings_d25_rank_order(const struct xverdict *v, int n, char *why, size_t size) {
  static const int seq[] = {0, 1, 2, 3, 4, 5, 6, 7};
  return x_rings_follow(v, n, seq, 8, NULL, 0, why, size);
}
static int x_rings_d25_nowhere(const struct xverdict *v, int n, char *why, size_t size) {
  static const int seq[] = {0, 1, 2, 3};
  return x_rings_follow(v, n, seq, 4, NULL, 0, why, size);
}
static int x_rings_d25_no_location(const struct xverdict *v, int n, char *why, size_t size) {
  static const int seq[] = {0, 3, 2, 1};
  return x_rings_follow(v, n, seq, 4, NULL, 0, why, size);
}

struct xnamed {
  const char *title;
  int (*build)(struct xjob *j);
  int fill;          /* the gathered buffer's bytes before Preset */
  ncclResult_t res;  /* on every rank, in both libraries */
  int rank;          /* failing: the rank the WARN names */
  int channels;      /* succeeding: *nChannels */
  const char *walk;  /* failing: rank 0's INFO line, printed before its WARN; or NULL */
  int (*rings)(const struct xverdict *v, int n, char *why, size_t size); /* succeeding: or NULL */
  const char *warn;  /* succeeding: the one WARN every rank prints ("" none), or NULL: not checked */
  const char *info;  /* an INFO line rank 0 prints, or NULL */
  int podRank;       /* >= 0: the rank the WARN names with --pod-order node (else `rank`) */
};

/* Issue 8's six inputs, named after what they show, and D23's twist. */
static const struct xnamed xNamed[] = {
    {"1: 2x4, rank 2's ringPrev[0] = 0: every rank fails naming rank 2",
     x_case_wrong_prev, 0x00, ncclInternalError, 2, 0, NULL, NULL, NULL, NULL, -1},
    {"2: 2x5, rank 2's own graph moves only its prev: every rank fails naming rank 2",
     x_case_own_graph, 0x00, ncclInternalError, 2, 0, NULL, NULL, NULL, NULL, -1},
    {"3: 2x8, rank 0's fragment also in rank 9's slot: every rank fails naming rank 9",
     x_case_wrong_slot, 0x00, ncclInternalError, 9, 0, NULL, NULL, NULL, NULL, -1},
    {"4: 1x4, 14-channel graphs and one 12-channel graph, buffer zeroed: every rank has 24 channels",
     x_case_counts, 0x00, ncclSuccess, -1, 24, NULL, x_rings_counts, NULL, NULL, -1},
    {"4: 1x4, 14-channel graphs and one 12-channel graph, buffer 0xA5: every rank has 24 channels",
     x_case_counts, 0xA5, ncclSuccess, -1, 24, NULL, x_rings_counts, NULL, NULL, -1},
    {"4b: 1x4, input 4 with rank 3's slot stale in channels 12-13 (14 channels, its record 12): every rank fails "
     "naming rank 3 (D28)",
     x_case_stale_counts, 0x00, ncclInternalError, 3, 0, NULL, NULL,
     "ncclTopoPostset: rank 3's fragment has 14 channels, but its record says its graph has 12: the fragment is "
     "not what its ncclTopoPreset wrote (D28)", NULL, -1},
    {"5: 8x8, rank 52 says prev 53 and next 54: every rank fails naming rank 52",
     x_case_two_links, 0x00, ncclInternalError, 52, 0, NULL, NULL, NULL, NULL, -1},
    {"6: 2x4, channel 1 cycles 4 5 4: rank 0 prints the walk before its WARN",
     x_case_walk, 0x00, ncclInternalError, 5, 0, "Channel 01/02 :    0   1   2   3   4   5   4   5", NULL, NULL, NULL, -1},
    {"D23, D28: 2x4x3, rank 6's ringRecv[2] = -1, fewer channels than its record: every rank fails naming rank 6",
     x_case_fewer, 0x00, ncclInternalError, 6, 0, NULL, NULL,
     "ncclTopoPostset: rank 6's fragment has 2 channels, but its record says its graph has 3: the fragment is not "
     "what its ncclTopoPreset wrote (D28)", NULL, -1},
    {"D25: 8x4 alternating spine0/leafA and spine0/leafB, network on every rank: every rank succeeds, "
     "each ring crosses between the leaves twice",
     x_case_d25_example, 0x00, ncclSuccess, -1, 4, NULL, x_rings_d25_example, "",
     "ncclTopoPostset: NCCOM_RING_NODE_ORDER=network: nodes 0:0 2:8 4:16 6:24 1:4 3:12 5:20 7:28; per ring, "
     "level 1: 0 crossings of 1 groups, level 2: 2 crossings of 2 groups", -1},
    {"D25: 8x4 already grouped by leaf in rank order: the rings of D8's order",
     x_case_d25_grouped, 0x00, ncclSuccess, -1, 4, NULL, x_rings_d25_rank_order, "",
     "ncclTopoPostset: NCCOM_RING_NODE_ORDER=network: nodes 0:0 1:4 2:8 3:12 4:16 5:20 6:24 7:28; per ring, "
     "level 1: 0 crossings of 1 groups, level 2: 2 crossings of 2 groups", -1},
    {"D25: rank 13 of 32 without NCCOM_RING_NODE_ORDER: every rank stitches in rank order with one WARN naming it",
     x_case_d25_one_rank, 0xA5, ncclSuccess, 13, 4, NULL, x_rings_d25_rank_order,
     "ncclTopoPostset: NCCOM_RING_NODE_ORDER=network is not applied: rank 13 asks for rank, unlike rank 0 (asks "
     "for network, the most common): network on 31 ranks, rank on 1, no valid record on 0: stitching in rank "
     "order (D9) on every rank", NULL, -1},
    {"D25: 4x4, node 1 without a location (3 of its 4 ranks): placed last, one WARN naming its head",
     x_case_d25_no_location, 0x00, ncclSuccess, -1, 4, NULL, x_rings_d25_no_location,
     "ncclTopoPostset: NCCOM_RING_NODE_ORDER=network: node 1 (head rank 4) has no location (1 of 4 nodes have "
     "none, NCCOM_RING_LOCATION unset or invalid on most of their ranks): they come after all others, in rank order",
     "ncclTopoPostset: NCCOM_RING_NODE_ORDER=network: nodes 0:0 3:12 2:8 1:4; per ring, level 1: 2 crossings of "
     "2 groups, level 2: 3 crossings of 3 groups", -1},
    {"D25: 4x2 headed by their odd ranks, ties in the plurality: the head's location (none on node 2, placed last)",
     x_case_d25_ties, 0x00, ncclSuccess, -1, 2, NULL, NULL,
     "ncclTopoPostset: NCCOM_RING_NODE_ORDER=network: node 2 (head rank 5) has no location (1 of 4 nodes have "
     "none, NCCOM_RING_LOCATION unset or invalid on most of their ranks): they come after all others, in rank order",
     "ncclTopoPostset: NCCOM_RING_NODE_ORDER=network: nodes 0:1 1:3 3:7 2:5; per ring, level 1: 2 crossings of 2 "
     "groups, level 2: 3 crossings of 3 groups", -1},
    {"D25: 4x4, network on every rank and no location anywhere: D8's rings, one WARN, a summary without levels",
     x_case_d25_nowhere, 0x00, ncclSuccess, -1, 4, NULL, x_rings_d25_nowhere,
     "ncclTopoPostset: NCCOM_RING_NODE_ORDER=network: node 0 (head rank 0) has no location (4 of 4 nodes have "
     "none, NCCOM_RING_LOCATION unset or invalid on most of their ranks): they come after all others, in rank order",
     "ncclTopoPostset: NCCOM_RING_NODE_ORDER=network: nodes 0:0 1:4 2:8 3:12; per ring", -1},
    {"D27: 4x4 on TRN3-SwitchV1, node 2 answers JBOG id 4: every rank fails naming rank 8",
     x_case_jbog4, 0x00, ncclInternalError, 8, 0, NULL, NULL, NULL, NULL, -1},
    {"D27, D28: 2x4 with enablePod, rank 5's record damaged: every rank fails naming rank 5 (unreadable in a pod "
     "job, before the pod order)",
     x_case_pod_record, 0x00, ncclInternalError, 5, 0, NULL, NULL, NULL, NULL, -1},
    {"D28: 2x4, node 1's family hook says TRN3-SwitchV1: every rank fails naming rank 4 (a 4/4 split: rank 0's is "
     "the reference)",
     x_case_platform_node, 0x00, ncclInternalError, 4, 0, NULL, NULL,
     "ncclTopoPostset: rank 4 has platform trn3-switchv1, unlike rank 0 (platform generic, the most common): "
     "generic on 4 ranks, trn3-switchv1 on 4 ranks; every rank must run on one platform (D28)", NULL, -1},
    {"D28: 2x4, comm->enablePod on rank 5's Preset only: every rank fails naming rank 5",
     x_case_pod_one_rank, 0x00, ncclInternalError, 5, 0, NULL, NULL,
     "ncclTopoPostset: rank 5 has enablePod 1, unlike rank 0 (enablePod 0, the most common): 0 on 7 ranks, 1 on "
     "1 rank; every rank must set comm->enablePod alike (D28)", NULL, -1},
    {"D28: 2x4, comm->enablePod set on rank 5 for Postset only: not read, every rank succeeds",
     x_case_pod_postset_only, 0x00, ncclSuccess, -1, 2, NULL, NULL, "", NULL, -1},
    {"D28: 2x4 on TRN3-SwitchV1, nKangaRingChannels 3 on rank 1, 2 elsewhere: every rank fails naming rank 1",
     x_case_kanga_one_rank, 0x00, ncclInternalError, 1, 0, NULL, NULL,
     "ncclTopoPostset: rank 1 has nKangaRingChannels 3, unlike rank 0 (nKangaRingChannels 2, the most common): 2 "
     "on 7 ranks, 3 on 1 rank; every rank on TRN3-SwitchV1 must have the same count (D28)", NULL, -1},
    {"D28: 1x4 on TRN3-SwitchV1, nKangaRingChannels 2 at Preset, 0 in rank 2's comm at Postset: the records' 2 "
     "paths on every rank",
     x_case_kanga_paths, 0x00, ncclSuccess, -1, 2, NULL, NULL, "", "built 2 kangaring paths", -1},
    {"D28: 2x4 on TRN3-SwitchV1, rank 3's record of version 1: every rank fails naming rank 3 and the version",
     x_case_version1, 0x00, ncclInternalError, 3, 0, NULL, NULL,
     "ncclTopoPostset: rank 3's record is unreadable (version 1, this library reads version 2; 1 of 8 records "
     "are): on TRN3-SwitchV1 every rank's record is needed (D28)", NULL, -1},
    {"D28: 2x4, rank 6's fragment without the magic (another ring stage): every rank succeeds with one INFO",
     x_case_no_magic, 0x00, ncclSuccess, -1, 2, NULL, NULL, "",
     "ncclTopoPostset: rank 6's fragment carries no record of this library (1 of 8 fragments: another ring stage, "
     "such as libnccom's own): not checked here, their own library checks them (D28)", -1},
    {"D28: 2x4, no record gathered: every rank succeeds in rank order with one WARN",
     x_case_no_records, 0xA5, ncclSuccess, -1, 2, NULL, NULL,
     "ncclTopoPostset: no fragment holds a valid record of this library (0 of 8 carry its magic, damaged or of "
     "another version): the host did not gather bytes +832...+895 of struct ncclTopoRanks, or its ranks run another "
     "version of this library; each rank takes its platform from itself and nodes are stitched in rank order (D28)",
     NULL, -1},
    {"D28: 2x4, NCCOM_RING_PLATFORM names no platform on node 1 only (no hooks there): every rank fails naming rank 4",
     x_case_env_unknown_node, 0x00, ncclInternalError, 4, 0, NULL, NULL,
     "ncclTopoPostset: rank 4's NCCOM_RING_PLATFORM named no platform (4 of 8 valid records say so): set it to "
     "generic or trn3-switchv1 on every rank (D28)", NULL, -1},
    {"D28: 2x4, NCCOM_RING_PLATFORM=trn3-switchv1 on rank 6 only (no hooks there): every rank fails naming rank 6",
     x_case_env_switchv1_rank, 0x00, ncclInternalError, 6, 0, NULL, NULL,
     "ncclTopoPostset: rank 6 has platform trn3-switchv1, unlike rank 0 (platform generic, the most common): generic "
     "on 7 ranks, trn3-switchv1 on 1 rank; every rank must run on one platform (D28)", NULL, -1},
    {"D28: 8x4 grouped, network on every rank, rank 9 with another graph NIC: rank order, one WARN naming rank 9",
     x_case_graph_one_rank, 0x00, ncclSuccess, 9, 4, NULL, x_rings_d25_rank_order, NULL, NULL, -1},
};

/* Checks a named case's expectation against library lib's verdict. */
static int x_expect(const struct xnamed *k, int lib, int n, char *why, size_t size) {
  const struct xverdict *v = &xv[lib];
  if (v->res != k->res) {
    snprintf(why, size, "returned %d, want %d; WARN: %s", (int)v->res, (int)k->res, v->warn[0] ? v->warn : "(none)");
    return 1;
  }
  int rank = k->podRank >= 0 && podOrderNode ? k->podRank : k->rank;
  if ((k->res != ncclSuccess || rank >= 0) && x_named_rank(v->warn) != rank) {
    snprintf(why, size, "the WARN does not name rank %d: %s", rank, v->warn[0] ? v->warn : "(none)");
    return 1;
  }
  if (k->warn && strcmp(v->warn, k->warn) != 0) {
    snprintf(why, size, "the WARN is \"%s\", want \"%s\"", v->warn, k->warn);
    return 1;
  }
  if (k->info) {
    char want[1024];
    snprintf(want, sizeof want, "NCCL INFO %s\n", k->info);
    if (strstr(v->log, want) == NULL) {
      snprintf(why, size, "rank 0 does not print \"%s\"; it printed:\n%.2500s", k->info, v->log);
      return 1;
    }
  }
  if (k->res == ncclSuccess && v->nChannels != k->channels) {
    snprintf(why, size, "*nChannels is %d, want %d", v->nChannels, k->channels);
    return 1;
  }
  if (k->walk) {
    char want[512];
    snprintf(want, sizeof want, "NCCL INFO %s\n", k->walk);
    const char *at = strstr(v->log, want), *w = strstr(v->log, "NCCL WARN");
    if (at == NULL || w == NULL || at > w) {
      snprintf(why, size, "rank 0 does not print \"%s\" before its WARN; it printed:\n%s", k->walk, v->log);
      return 1;
    }
  }
  return k->rings && k->res == ncclSuccess ? k->rings(v, n, why, size) : 0;
}

/* The rank a failing random job's WARN must name: the corrupted slot's,
 * or, for D28's kinds of one rank's own state, the odd one out. */
static int x_want_named(const struct xjob *j) {
  if (j->kind == X_ENV_PLATFORM && xEnvPlatformKind[((unsigned)j->value >> 1) % 5] == 2)
    for (int k = 0; k < j->nRanks; k++) /* an unknown platform: the lowest rank that has it */
      if (x_odd(j, k)) return k;
  return (j->kind >= X_PLATFORM && j->kind <= X_GRAPH) || j->kind == X_ENV_PLATFORM ? x_odd_one_out(j) : j->rank;
}

/* The one verdict a random job with a record corruption or one of D28's
 * kinds must reach (D25, D27, D28): the WARN names the rank it must, or
 * nothing changes (success without a WARN; with a fragment without the
 * magic, D28's INFO naming it). Where the outcome depends on more than
 * this (a job of one rank, whose lone record decides; pods refused
 * anyway), only the one verdict is asserted. Returns 2 when the WARN
 * named the rank, 1 when nothing changed or nothing more is asserted, 0
 * otherwise (why says what was wanted). */
static int x_expect_random(const struct xjob *j, char *why, size_t size) {
  const struct xverdict *v = &xv[0];
  const int n = j->nRanks, M = j->cl->nNodes, sw = j->switchV1, podJob = j->pod && M > 1, policy = j->env.n > 0;
  const int odd = x_odd_one_out(j);
  const int none = j->kind == X_REC_NONE || (j->kind == X_REC_FLIP && (unsigned)j->value % 64 < 4);
  int named = -2; /* the rank the WARN must name; -1 nothing changes; -2 not asserted */
  switch (j->kind) {
  case X_PLATFORM: named = odd >= 0 ? odd : -2; break;                /* platform */
  case X_ENABLEPOD: named = odd >= 0 && M > 1 ? odd : -2; break;      /* enablePod, more than one node */
  case X_KANGA: named = odd >= 0 && sw ? odd : -2; break;             /* nKangaRingChannels on SwitchV1 */
  case X_GRAPH:                                                       /* the policy's graph fingerprints */
    named = odd >= 0 && policy && !sw && !podJob ? odd : !policy && !podJob ? -1 : -2;
    break;
  case X_STALE_COUNT: named = j->rank; break;                         /* the channel-count match */
  case X_ENV_PLATFORM: {                                              /* an unknown platform, the platform */
    int kind = xEnvPlatformKind[((unsigned)j->value >> 1) % 5];
    named = kind == 2 ? x_want_named(j) : kind != sw && odd >= 0 ? odd : -2;
    break;
  }
  default:
    if (n == 1) named = -2;
    else if (none) /* another ring stage: not checked (D28, pods too), but by the policy */
      named = podJob ? (podOrderNode ? -1 : -2) : policy && !sw ? j->rank : -1;
    else if (j->kind == X_REC_VERSION) /* an error on SwitchV1 and in a pod job, else a WARN naming it */
      named = j->rank;
    else /* unreadable: an error on SwitchV1 and in a pod job; the policy's odd one out */
      named = sw || podJob || policy ? j->rank : -1;
  }
  if (named >= 0) {
    if (x_named_rank(v->warn) != named) {
      snprintf(why, size, "the WARN must name rank %d", named);
      return 0;
    }
    const char *version = j->value & 1 ? "(version 3, this library reads version 2;" : "(version 1, this library reads version 2;";
    if (j->kind == X_REC_VERSION && (sw || podJob) && strstr(v->warn, version) == NULL) {
      snprintf(why, size, "the WARN must say %s", version);
      return 0;
    }
    return 2;
  }
  if (named == -1) {
    if (v->res != ncclSuccess || v->warn[0]) {
      snprintf(why, size, "every rank must succeed without a WARN");
      return 0;
    }
    if (none && strstr(v->shared, "fragment carries no record of this library (1 of ") == NULL) {
      snprintf(why, size, "every rank must print D28's INFO on the fragment without the magic");
      return 0;
    }
  }
  return 1;
}

/* ---- reports, shrinking, the run ---- */

/* --keep-going (make conformance-count): every case runs, none is shrunk;
 * each one that differs prints one line with its kind and the command that
 * replays it, and the run ends with the count by kind. A kind is the call
 * and what differs in it, numbers dropped ("ncclTopoPostset: channels[N]
 * .ring.userRanks[N]"), so that one change to the rings shows as a few
 * kinds however many cases it moves. */
static int keepGoing;
enum { KINDS = 64 };
static struct {
  char text[160];
  long n;
} kinds[KINDS];
static int nKinds;
static long kindsOther; /* differences past the KINDS-th kind */

/* text's first line with each run of digits as "N", up to stop. */
static void kind_of(const char *text, char *out, size_t size) {
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
static void count_difference(const char *kind, const char *replay) {
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
static long print_kinds(const char *what, long cases) {
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


static const char *xArgv0;

static void x_report(const char *label, int pasteable) {
  if (xSplit) printf("conformance: cross-rank SPLIT VERDICT in %s:\n  %s\n", label, xSplitText);
  if (xDiff) printf("conformance: cross-rank DIFFERENCE in %s:\n  %s\n", label, xDiffText);
  if (pasteable)
    printf("conformance: replay with: %s --cross-rank --candidate %s --reference %s%s --case '%s'\n", xArgv0,
           libs[0].path, libs[1].path, podOrderFlag(), label);
}

/* --keep-going: a cross-rank job that split or differed, counted by the
 * kind of its first split verdict, else of its first difference. */
static void x_differs(const char *label, int pasteable) {
  char kind[160], replay[CASE_TEXT + 1024];
  int n = snprintf(kind, sizeof kind, "cross-rank %s", xSplit ? "split verdict: " : "");
  kind_of(xSplit ? xSplitText : xDiffText, kind + n, sizeof kind - (size_t)n);
  snprintf(replay, sizeof replay, "%s --cross-rank --candidate %s --reference %s%s %s%s%s", xArgv0, libs[0].path,
           libs[1].path, podOrderFlag(), pasteable ? "--case '" : "--count 0  # ", label, pasteable ? "'" : "");
  count_difference(kind, replay);
}

static int x_spec_fails(const struct xspec *s) {
  struct xjob j;
  format_xspec(xLabel, sizeof xLabel, s);
  int fails = x_job_from_spec(s, &j) == 0 ? x_run(&j) : 0;
  x_job_free(&j);
  return fails;
}

/* How big a case is: shrinking only ever moves to a strictly smaller one,
 * so it ends. */
static long long xspec_size(const struct xspec *s) {
  long long v = s->value < 0 ? -(long long)s->value : s->value;
  return (long long)s->nodes * s->local * s->channels * 1000000 + (long long)s->rank * 1000 +
         (long long)s->channel * 100 + v * 10 + s->unequal + (s->fill != 0) + s->numbering + s->policy + s->pod +
         s->platform;
}

/* Greedy shrinking: keep any smaller case that still splits or differs. */
static void x_shrink(struct xspec *s) {
  sum.phase = "shrinking the first failing case";
  for (int progress = 1; progress;) {
    progress = 0;
    struct xspec tries[32];
    int n = 0, ranks = x_nranks(s);
#define TRY(FIELD, VALUE)                         \
  if (s->FIELD != (VALUE)) {                      \
    tries[n] = *s;                                \
    tries[n].FIELD = (VALUE);                     \
    n++;                                          \
  }
    TRY(nodes, 1) TRY(nodes, s->nodes / 2 > 0 ? s->nodes / 2 : 1) TRY(nodes, s->nodes > 1 ? s->nodes - 1 : 1)
    TRY(local, 1) TRY(local, s->local / 2 > 0 ? s->local / 2 : 1) TRY(local, s->local > 1 ? s->local - 1 : 1)
    TRY(channels, 1) TRY(channels, s->channels / 2 > 0 ? s->channels / 2 : 1)
    TRY(channels, s->channels > 1 ? s->channels - 1 : 1) TRY(unequal, 0) TRY(fill, 0)
    TRY(numbering, CLUSTER_NODE_MAJOR) TRY(numbering, s->numbering > 1 ? CLUSTER_ROUND_ROBIN : s->numbering)
    TRY(rank, s->rank % ranks) TRY(rank, s->rank / 2) TRY(rank, 0)
    TRY(channel, s->channel % MAXCHANNELS) TRY(channel, s->channel / 2) TRY(channel, 0)
    TRY(value, 0) TRY(value, -1) TRY(value, s->value / 2) TRY(policy, 0) TRY(policy, s->policy > 1 ? 1 : s->policy)
    TRY(pod, 0) TRY(platform, 0)
#undef TRY
    for (int i = 0; i < n && !progress; i++) {
      if (xspec_size(&tries[i]) < xspec_size(s) && x_spec_fails(&tries[i])) {
        *s = tries[i];
        progress = 1;
      }
      sum.shrinkTries++;
      progress_tick();
    }
  }
}

/* The first failing case of the run, for the --json summary. */
static void record_failure(const char *text, int kind, const char *why, const char *more) {
  if (sum.haveFailure) return;
  sum.haveFailure = 1;
  sum.failureKind = kind;
  snprintf(sum.failureCase, sizeof sum.failureCase, "%s", text);
  snprintf(sum.failureDiff, sizeof sum.failureDiff, "%s%s%s", why, why[0] && more[0] ? "\n" : "", more);
}

/* --cross-rank: the named cases, the pasted cases of crossrank.inc, then
 * count random clusters from seed (or only oneCase). Returns the exit
 * status. */
static int cross_rank_main(uint64_t seed, long count, const char *oneCase) {
  struct timespec w0, w1;
  clock_gettime(CLOCK_MONOTONIC, &w0);
  clock_t t0 = clock();
  printf("conformance: candidate %s%s\nconformance: reference %s%s\n", libs[0].path,
         libs[0].mangled ? " (C++ names)" : "", libs[1].path, libs[1].mangled ? " (C++ names)" : "");
  struct xspec one;
  struct xjob j;
  if (oneCase) {
    if (parse_xspec(oneCase, &one) != 0) fatal("conformance: cannot parse --cross-rank --case '%s'\n", oneCase);
    format_xspec(xLabel, sizeof xLabel, &one);
    if (x_job_from_spec(&one, &j) != 0) fatal("conformance: out of memory building the case\n");
    sum.phase = "the --case job";
    int bad = x_run(&j);
    sum.cases = 1;
    sum.splits = xSplit > 0;
    sum.differences = xDiff > 0;
    if (bad) record_failure(xLabel, CASE_SPEC, xSplit ? xSplitText : "", xDiff ? xDiffText : "");
    printf("conformance: cross-rank %s\n  candidate verdict: %d %s\n  reference verdict: %d %s\n", xLabel,
           (int)xv[0].res, xv[0].warn[0] ? xv[0].warn : (xv[0].res == ncclSuccess ? "(success)" : "(no WARN)"),
           (int)xv[1].res, xv[1].warn[0] ? xv[1].warn : (xv[1].res == ncclSuccess ? "(success)" : "(no WARN)"));
    if (xv[0].res == ncclSuccess) printf("  %d channels, %d nodes\n", xv[0].nChannels, xv[0].nNodes);
    x_report(xLabel, 0);
    x_job_free(&j);
    xLabel[0] = '\0';
    return bad;
  }
  printf("conformance: cross-rank, seed 0x%llx (replay: %s --cross-rank --candidate %s --reference %s%s --seed 0x%llx --count %ld)\n",
         (unsigned long long)seed, xArgv0, libs[0].path, libs[1].path, podOrderFlag(), (unsigned long long)seed, count);

  int status = 0;
  sum.phase = "the named cases";
  for (size_t k = 0; k < sizeof xNamed / sizeof xNamed[0]; k++) {
    const struct xnamed *c = &xNamed[k];
    snprintf(xLabel, sizeof xLabel, "case %s", c->title);
    if (c->build(&j) != 0) fatal("conformance: out of memory building cross-rank %s\n", xLabel);
    j.fill = (unsigned char)c->fill;
    int bad = x_run(&j);
    sum.cases++;
    sum.namedRun++;
    sum.splits += xSplit > 0;
    sum.differences += xDiff > 0;
    char why[2][4096] = {"", ""};
    for (int lib = 0; lib < 2 && !bad; lib++) x_expect(c, lib, j.nRanks, why[lib], sizeof why[lib]);
    if (bad && keepGoing) {
      status = 1;
      sum.namedFailed++;
      x_differs(xLabel, 0);
      record_failure(xLabel, CASE_FIXED, xSplit ? xSplitText : "", xDiff ? xDiffText : "");
    } else if (bad || why[0][0] || why[1][0]) {
      status = 1;
      sum.namedFailed++;
      printf("conformance: cross-rank FAIL %s\n", xLabel);
      x_report(xLabel, 0);
      for (int lib = 0; lib < 2; lib++)
        if (why[lib][0]) printf("  %s: %s\n", libs[lib].role, why[lib]);
      if (bad) {
        record_failure(xLabel, CASE_FIXED, xSplit ? xSplitText : "", xDiff ? xDiffText : "");
      } else {
        char whyText[4096];
        snprintf(whyText, sizeof whyText, "%s%.1900s%s%.1900s", why[0][0] ? "candidate: " : "", why[0],
                 why[1][0] ? (why[0][0] ? "\nreference: " : "reference: ") : "", why[1]);
        record_failure(xLabel, CASE_FIXED, whyText, "");
      }
    } else {
      printf("conformance: cross-rank ok   %s\n", xLabel);
    }
    x_job_free(&j);
    progress_tick();
  }

  static const struct xspec pasted[] = {
#include "crossrank.inc"
  };
  sum.phase = "the pasted cases (crossrank.inc)";
  long pastedFailed = 0;
  for (size_t k = 0; k < sizeof pasted / sizeof pasted[0]; k++) {
    int bad = x_spec_fails(&pasted[k]); /* formats xLabel */
    sum.cases++;
    sum.splits += xSplit > 0;
    sum.differences += xDiff > 0;
    if (bad) {
      status = 1;
      pastedFailed++;
      if (keepGoing) x_differs(xLabel, 1);
      else x_report(xLabel, 1);
      record_failure(xLabel, CASE_SPEC, xSplit ? xSplitText : "", xDiff ? xDiffText : "");
    }
    progress_tick();
  }

  long splits = 0, diffs = 0; /* among the random clusters */
  struct xspec first;
  memset(&first, 0, sizeof first);
  int haveFirst = 0;
  sum.phase = "random clusters";
  randomStartNs = now_ns(CLOCK_MONOTONIC);
  for (long i = 0; i < count; i++) {
    struct xspec s;
    /* mix(seed) first: runs with neighbouring seeds draw different
     * clusters, not the same ones shifted by one */
    random_xspec(mix(mix(seed) + (uint64_t)i), &s);
    format_xspec(xLabel, sizeof xLabel, &s);
    if (x_job_from_spec(&s, &j) != 0) fatal("conformance: out of memory building %s\n", xLabel);
    sum.numbered += s.numbering != CLUSTER_NODE_MAJOR;
    if (x_run(&j)) {
      splits += xSplit > 0;
      diffs += xDiff > 0;
      sum.splits += xSplit > 0;
      sum.differences += xDiff > 0;
      if (keepGoing) x_differs(xLabel, 1);
      else if (splits + diffs <= 5) x_report(xLabel, 1); /* the first few in full */
      if (!haveFirst) first = s, haveFirst = 1;
      record_failure(xLabel, CASE_SPEC, xSplit ? xSplitText : "", xDiff ? xDiffText : "");
    }
    if (xv[0].res != ncclSuccess) {
      sum.failed++;
      sum.drawn[j.kind]++;
      sum.internal += xv[0].res == ncclInternalError;
      int s0 = x_named_rank(xv[0].warn);
      sum.numberedFailed += s.numbering != CLUSTER_NODE_MAJOR;
      if (s0 == x_want_named(&j) || (j.kind == X_SWAP && s0 == j.value)) {
        sum.named++;
        sum.numberedNamed += s.numbering != CLUSTER_NODE_MAJOR;
      } else if (sum.missed[j.kind]++ == 0) {
        snprintf(sum.missExample[j.kind], sizeof sum.missExample[j.kind], "%s: %s", xLabel, xv[0].warn);
      }
    } else if (xv[0].nChannels < (2 * s.channels < MAXCHANNELS ? 2 * s.channels : MAXCHANNELS)) {
      sum.fewer++; /* D23: a fragment that says it has fewer channels lowers every rank's count */
    }
    sum.policyJobs += s.policy != 0;
    if (j.kind >= X_REC_FLIP) {
      /* D25, D27, D28: the corrupted record, or the rank whose own state
       * differs, either is named by the one verdict or changes nothing. */
      char why[256];
      int ok = x_expect_random(&j, why, sizeof why);
      sum.recordJobs++;
      sum.recordRead += ok == 2;
      sum.recordOk += ok != 0;
      if (!ok && sum.recordMiss[0] == '\0')
        snprintf(sum.recordMiss, sizeof sum.recordMiss, "%s: %s; returned %d, WARN: %s", xLabel, why, (int)xv[0].res,
                 xv[0].warn[0] ? xv[0].warn : "(none)");
    }
    x_job_free(&j);
    sum.cases++;
    sum.random = i + 1;
    progress_tick();
  }
  xLabel[0] = '\0';
  clock_gettime(CLOCK_MONOTONIC, &w1);
  double cpu = (double)(clock() - t0) / CLOCKS_PER_SEC;
  double wall = (double)(w1.tv_sec - w0.tv_sec) + (double)(w1.tv_nsec - w0.tv_nsec) / 1e9;

  long failed = sum.failed, named = sum.named;
  double rate = failed ? 100.0 * (double)named / (double)failed : 100.0;
  printf("cross-rank: %ld clusters, %ld split verdicts, %ld differences; %ld failed, the WARN names the corrupted rank in %ld (%.1f%%); "
         "%ld succeeded, %ld of them with fewer channels (D23); %.1f s, %.1f s CPU\n",
         count, splits, diffs, failed, named, rate, count - failed, sum.fewer, wall, cpu);
  printf("cross-rank: failures: %ld ncclInternalError, %ld range errors; misses by kind (of failures of that kind):", sum.internal,
         failed - sum.internal);
  for (int k = X_RECV; k < X_COUNT; k++)
    printf(" %s %ld of %ld%s", xKindLabels[k], sum.missed[k], sum.drawn[k], k + 1 < X_COUNT ? "," : "\n");
  for (int k = X_RECV; k < X_COUNT; k++)
    if (sum.missed[k]) printf("cross-rank: first %s miss: %s\n", xKindLabels[k], sum.missExample[k]);
  printf("cross-rank: %ld clusters numbered across nodes (round-robin or permuted); %ld of them failed, the WARN "
         "names the corrupted rank in %ld\n",
         sum.numbered, sum.numberedFailed, sum.numberedNamed);
  printf("cross-rank: D25/D27/D28: %ld clusters with NCCOM_RING_NODE_ORDER=network on every rank%s; %ld record "
         "corruptions or ranks of another state, %ld of them named by the verdict; as expected (named, or nothing "
         "changes) in %ld\n",
         sum.policyJobs, podOrderNode ? " (NCCOM_RING_POD_ORDER=node: a quarter with enablePod)" : "", sum.recordJobs,
         sum.recordRead, sum.recordOk);
  if (sum.recordOk < sum.recordJobs) {
    printf("cross-rank: FAIL: %ld record corruptions or ranks of another state neither named the rank nor left the "
           "job as it was; "
           "first: %s\n", sum.recordJobs - sum.recordOk, sum.recordMiss);
    status = 1;
  }
  /* The figures above are the random clusters'; say so when a named or
   * pasted case failed, so that the last line does not read as a pass. */
  if (sum.namedFailed)
    printf("cross-rank: FAIL: %ld of %ld named cases failed (above, marked FAIL)\n", sum.namedFailed, sum.namedRun);
  if (pastedFailed)
    printf("cross-rank: FAIL: %ld of the pasted cases of crossrank.inc failed (above)\n", pastedFailed);
  if (keepGoing) print_kinds("cross-rank cases (named, pasted and random)", sum.cases);
  if (haveFirst && !keepGoing) {
    x_shrink(&first);
    x_spec_fails(&first); /* formats xLabel */
    sum.haveSmallest = 1;
    sum.smallestKind = CASE_SPEC;
    snprintf(sum.smallest, sizeof sum.smallest, "%s", xLabel);
    snprintf(sum.smallestDiff, sizeof sum.smallestDiff, "%s%s%s", xSplit ? xSplitText : "",
             xSplit && xDiff ? "\n" : "", xDiff ? xDiffText : "");
    printf("conformance: smallest reproducing cross-rank case (paste into tests/c/conformance/crossrank.inc):\n");
    x_report(xLabel, 1);
    xLabel[0] = '\0';
  }
  if (splits || diffs) status = 1;
  if (rate < 99.0) {
    printf("cross-rank: FAIL: the WARN names the corrupted rank in %.1f%% of failing clusters, below 99%%\n", rate);
    status = 1;
  }
  return status;
}

/* ------------------------------------------------------------------ */
/* Progress lines and the --json summary                               */

/* A line on stderr every --progress seconds (main thread, between
 * cases). */
static void progress_tick(void) {
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
static void write_json(int status) {
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

/* The end of a run: the --json summary, then the status. */
static int finish(int status) {
  write_json(status);
  return status;
}

static void usage(FILE *f, int status) {
  fputs("usage: conformance [--candidate LIB] [--reference LIB] [--seed S] [--count N]\n"
        "                   [--case 'SPEC'] [--real] [RUN FLAGS]\n"
        "       conformance --cross-rank [--candidate LIB] [--reference LIB] [--seed S] [--count N]\n"
        "                   [--case 'XSPEC'] [RUN FLAGS]\n"
        "  RUN FLAGS: [--cpu-limit SECONDS] [--blocked-limit SECONDS] [--timeout SECONDS]\n"
        "             [--no-limits] [--progress SECONDS] [--json FILE] [--junit FILE]\n"
        "             [--pod-order VALUE] [--keep-going]\n"
        "  LIB paths default to libnccomring.so and libnccomref.so beside this program\n"
        "  (--reference defaults to $LIBNCCOM when set)\n"
        "  --count defaults to 20000 clusters, 5000 with --cross-rank\n"
        "  --cross-rank: one valid cluster of at most 64 ranks per case, one corruption of the\n"
        "  gathered fragments, Postset on every rank: asserts one verdict per library (D24),\n"
        "  the same outcome in both, and that failures name the corrupted rank (>= 99%)\n"
        "  Run limits: a case that hangs ends the run with exit 4, printing which limit fired,\n"
        "  the case, the call it is in and where each thread waits. They detect a hang, not\n"
        "  a slow machine: a case starved of CPU waits to run, which trips neither\n"
        "  --cpu-limit nor --blocked-limit. 0 turns one off.\n"
        "  --cpu-limit SECONDS: the CPU a case's threads may use (a spin; default 60)\n"
        "  --blocked-limit SECONDS: how long a case may go with no thread running or waiting\n"
        "    to run (a deadlock, a sleep; default 10)\n"
        "  --timeout SECONDS: the wall-clock cap on a case, the last resort (default 600)\n"
        "  --no-limits: all three off (e.g. under a debugger); a later flag sets one again\n"
        "  --progress SECONDS: a progress line on stderr every SECONDS (default 10 when stderr\n"
        "    is a terminal, else 0: none)\n"
        "  --json FILE: a summary of the run, written whatever its exit status\n"
        "  --junit FILE: the run as JUnit XML (loading each library, then the cases), written\n"
        "    whatever its exit status\n"
        "  --pod-order VALUE: NCCOM_RING_POD_ORDER for the whole run (both libraries read it once\n"
        "    per process, at their first Preset); unset without it\n"
        "  --keep-going: run every case, shrink none; print one line per differing case (its kind\n"
        "    and the command that replays it), then how many differ by kind\n"
        "  exit status: 0 no difference, 1 a difference, 2 usage or load error, 3 a library\n"
        "    crashed, 4 a run limit ended a case\n",
        f);
  if (status) {
    snprintf(sum.error, sizeof sum.error, "usage: unknown flag or a flag without its value");
    write_json(status);
  }
  exit(status);
}

/* A whole unsigned number in base 10 or 0x16, or exit 2. */
static unsigned long long number_arg(const char *flag, const char *v, unsigned long long max) {
  char *end;
  errno = 0;
  unsigned long long x = strtoull(v, &end, 0);
  if (*v == '\0' || *v == '-' || *end != '\0' || errno != 0 || x > max)
    fatal("conformance: %s wants a number in [0, %llu], got '%s'\n", flag, max, v);
  return x;
}

/* path beside this program's own file, so runs from any directory find the
 * build artifacts. */
static const char *beside_me(const char *name) {
  static char buf[3][4096];
  static int k;
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return name;
  exe[n] = '\0';
  char *slash = strrchr(exe, '/');
  if (slash == NULL) return name;
  *slash = '\0';
  char *out = buf[k++ % 3];
  if ((size_t)snprintf(out, sizeof buf[0], "%.3000s/%s", exe, name) >= sizeof buf[0]) return name;
  return out;
}

/* --keep-going: a differing case (NULL: the NULL-argument calls), counted
 * by the kind of its difference, with the command that replays it. */
static void spec_differs(const struct spec *s, const char *argv0) {
  char text[CASE_TEXT], kind[160], replay[CASE_TEXT + 1024];
  kind_of(diffText, kind, sizeof kind);
  if (s != NULL) format_spec(text, sizeof text, s);
  snprintf(replay, sizeof replay, "%s --candidate %s --reference %s%s%s %s%s%s", argv0, libs[0].path, libs[1].path,
           realMode ? " --real" : "", podOrderFlag(), s != NULL ? "--case '" : "--count 0", s != NULL ? text : "",
           s != NULL ? "'" : "");
  record_failure(s != NULL ? text : "the NULL-argument calls (they run first)", s != NULL ? CASE_SPEC : CASE_FIXED, diffText, "");
  count_difference(kind, replay);
}

int main(int argc, char **argv) {
  /* The lines this test reads are NCCL's (D21): chosen here, not left to
   * whether a libnccom is loaded in the process (D26). */
  setenv("NCCOM_RING_LOG_STYLE", "nccl", 1);
  setvbuf(stdout, NULL, _IOLBF, 0); /* nothing lost if a library crashes the run */
  runStartNs = now_ns(CLOCK_MONOTONIC);
  progName = argv[0];
  const char *ref = getenv("LIBNCCOM");
  libs[0].path = beside_me("libnccomring.so");
  presetEnvHelper = beside_me("conformance-preset-env");
  libs[1].path = ref && ref[0] ? ref : beside_me("libnccomref.so");
  uint64_t seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
  long count = -1; /* the mode's default */
  const char *oneCase = NULL;
  int crossRank = 0;
  /* --json first: it is opened (and truncated) before anything runs, so
   * an unwritable path fails at once and every later exit, bad flags
   * included, leaves a summary. */
  for (int i = 1; i + 1 < argc; i++)
    if (strcmp(argv[i], "--json") == 0) jsonPath = argv[++i];
  if (jsonPath && (jsonFd = open(jsonPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0) {
    fprintf(stderr, "conformance: cannot write --json %s: %s\n", jsonPath, strerror(errno));
    return 2;
  }
  for (int i = 1; i + 1 < argc; i++)
    if (strcmp(argv[i], "--junit") == 0) junitPath = argv[++i];
  if (junitPath && (junitFd = open(junitPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0) {
    int e = errno;
    fprintf(stderr, "conformance: cannot write --junit %s: %s\n", junitPath, strerror(e));
    snprintf(sum.error, sizeof sum.error, "cannot write --junit %s: %s", junitPath, strerror(e));
    return finish(2); /* the --json summary, when asked for */
  }
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--candidate") == 0 && i + 1 < argc) libs[0].path = argv[++i];
    else if (strcmp(argv[i], "--reference") == 0 && i + 1 < argc) libs[1].path = argv[++i];
    else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) seed = number_arg("--seed", argv[++i], ~0ULL);
    else if (strcmp(argv[i], "--count") == 0 && i + 1 < argc) count = (long)number_arg("--count", argv[++i], 100000000);
    else if (strcmp(argv[i], "--case") == 0 && i + 1 < argc) oneCase = argv[++i];
    else if (strcmp(argv[i], "--cpu-limit") == 0 && i + 1 < argc) cpuLimitSec = (long)number_arg("--cpu-limit", argv[++i], 1000000);
    else if (strcmp(argv[i], "--blocked-limit") == 0 && i + 1 < argc) blockedLimitSec = (long)number_arg("--blocked-limit", argv[++i], 1000000);
    else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc) timeoutSec = (long)number_arg("--timeout", argv[++i], 1000000);
    else if (strcmp(argv[i], "--no-limits") == 0) cpuLimitSec = blockedLimitSec = timeoutSec = 0;
    else if (strcmp(argv[i], "--progress") == 0 && i + 1 < argc) progressSec = (long)number_arg("--progress", argv[++i], 1000000);
    else if (strcmp(argv[i], "--json") == 0 && i + 1 < argc) i++; /* opened above */
    else if (strcmp(argv[i], "--junit") == 0 && i + 1 < argc) i++; /* opened above */
    else if (strcmp(argv[i], "--real") == 0) realMode = 1;
    else if (strcmp(argv[i], "--pod-order") == 0 && i + 1 < argc) podOrder = argv[++i];
    else if (strcmp(argv[i], "--cross-rank") == 0) crossRank = 1;
    else if (strcmp(argv[i], "--keep-going") == 0) keepGoing = 1;
    else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) usage(stdout, 0);
    else usage(stderr, 2);
  }
  crossRankMode = crossRank;
  if (count < 0) count = crossRank ? 5000 : 20000;
  sum.seed = seed;
  sum.count = oneCase ? 0 : count;
  sum.oneCase = oneCase;
  if (progressSec < 0) progressSec = isatty(2) ? 10 : 0;
  nextProgressNs = runStartNs + (long long)progressSec * 1000000000LL;
  if (crossRank && realMode) {
    /* A real libnccom checks only its own rank's ring (issue 8): it is
     * known to split verdicts, and prints none of D24's texts. */
    fatal("conformance: --cross-rank and --real do not go together\n");
  }

  /* Crash reporting first: the Go runtime chains to handlers installed
   * before it loads. */
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_crash;
  sa.sa_flags = SA_ONSTACK;
  sigaction(SIGSEGV, &sa, NULL);
  sigaction(SIGBUS, &sa, NULL);
  sigaction(SIGFPE, &sa, NULL);
  sigaction(SIGABRT, &sa, NULL);
  /* The watchdog before the libraries: loading is watched too. */
  start_watchdog();

  warnFd = mkstemp(warnPath);
  if (warnFd < 0) fatal("conformance: %s: %s\n", warnPath, strerror(errno));
  atexit(remove_warn_file);
  const char *path = warnPath;
  /* The cross-rank mode also compares INFO lines: D23's channel count line
   * on every rank and rank 0's walks of failing rings. Both libraries read
   * these once, at their first call. */
  setenv("NCCL_DEBUG", crossRank ? "INFO" : "WARN", 1);
  setenv("NCCL_DEBUG_FILE", path, 1);
  if (crossRank)
    setenv("NCCL_DEBUG_SUBSYS", "INIT", 1);
  else
    unsetenv("NCCL_DEBUG_SUBSYS");
  unsetenv("NCCOM_RING_PLATFORM");
  /* NCCOM_RING_POD_ORDER is read once per process (at the first Preset),
   * so a run has one value: unset, or --pod-order's. D25's two variables
   * are set per rank by the cases that use them and unset otherwise. */
  set_var("NCCOM_RING_POD_ORDER", podOrder && podOrder[0] ? podOrder : NULL);
  podOrderNode = podOrder && strcasecmp(podOrder, "node") == 0;
  clear_rank_env();
  unsetenv("NCCOM_RING_DUMP"); /* its INFO lines and files are not this test's */

  load(&libs[0]);
  load(&libs[1]);
  if (crossRank) {
    xArgv0 = argv[0];
    return finish(cross_rank_main(seed, count, oneCase));
  }
  commA = calloc(1, sizeof *commA);
  commB = calloc(1, sizeof *commB);
  printf("conformance: candidate %s%s\nconformance: reference %s%s%s\n", libs[0].path,
         libs[0].mangled ? " (C++ names)" : "", libs[1].path, libs[1].mangled ? " (C++ names)" : "",
         realMode ? " (--real: fault-free generic clusters, spec strings only)" : "");

  const struct spec regressions[] = {
#include "regressions.inc"
  };
  struct spec one;
  int failed = 0;
  struct spec failing;
  clock_t t0 = clock();

  if (oneCase) {
    if (parse_spec(oneCase, &one) != 0) fatal("conformance: cannot parse --case '%s'\n", oneCase);
    sum.phase = "the --case case";
    sum.cases++;
    if (run_case(&one)) failing = one, failed = 1;
  } else {
    printf("conformance: seed 0x%llx (replay: %s --candidate %s --reference %s%s%s --seed 0x%llx --count %ld)\n",
           (unsigned long long)seed, argv[0], libs[0].path, libs[1].path, realMode ? " --real" : "", podOrderFlag(),
           (unsigned long long)seed, count);
    sum.phase = "the NULL-argument calls";
    if (null_argument_calls()) {
      if (keepGoing) spec_differs(NULL, argv[0]);
      else failed = 1, memset(&failing, 0, sizeof failing);
    }
    sum.phase = "the regression cases";
    for (size_t i = 0; i < sizeof regressions / sizeof regressions[0] && !failed; i++) {
      struct spec s = regressions[i];
      if (realMode) s.platform = s.kanga = s.pod = s.fault = s.order = s.locations = s.nics = 0;
      if (run_case(&s)) {
        if (keepGoing) spec_differs(&s, argv[0]);
        else failing = s, failed = 1;
      }
      sum.cases++;
      progress_tick();
    }
    sum.phase = "random cases";
    randomStartNs = now_ns(CLOCK_MONOTONIC);
    for (long i = 0; i < count && !failed; i++) {
      struct spec s;
      random_spec(mix(seed + (uint64_t)i), &s);
      sum.numbered += s.numbering != CLUSTER_NODE_MAJOR;
      if (run_case(&s)) {
        if (keepGoing) spec_differs(&s, argv[0]);
        else failing = s, failed = 1;
      }
      sum.cases++;
      sum.random++;
      progress_tick();
    }
  }
  double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;

  if (keepGoing && !oneCase) {
    sum.differences = print_kinds("cases (the NULL-argument calls counted as one)", sum.cases + 1);
    return finish(sum.differences > 0);
  }
  if (failed) {
    sum.differences = 1;
    printf("conformance: DIFFERENCE after %ld cases:\n  %s\n", sum.cases, diffText);
    char text[CASE_TEXT];
    if (failing.nodes > 0) format_spec(text, sizeof text, &failing);
    else snprintf(text, sizeof text, "the NULL-argument calls (they run first)");
    record_failure(text, failing.nodes > 0 ? CASE_SPEC : CASE_FIXED, diffText, "");
    if (failing.nodes > 0) {
      printf("conformance: failing case: %s,\n", text);
      shrink(&failing);
      run_case(&failing);
      format_spec(text, sizeof text, &failing);
      sum.haveSmallest = 1;
      sum.smallestKind = CASE_SPEC;
      snprintf(sum.smallest, sizeof sum.smallest, "%s", text);
      snprintf(sum.smallestDiff, sizeof sum.smallestDiff, "%s", diffText);
      printf("conformance: smallest reproducing case (paste into tests/c/conformance/regressions.inc):\n%s,\n", text);
      printf("conformance: its difference:\n  %s\n", diffText);
      printf("conformance: replay with: %s --candidate %s --reference %s%s%s --case '%s'\n", argv[0], libs[0].path,
             libs[1].path, realMode ? " --real" : "", podOrderFlag(), text);
    }
    return finish(1);
  }
  printf("conformance: %ld cases (%ld random, %ld of them numbered across nodes) agree, 0 differences, %.1f s CPU\n",
         sum.cases, sum.random, sum.numbered, secs);
  printf("conformance: D25/D27: %ld cases set NCCOM_RING_NODE_ORDER, NCCOM_RING_LOCATION or per-rank SwitchV1 answers; "
         "texts seen:", sum.envCases);
  for (int k = 0; k < 8; k++) printf(" %s %ld%s", envTextLabels[k], sum.envTexts[k], k < 7 ? "," : "\n");
  return finish(0);
}
