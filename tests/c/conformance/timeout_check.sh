#!/bin/sh
# timeout_check.sh BUILD - the conformance harness's run limits (issues 10
# and 32), run by `make test-conformance-timeout`. A limit detects a hang;
# it never times the machine, so nothing here asserts how long a run took:
# each check asserts which limit fired, and why.
#   - a library that hangs (build/libnccom-hang.so: sleeps, or spins with
#     every signal blocked) in a call or while loading, as the reference or
#     the candidate, in both modes, under --cpu-limit 2 --blocked-limit 2:
#     exit 4, the case, the call and the library on stderr, and the limit
#     that fits the hang: a sleep is "blocked" with the main thread asleep
#     in a nanosleep wchan, a spin is "cpu" with the main thread running;
#     the printed replay command stops the same way on the same case;
#   - the wall-clock cap (--timeout) fires when it is the only low limit;
#   - a case starved of CPU (pinned to one CPU beside 4 busy loops) is not
#     a hang: a passing run passes, and a spin is ended by its CPU, never
#     as blocked, however long the starvation makes it;
#   - --no-limits: no limit (the run is still waiting when ended from
#     outside, with every limit set to 1 s before the flag);
#   - --json parses (python3 -m json.tool) and holds docs/checking.md's fields,
#     and --junit parses and says the same exit (issue 23),
#     on every exit path: 0 in both modes, 1 (a difference, shrunk), 2 (a
#     load error, a bad flag), 3 (a crash), 4 (a run limit).
# The outer `timeout 600`s are the last resort against this script itself
# hanging (a limit that never fires); they time nothing.
# This checks the harness, not the library (test-conformance does): the
# default-mode runs load the Go library as the candidate, to show the
# watchdog and the crash report work beside its runtime (no fork, signals
# blocked while it runs); the cross-rank runs, which compare INFO lines,
# pair the reference model with itself or the stand-in, so a change in the
# library's log does not show up here.
set -u
b=${1:-build}
conf=$b/conformance
hang=$b/libnccom-hang.so
go=$b/libnccomring.so
ref=$b/libnccomref.so
for f in "$conf" "$hang" "$go" "$ref"; do
  test -e "$f" || { echo "timeout_check: $f is missing (make test-conformance-timeout builds it)"; exit 2; }
