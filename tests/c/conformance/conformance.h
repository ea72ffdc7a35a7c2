/*
 * conformance.h - what the files of the conformance harness share (the
 * harness's own; main.c describes the program):
 *
 *   main.c             flags, usage, the default mode's run (regressions.inc, then random cases)
 *   harness.c          the libraries, a case's bracketing and run limits (the watchdog), crash
 *                      reports, the host hooks, the WARN capture, D25's per-rank variables
 *   spec.c             a case as text: the one printer and parser of struct spec and struct xspec
 *   generate.c         deterministic randomness and the random cases of both modes
 *   compare.c          comparing two libraries' outcomes, fragments and communicators
 *   cases.c            the default mode: one cluster through both libraries, shrinking, the
 *                      NULL-argument calls
 *   crossrank.c        the cross-rank mode: a job, its one corruption, its run and one-verdict checks
 *   crossrank_expect.c the cross-rank named cases and the verdicts random jobs must reach
 *   report.c           async-signal-safe text, --keep-going's counting by kind, progress lines,
 *                      the --json summary and the --junit file
 *
 * Everything declared here is hidden: the harness is linked with -rdynamic
 * for the host hooks (harness.c) alone, and none of its own names may be
 * found by, or stand in for, a symbol of the libraries it loads.
 */
#ifndef NCCOMRING_CONFORMANCE_H
#define NCCOMRING_CONFORMANCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "../common/cluster.h"
#include "spec.h"

#pragma GCC visibility push(hidden)

struct lib {
  const char *role, *path;
  void *handle;
  struct ring_api api;
  int mangled; /* symbols found by their C++ names */
};

enum { DEFAULT_CPU_LIMIT = 60, DEFAULT_BLOCKED_LIMIT = 10, DEFAULT_TIMEOUT = 600 };

/* What the run has done so far: the final report, the progress lines
 * and the --json summary (which the watchdog and the crash handler also
 * write, while the main thread is stopped) all read it. */
enum { CASE_TEXT = 1024 };
struct summary {
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
};
extern struct summary sum;

/* How a case replays: not at all (loading: run with --count 0), with
 * --count 0 (the fixed cases that run first), or with --case 'TEXT'. */
enum case_kind { CASE_LOAD, CASE_FIXED, CASE_SPEC };

struct sbuf {
  char *p;
  size_t cap, n; /* cap > 0; p[n] is always '\0'; what does not fit is dropped */
};

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
struct stop {
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
};
extern struct stop stopInfo;

struct rng {
  uint64_t s;
};

struct rank_env {
  int n;
  char **order, **location; /* [n] each rank's value, or NULL: unset */
  int *vcore, *jbog;        /* [n] SwitchV1 answers, or NULL: the case's hooks as set_platform set them */
};

struct outcome {
  ncclResult_t res;
  char warn[1024];
};

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


/* ---- harness.c ---- */
extern struct lib libs[2];
extern int realMode;
extern int crossRankMode;
extern const char *podOrder;
extern int podOrderNode;
const char *podOrderFlag(void);
extern long cpuLimitSec;
extern long blockedLimitSec;
extern long timeoutSec;
extern long progressSec;
extern const char *jsonPath;
extern int jsonFd;
extern const char *junitPath;
extern int junitFd;
extern const char *progName;
extern long long runStartNs, randomStartNs, nextProgressNs;
long long now_ns(clockid_t clock);
extern long long caseStartNs;
extern const char *currentCall;
void case_begin(const char *text, enum case_kind kind);
void case_end(void);
void set_call(const char *call, int lib);
void sb_limit(struct sbuf *b, const struct stop *s);
void sb_threads(struct sbuf *b, const struct stop *s, const char *prefix);
void start_watchdog(void);
void catch_crashes(void);
__attribute__((format(printf, 1, 2))) _Noreturn void fatal(const char *fmt, ...);
void load(struct lib *l);
extern bool hookSwitchV1;
void drain(char *out, size_t size);
const char *open_warn_file(void);
void warn_text(const char *raw, char *out, size_t size);
void rank_env_free(struct rank_env *e);
int rank_env_alloc(struct rank_env *e, int n);
void set_var(const char *name, const char *value);
void set_rank_env(const struct rank_env *e, int rank);
void clear_rank_env(void);
void set_platform(const struct spec *sp);

/* ---- spec.c ---- */
void format_spec(char *out, size_t size, const struct spec *s);
int parse_spec(const char *text, struct spec *s);
void format_xspec(char *out, size_t size, const struct xspec *s);
int parse_xspec(const char *text, struct xspec *s);

/* ---- report.c ---- */
void sb_raw(struct sbuf *b, const char *s, size_t len);
void sb_str(struct sbuf *b, const char *s);
void sb_long(struct sbuf *b, long long v);
void sb_fixed(struct sbuf *b, double v, int decimals);
void write_all(int fd, const char *p, size_t n);
void sb_replay(struct sbuf *b, const char *text, int kind);
extern int keepGoing;
void kind_of(const char *text, char *out, size_t size);
void count_difference(const char *kind, const char *replay);
long print_kinds(const char *what, long cases);
void record_failure(const char *text, int kind, const char *why, const char *more);
void progress_tick(void);
void write_json(int status);

