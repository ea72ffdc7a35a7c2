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
 * rank's own state the odd one out); below 99% fails, judged once 1,000
 * clusters failed (MIN_JUDGED_FAILURES). Asserted for the
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
 *
 * main.c holds the flags and the default mode's run; conformance.h lists
 * the other files, one a job, and what they share.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "conformance.h"
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
  catch_crashes();
  /* The watchdog before the libraries: loading is watched too. */
  start_watchdog();

  const char *path = open_warn_file();
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