done
command -v python3 >/dev/null || { echo "timeout_check: needs python3 (the --json checks)"; exit 2; }
tmp=$(mktemp -d)
busy="" # the busy loops of the starvation checks, killed on every way out
trap 'kill $busy 2>/dev/null; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
fails=0
pass() { echo "ok   $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
now() { date +%s.%N; }
since() { echo "$1 $(now)" | awk '{printf "%.1f", $2 - $1}'; }

# The fields of the --json summary (docs/checking.md, "The conformance suite").
FIELDS="harness mode real candidate reference seed count case cpu_limit_seconds blocked_limit_seconds
timeout_seconds cases random_cases
numbered_across_nodes differences split_verdicts named_cases_run named_cases_failed failed_clusters
named_rank named_rank_rate internal_errors fewer_channels misses_by_kind elapsed_seconds cpu_seconds
slowest_case exit_status result first_failure stopped error"

# junit_check FILE STATUS: the --junit file parses, holds its 3 testcases
# (loading each library, the cases) with counts that agree with them, and
# says STATUS: 0 nothing failed, 1 one failure, 2 to 4 an error.
junit_check() {
  python3 - "$1" "$2" <<'EOF2'
import sys
import xml.etree.ElementTree as ET
path, status = sys.argv[1], int(sys.argv[2])
root = ET.parse(path).getroot()
cases = root.findall("./testsuite/testcase")
f, e = len(root.findall("./testsuite/testcase/failure")), len(root.findall("./testsuite/testcase/error"))
assert len(cases) == 3 and (root.get("tests"), root.get("failures"), root.get("errors")) == ("3", str(f), str(e)), root.attrib
ok = {0: f == 0 and e == 0, 1: f == 1 and e == 0}.get(status, f == 0 and e >= 1)
assert ok, "%s: exit %d with %d failures, %d errors" % (path, status, f, e)
EOF2
}

# json_check FILE STATUS MODE [PYTHON]: FILE parses, has every field, the
# exit status and mode given, the cross-rank fields exactly in that mode,
# and PYTHON (an expression over d) holds.
json_check() {
  python3 -m json.tool "$1" >/dev/null 2>"$tmp/json.err" || { cat "$tmp/json.err"; return 1; }
  FIELDS=$FIELDS python3 - "$1" "$2" "$3" "${4:-True}" <<'EOF'
import json, os, sys
path, status, mode, extra = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
d = json.load(open(path))
problems = [f"missing field {f}" for f in os.environ["FIELDS"].split() if f not in d]
results = {0: "pass", 1: "fail", 2: "error", 3: "crash", 4: "timeout"}
if d.get("exit_status") != status: problems.append(f"exit_status {d.get('exit_status')}, want {status}")
if d.get("result") != results[status]: problems.append(f"result {d.get('result')}, want {results[status]}")
if d.get("mode") != mode: problems.append(f"mode {d.get('mode')}, want {mode}")
cross = ["split_verdicts", "named_cases_run", "named_cases_failed", "failed_clusters", "named_rank",
         "named_rank_rate", "internal_errors", "fewer_channels", "misses_by_kind"]
if status != 2:
    for f in cross:
        if (d.get(f) is None) != (mode == "default"):
            problems.append(f"{f} is {d.get(f)!r} in {mode} mode")
if mode == "cross-rank" and status != 2:
    kinds = d["misses_by_kind"]
    if sorted(kinds) != sorted(["ringRecv", "ringSend", "ringPrev", "ringNext", "duplicate", "swap",
                                "record byte", "record copy", "stale record", "platform", "enablePod",
                                "nKangaRingChannels", "graph", "channel count", "record version", "no magic",
                                "NCCOM_RING_PLATFORM"]):
        problems.append(f"misses_by_kind has {sorted(kinds)}")
if not isinstance(d.get("seed"), str) or not d["seed"].startswith("0x"):
    problems.append(f"seed {d.get('seed')!r} is not a 0x string")
if not eval(extra, {"d": d}): problems.append(f"does not hold: {extra}")
for p in problems: print(f"  {path}: {p}")
sys.exit(1 if problems else 0)
EOF
}

# The limits the hang checks run under: both low, so that which one fires
# tells how the stand-in hangs (a sleep uses no CPU, a spin is never idle).
LIMITS="--cpu-limit 2 --blocked-limit 2"

# hang NAME IN HOW LIMIT CALL ROLE MODE WHAT ARGS...: the stand-in
# misbehaves (NCCOM_HANG_IN, NCCOM_HANG_HOW); the run must end with exit 4
# by LIMIT (cpu, blocked or wall), naming CALL (what the harness was
# calling) and ROLE, printing WHAT (a grep -F pattern: the case), a
# replay command and the main thread as the hang leaves it (a sleep: S in
# a nanosleep wchan; a spin: R), with --json and --junit that say the
# same. ARGS carry the limits.
hang() {
  name=$1 in=$2 how=$3 limit=$4 call=$5 role=$6 mode=$7 what=$8
  shift 8
  t0=$(now)
  NCCOM_HANG_IN=$in NCCOM_HANG_HOW=$how NCCOM_HANG_FORWARD=$ref timeout 600 "$conf" "$@" \
    --json "$tmp/$name.json" --junit "$tmp/$name.xml" >"$tmp/$name.out" 2>"$tmp/$name.err"
  rc=$? secs=$(since "$t0")
  case $how in
    sleep) main="t['state'] == 'S' and 'nanosleep' in (t['wchan'] or '')" mainline=" S wchan [a-z_]*nanosleep " ;;
    *) main="t['state'] == 'R'" mainline=" R wchan " ;;
  esac
  ok=1
  test $rc -eq 4 || { echo "  exit status $rc, want 4"; ok=0; }
  grep -q "^conformance: TIMEOUT ($limit): .* in $call of the $role library" "$tmp/$name.err" ||
    { echo "  no TIMEOUT ($limit) line naming $call of the $role library"; ok=0; }
  grep -qF -- "$what" "$tmp/$name.err" || { echo "  the case ($what) is not printed"; ok=0; }
  grep -q '^conformance: replay with: ' "$tmp/$name.err" || { echo "  no replay command"; ok=0; }
  grep -q "^conformance:   thread [0-9]* .*$mainline.*(the main thread" "$tmp/$name.err" ||
    { echo "  the main thread is not shown as the $how leaves it ($mainline)"; ok=0; }
  json_check "$tmp/$name.json" 4 "$mode" \
    "d['stopped']['reason'] == 'timeout' and d['stopped']['limit'] == '$limit' and d['stopped']['call'] == '$call' and d['stopped']['library'] == '$role' and d['stopped']['replay'] and d['stopped']['cpu_seconds'] >= 0 and d['stopped']['ran_seconds'] > 0 and [t for t in d['stopped']['threads'] if t['role'] == 'main' and $main] and all(set(t) == {'tid', 'name', 'state', 'wchan', 'syscall', 'role'} for t in d['stopped']['threads'])" ||
    ok=0
  junit_check "$tmp/$name.xml" 4 || ok=0
  grep -q "timeout ($limit): the case ran" "$tmp/$name.xml" || { echo "  --junit does not say timeout ($limit)"; ok=0; }
  if [ $ok = 1 ]; then
    pass "$name: exit 4 by the $limit limit (after $secs s), in $call of the $role library ($how)"
    sed -n '/TIMEOUT/,$p' "$tmp/$name.err" | sed 's/^/     /'
  else
    fail "$name"
    sed 's/^/     /' "$tmp/$name.err" | tail -n 14
  fi
}