/* ---- generate.c ---- */
uint64_t mix(uint64_t x);
uint64_t next_u64(struct rng *r);
int below(struct rng *r, int n);
unsigned long long numbering_seed(unsigned long long seed);
const char *bad_order(struct rng *r);
void random_local_order(struct rng *r, struct cluster *cl, int m, int c, int L);
int spread_locations(struct rng *r, int mode, int nodes, int n, const int *nodeOf, struct rank_env *e);
void random_spec(uint64_t seed, struct spec *s);
int x_sizes(const struct xspec *s, struct rng *r, int *sizes);
int x_nranks(const struct xspec *s);
void random_xspec(uint64_t seed, struct xspec *s);
/* Shrinking (generate.c's shrink_case, both modes): a kind's smaller()
 * writes into tries[n++] case s with FIELD set to VALUE, when that changes
 * it; SHRINK_CLUSTER and SHRINK_NUMBERING are the fields both kinds share
 * (struct spec and struct xspec name them alike). At most SHRINK_TRIES. */
enum { SHRINK_TRIES = 48 };
#define SHRINK_TRY(s, tries, n, FIELD, VALUE) \
  if ((s)->FIELD != (VALUE)) (tries)[n] = *(s), (tries)[n].FIELD = (VALUE), (n)++;
#define SHRINK_CLUSTER(s, tries, n)                                                                        \
  SHRINK_TRY(s, tries, n, nodes, 1) SHRINK_TRY(s, tries, n, nodes, (s)->nodes / 2 > 0 ? (s)->nodes / 2 : 1) \
  SHRINK_TRY(s, tries, n, nodes, (s)->nodes > 1 ? (s)->nodes - 1 : 1) SHRINK_TRY(s, tries, n, local, 1)    \
  SHRINK_TRY(s, tries, n, local, (s)->local / 2 > 0 ? (s)->local / 2 : 1)                                  \
  SHRINK_TRY(s, tries, n, local, (s)->local > 1 ? (s)->local - 1 : 1) SHRINK_TRY(s, tries, n, channels, 1) \
  SHRINK_TRY(s, tries, n, channels, (s)->channels / 2 > 0 ? (s)->channels / 2 : 1)                         \
  SHRINK_TRY(s, tries, n, channels, (s)->channels > 1 ? (s)->channels - 1 : 1)                             \
  SHRINK_TRY(s, tries, n, unequal, 0)
#define SHRINK_NUMBERING(s, tries, n)                  \
  SHRINK_TRY(s, tries, n, numbering, CLUSTER_NODE_MAJOR) \
  SHRINK_TRY(s, tries, n, numbering, (s)->numbering > 1 ? CLUSTER_ROUND_ROBIN : (s)->numbering)
void shrink_case(void *c, size_t caseSize, int (*smaller)(const void *c, void *tries),
                 long long (*size)(const void *c), int (*fails)(const void *c));

/* ---- compare.c ---- */
extern int silent;
extern char diffText[2048];
__attribute__((format(printf, 1, 2))) int differ(const char *fmt, ...);
int compare_outcome(const char *call, int rank, const struct outcome *a, const struct outcome *b);
int compare_bytes(const char *call, int rank, const char *what, const void *a, const void *b, size_t n);
int compare_fragments(int rank, const struct ncclTopoRanks *a, const struct ncclTopoRanks *b, int nChannels);
int compare_comms(const char *call, int rank, const struct ncclComm *a, const struct ncclComm *b,
                  int *const *bufsA, int *const *bufsB);
void free_lib_bufs(struct ncclComm *c, int *const *callerBufs);
void call_begin(const char *call, int lib);
void call_end(struct outcome *o);

/* ---- cases.c ---- */
extern struct ncclComm *commA, *commB;
extern const char *const envTextLabels[8];
int run_case(const struct spec *sp);
void shrink(struct spec *s);
int null_argument_calls(void);

/* ---- crossrank.c ---- */
extern const char *xKindLabels[X_COUNT];
int x_odd(const struct xjob *j, int k);
int x_odd_one_out(const struct xjob *j);
int x_job_graphs(struct xjob *j);
extern struct xverdict xv[2];
int x_named_rank(const char *warn);
extern const int xEnvPlatformKind[5];
extern const char *xArgv0;
extern const char *presetEnvHelper;
int cross_rank_main(uint64_t seed, long count, const char *oneCase);

/* ---- crossrank_expect.c ---- */
extern const struct xnamed xNamed[];
extern const size_t xNamedCount;
int x_expect(const struct xnamed *k, int lib, int n, char *why, size_t size);
int x_want_named(const struct xjob *j);
int x_expect_random(const struct xjob *j, char *why, size_t size);

#pragma GCC visibility pop

#endif
