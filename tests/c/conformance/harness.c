/*
 * harness.c - the runner under both modes: the two libraries (loaded by
 * path, their four functions found), every case bracketed for the run
 * limits and watched by the watchdog thread, a crash or a hang reported
 * with its case, the host hooks both libraries find with dlsym, the WARN
 * capture through NCCL_DEBUG_FILE and D25's per-rank variables.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "conformance.h"

/* ------------------------------------------------------------------ */
/* Libraries                                                           */

struct lib libs[2] = {{.role = "candidate"}, {.role = "reference"}};

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

int realMode;      /* --real */
int crossRankMode; /* --cross-rank */
const char *podOrder; /* --pod-order: NCCOM_RING_POD_ORDER for the whole run (read once per process) */
int podOrderNode;     /* it is "node" (ignoring case) */

/* " --pod-order 'VALUE'" for the replay lines, or "". */
const char *podOrderFlag(void) {
  static char buf[256];
  if (podOrder == NULL) return "";
  snprintf(buf, sizeof buf, " --pod-order '%.200s'", podOrder);
  return buf;
}
/* The run limits, in seconds; 0 turns one off. The wall-clock cap is
 * far above anything a case takes on a loaded machine (the slowest here
 * takes 0.2 s of CPU): it only ends what the other two cannot see. */
long cpuLimitSec = DEFAULT_CPU_LIMIT;         /* --cpu-limit */
long blockedLimitSec = DEFAULT_BLOCKED_LIMIT; /* --blocked-limit */
long timeoutSec = DEFAULT_TIMEOUT;            /* --timeout: the wall-clock cap */
long progressSec = -1;             /* --progress; -1: 10 s when stderr is a terminal, else off */
const char *jsonPath;              /* --json */
int jsonFd = -1;                   /* opened (and truncated) before anything runs */
const char *junitPath;             /* --junit: the same run as JUnit XML, for CI */
int junitFd = -1;                  /* opened like jsonFd */
const char *progName = "conformance";
long long runStartNs, randomStartNs, nextProgressNs;

long long now_ns(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* What the run has done so far (conformance.h); what stopped it. */
struct summary sum = {.phase = "starting"};
struct stop stopInfo;

static unsigned long caseSeq;  /* odd while the case record is rewritten */
long long caseStartNs;  /* 0: no case running */
static char caseText[CASE_TEXT];
static int caseKind;
const char *currentCall = "setup"; /* the library call in progress */
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

void case_begin(const char *text, enum case_kind kind) {
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

void case_end(void) {
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
void set_call(const char *call, int lib) {
  __atomic_store_n(&currentCall, call, __ATOMIC_RELAXED);
  __atomic_store_n(&currentLib, lib, __ATOMIC_RELAXED);
}

/* "the case ran W s with C s of CPU, " and how the limit fired: the
 * first line of a timeout and its JUnit message. */
void sb_limit(struct sbuf *b, const struct stop *s) {
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
void sb_threads(struct sbuf *b, const struct stop *s, const char *prefix) {
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

/* The WARN capture file (below), removed on every way out. */
static void remove_warn_file(void);

/* Prints what stopped the run, writes the --json summary, exits. Only one
 * thread gets through; another that tries waits to be ended with it. */

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
void start_watchdog(void) {
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

/* on_crash for the signals a faulting library raises, on the alternate
 * stack when there is one. */
void catch_crashes(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_crash;
  sa.sa_flags = SA_ONSTACK;
  sigaction(SIGSEGV, &sa, NULL);
  sigaction(SIGBUS, &sa, NULL);
  sigaction(SIGFPE, &sa, NULL);
  sigaction(SIGABRT, &sa, NULL);
}

/* Exit 2 with a message, recorded for --json. */
__attribute__((format(printf, 1, 2))) _Noreturn void fatal(const char *fmt, ...) {
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
void load(struct lib *l) {
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

bool hookSwitchV1;
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

void drain(char *out, size_t size) {
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

/* Makes the capture file (removed at exit); returns its path, for
 * NCCL_DEBUG_FILE. */
const char *open_warn_file(void) {
  warnFd = mkstemp(warnPath);
  if (warnFd < 0) fatal("conformance: %s: %s\n", warnPath, strerror(errno));
  atexit(remove_warn_file);
  return warnPath;
}

/* The comparable part of captured WARN lines: "[rank] NCCL WARN text" of
 * each line (host, pid and tid are the same process anyway). */
void warn_text(const char *raw, char *out, size_t size) {
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

void rank_env_free(struct rank_env *e) {
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

int rank_env_alloc(struct rank_env *e, int n) {
  memset(e, 0, sizeof *e);
  e->n = n;
  e->order = calloc((size_t)n, sizeof(char *));
  e->location = calloc((size_t)n, sizeof(char *));
  return e->order && e->location ? 0 : -1;
}

void set_var(const char *name, const char *value) {
  if (value) setenv(name, value, 1);
  else unsetenv(name);
}

void set_rank_env(const struct rank_env *e, int rank) {
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

void clear_rank_env(void) {
  unsetenv("NCCOM_RING_NODE_ORDER");
  unsetenv("NCCOM_RING_LOCATION");
  hookVcoreOf = hookJbogOf = NULL;
  hookRanks = 0;
  hookRank = -1;
}

void set_platform(const struct spec *sp) {
  hookSwitchV1 = sp->platform != 0;
  hookVcore = sp->platform == 2 ? 1 : 0;
  hookJbogMode = sp->platform == 3;
}