# The report from its TIMEOUT line to its exit line, but for what is
# measured: the seconds (wall, CPU, blocked) and the threads (their ids,
# how many, where each waits) differ from run to run; the limit, the call,
# the library, the case and the replay command do not.
report() {
  sed -n '/^conformance: TIMEOUT/,/^conformance: exit 4/p' "$1" |
    sed -e '/^conformance:   /d' -e 's/[0-9][0-9]*\.[0-9][0-9]* s/N s/g'
}

# replay NAME IN HOW: runs the replay command the run NAME printed, with
# the same stand-in; it must stop the same way on the same case.
replay() {
  name=$1 in=$2 how=$3
  cmd=$(sed -n 's/^conformance: replay with: //p' "$tmp/$name.err")
  t0=$(now)
  NCCOM_HANG_IN=$in NCCOM_HANG_HOW=$how NCCOM_HANG_FORWARD=$ref timeout 600 sh -c "$cmd" \
    >"$tmp/$name.replay.out" 2>"$tmp/$name.replay.err"
  rc=$? secs=$(since "$t0")
  a=$(report "$tmp/$name.err")
  b=$(report "$tmp/$name.replay.err")
  if [ $rc -eq 4 ] && [ -n "$a" ] && [ "$a" = "$b" ]; then
    pass "$name: its replay command stops the same way on the same case ($secs s)"
  else
    fail "$name: replay (exit $rc): $cmd"
    echo "$a" | sed 's/^/     first:  /'
    echo "$b" | sed 's/^/     replay: /'
  fi
}

echo "== a library that hangs ends the run ($LIMITS, exit 4)"
# --timeout 0 here: the wall-clock cap off leaves the other two on
hang reference-preset ncclTopoPreset sleep blocked ncclTopoPreset reference default '{.seed = 0x1ULL' \
  --candidate "$go" --reference "$hang" --real --count 5 $LIMITS --timeout 0
replay reference-preset ncclTopoPreset sleep
hang candidate-getnetdev ncclTopoGetNetDev sleep blocked ncclTopoGetNetDev candidate default '{.seed = 0x1ULL' \
  --candidate "$hang" --reference "$ref" --count 5 $LIMITS
