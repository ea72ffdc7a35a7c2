#!/bin/sh
# hang_check.sh BUILD - make test-watchdog: the watchdog on real hangs.
# Runs build/watchdog steps over testdata/hang-steps.txt: ringstage whose
# ncclTopoPostset sleeps forever, one whose Postset spins with every
# signal blocked, and one that passes. Checks that each hang is FAILED by
# the limit that should end it (blocked, cpu: never the wall clock), that
# the report names the signal, the CPU and where ringstage's threads were,
# that the step after them still runs and passes, and that the JUnit file
# says all of it. The nested run's own output is in BUILD/watchdog-check.
set -u
b=${1:-build}
out=$b/watchdog-check
for f in "$b/watchdog" "$b/ringstage" "$b/libnccom-hang.so" "$b/libnccomring.so"; do
  test -e "$f" || { echo "hang_check: $f is missing (make test-watchdog builds it)"; exit 2; }
done
rm -rf "$out" && mkdir -p "$out"
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }

"$b/watchdog" steps --table tests/watchdog/testdata/hang-steps.txt --junit "$out/results.xml" --logs "$out" \
  --make "${MAKE:-make} -f tests/watchdog/testdata/hang.mk B=$b" > "$out/run.log" 2>&1
rc=$?
[ $rc -eq 1 ] && ok "watchdog steps: exit 1 (a step failed)" || bad "watchdog steps: exit $rc, want 1"
grep -q '^make test: 1 passed, 2 FAILED (postset-blocks, postset-spins) of 3 steps' "$out/run.log" &&
  ok "the table: 1 passed, 2 FAILED (postset-blocks, postset-spins)" || bad "no summary line saying 2 FAILED"

# expect STEP TEXT: STEP's log says TEXT (an extended regular expression).
expect() {
  if grep -Eq -- "$2" "$out/$1.log"; then ok "$1: $(grep -Em1 -- "$2" "$out/$1.log" | cut -c1-150)"
  else bad "$1: its log does not say /$2/"; sed 's/^/     /' "$out/$1.log" | tail -n 8; fi
}
expect postset-blocks '^watchdog: postset-blocks: ended by the blocked limit: none of its threads ran or waited to run for [0-9.]+ s \(--blocked 5.0 s\); it ran [0-9.]+ s and used [0-9.]+ s of CPU$'
expect postset-blocks '^watchdog:   pid [0-9]+ ringstage \(parent [0-9]+\): 1 thread S in (clock_)?nanosleep \([a-z_]*nanosleep\)'
expect postset-spins '^watchdog: postset-spins: ended by the CPU limit: it used [0-9.]+ s of CPU since its last output'
expect postset-spins '^watchdog:   pid [0-9]+ ringstage \(parent [0-9]+\): 1 thread R running or waiting to run'
expect passes '^ringstage: default cluster: 4 nodes x 32 ranks'

python3 - "$out/results.xml" <<'PY' && ok "results.xml: 3 testcases; the two hangs failures by their limits, the third passed" || fails=$((fails + 1))
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
cases = {c.get("name"): c for c in root.iter("testcase")}
assert list(cases) == ["postset-blocks", "postset-spins", "passes"], list(cases)
assert root.get("tests") == "3" and root.get("failures") == "2", root.attrib
want = {"postset-blocks": "the blocked limit ended it", "postset-spins": "the cpu limit ended it"}
for name, text in want.items():
    f = cases[name].find("failure")
    assert f is not None and f.get("message").startswith(text), (name, f is not None and f.get("message"))
    assert "ringstage" in f.text, name + ": the failure's text does not name the threads"
assert cases["passes"].find("failure") is None
PY

if [ $fails -gt 0 ]; then
  echo "hang_check: $fails FAILED (the nested run: $out/run.log)"
  exit 1
fi
echo "hang_check: all passed"