hang reference-postset-spin ncclTopoPostset spin cpu ncclTopoPostset reference default '{.seed = 0x1ULL' \
  --candidate "$go" --reference "$hang" --real --count 5 $LIMITS
hang cross-named ncclTopoPostset sleep blocked ncclTopoPostset reference cross-rank 'case 1: 2x4' \
  --cross-rank --candidate "$ref" --reference "$hang" --count 5 $LIMITS
xcase='{.seed = 0x5ULL, .nodes = 2, .local = 3, .channels = 2, .kind = X_PREV, .rank = 4, .channel = 1, .value = 0}'
hang cross-case-spin ncclTopoPostset spin cpu ncclTopoPostset reference cross-rank "$xcase" \
  --cross-rank --candidate "$ref" --reference "$hang" --case "$xcase" $LIMITS
replay cross-case-spin ncclTopoPostset spin
hang loading load sleep blocked dlopen reference default "loading the reference library $hang" \
  --candidate "$go" --reference "$hang" --count 5 $LIMITS

echo "== the wall-clock cap, the last resort (--timeout 3 with the others at 1000 s)"
# The one check that uses the wall clock: it is what this limit measures.
hang wall-cap ncclTopoPreset sleep wall ncclTopoPreset reference default '{.seed = 0x1ULL' \
  --candidate "$go" --reference "$hang" --real --count 5 --cpu-limit 1000 --blocked-limit 1000 --timeout 3
replay wall-cap ncclTopoPreset sleep

echo "== a case starved of CPU is not a hang (pinned to CPU 0 beside 4 busy loops)"
if command -v taskset >/dev/null && taskset -c 0 true 2>/dev/null; then
  for i in 1 2 3 4; do
    taskset -c 0 sh -c 'while :; do :; done' &
    busy="$busy $!"
  done
  # A passing run with low limits passes: its cases wait to run, which
  # is neither blocked nor spinning.
  timeout 600 taskset -c 0 "$conf" --candidate "$go" --reference "$ref" --seed 7 --count 300 \
    --cpu-limit 2 --blocked-limit 1 --json "$tmp/starved.json" >"$tmp/starved.out" 2>"$tmp/starved.err"
  rc=$?
  if [ $rc -eq 0 ] && json_check "$tmp/starved.json" 0 default "d['stopped'] is None"; then
    took=$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(d["elapsed_seconds"], "s for", d["cpu_seconds"], "s of CPU; the slowest case", d["slowest_case"]["seconds"], "s")' "$tmp/starved.json")
    pass "starved: a passing run passes with --cpu-limit 2 --blocked-limit 1 ($took)"
  else
    fail "starved: a passing run: exit $rc, want 0"
    tail -n 14 "$tmp/starved.err"
  fi
  # A spin starved for many times its --blocked-limit (it gets a fifth of
  # a CPU, so 3 s of CPU take about 15 s) is ended by its CPU: however
  # long it waits to run, it is never "blocked".
  NCCOM_HANG_IN=ncclTopoPostset NCCOM_HANG_HOW=spin NCCOM_HANG_FORWARD=$ref timeout 600 taskset -c 0 "$conf" \
    --candidate "$go" --reference "$hang" --real --count 5 --cpu-limit 3 --blocked-limit 1 \
    --json "$tmp/starved-spin.json" >"$tmp/starved-spin.out" 2>"$tmp/starved-spin.err"
  rc=$?
  if [ $rc -eq 4 ] && grep -q '^conformance: TIMEOUT (cpu): ' "$tmp/starved-spin.err" &&
    json_check "$tmp/starved-spin.json" 4 default "d['stopped']['limit'] == 'cpu'"; then
    pass "starved-spin: ended by the cpu limit, not as blocked: $(sed -n 's/^conformance: TIMEOUT (cpu): \(.* of CPU\),.*/\1/p' "$tmp/starved-spin.err")"
  else
    fail "starved-spin: exit $rc, want 4 by the cpu limit"
    tail -n 14 "$tmp/starved-spin.err"
  fi
  kill $busy 2>/dev/null
  wait $busy 2>/dev/null
  busy=""
else
  fail "starved: needs taskset (util-linux) and CPU 0"
fi

echo "== --no-limits: no limit"
# Every limit is set to 1 s first: --no-limits must turn them all off. The
# outer timeout ends a run that, rightly, never ends on its own.
t0=$(now)
NCCOM_HANG_IN=ncclTopoPreset NCCOM_HANG_FORWARD=$ref timeout 8 "$conf" --candidate "$go" --reference "$hang" \
  --real --count 5 --cpu-limit 1 --blocked-limit 1 --timeout 1 --no-limits >"$tmp/none.out" 2>"$tmp/none.err"
rc=$?
if [ $rc -eq 124 ] && ! grep -q TIMEOUT "$tmp/none.err"; then
  pass "--no-limits: still waiting in the hung call after $(since "$t0") s (ended from outside)"
else
  fail "--no-limits: exit $rc"
  tail -n 4 "$tmp/none.err"
fi

echo "== --json on every exit path"
# json_run NAME STATUS MODE PYTHON [VAR=VALUE...] HARNESS ARGS...: run
# through env; exit STATUS and a summary for which json_check holds.
json_run() {
  name=$1 want=$2 mode=$3 extra=$4
  shift 4
  timeout 600 env "$@" --json "$tmp/$name.json" --junit "$tmp/$name.xml" >"$tmp/$name.out" 2>"$tmp/$name.err"
  rc=$?
  if [ $rc -eq "$want" ] && json_check "$tmp/$name.json" "$want" "$mode" "$extra" && junit_check "$tmp/$name.xml" "$want"; then
    pass "$name: exit $rc, --json parses with every field, --junit says it too"
  else
    fail "$name: exit $rc (want $want)"
    tail -n 5 "$tmp/$name.out" "$tmp/$name.err"
  fi
}
json_run pass-default 0 default \
  "d['cases'] > d['random_cases'] == 300 and d['first_failure'] is None and d['stopped'] is None and d['slowest_case']['case'].startswith('{')" \
  "$conf" --candidate "$go" --reference "$ref" --seed 7 --count 300
json_run pass-cross-rank 0 cross-rank \
  "d['random_cases'] == 300 and d['named_cases_run'] > 0 and d['named_rank_rate'] >= 95 and d['failed_clusters'] > 0 and sum(k['failures'] for k in d['misses_by_kind'].values()) == d['failed_clusters']" \
  "$conf" --cross-rank --candidate "$ref" --reference "$ref" --seed 7 --count 300
json_run difference 1 default \
  "d['differences'] == 1 and d['first_failure']['smallest'].startswith('{') and '--case' in d['first_failure']['smallest_replay'] and 'ncclTopoGetNetDev' in d['first_failure']['difference']" \
  NCCOM_HANG_IN=ncclTopoGetNetDev NCCOM_HANG_HOW=wrong NCCOM_HANG_FORWARD="$ref" \
  "$conf" --candidate "$go" --reference "$hang" --real --seed 7 --count 20
json_run crash 3 default \
  "d['stopped']['reason'] == 'signal' and d['stopped']['signal'] == 11 and d['stopped']['call'] == 'ncclTopoPreset' and d['stopped']['library'] == 'reference' and d['stopped']['case'].startswith('{')" \
  NCCOM_HANG_IN=ncclTopoPreset NCCOM_HANG_HOW=crash NCCOM_HANG_FORWARD="$ref" \
  "$conf" --candidate "$go" --reference "$hang" --real --count 5
json_run load-error 2 default "'cannot load the reference' in d['error'] and not d['reference']['loaded']" \
  "$conf" --candidate "$go" --reference "$tmp/no-such-library.so"
json_run bad-flag 2 default "d['error'].startswith('usage')" \
  "$conf" --candidate "$go" --reference "$ref" --no-such-flag

if [ $fails -gt 0 ]; then
  echo "timeout_check: $fails FAILED"
  exit 1
fi
echo "timeout_check: all passed"
