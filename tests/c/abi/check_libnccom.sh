#!/bin/sh
# check_libnccom.sh BUILD - `make test-check-libnccom` (issue 23): the CI
# gate, `make check-libnccom LIB=PATH`, over three ABI fixtures of `make
# test-abi-tool` (BUILD/abi). Each step's exit code must be the fixture's:
#
#   fixture   abi-check  preload  conformance  worst
#   match         0         0          1         1
#   moved         1         0          1         1
#   stripped      2         0          1         2
#
# (conformance is 1 on all three: fixture.c's functions only touch the
# structs, they are no ring stage). make exits 0 only when the worst is 0;
# mk/check-libnccom.sh itself exits with the worst. Every JUnit file must
# parse, and its counts agree with the step's code: 0 no failure or error,
# 1 a failure, 2 an error.
set -u
b=${1:?usage: check_libnccom.sh BUILD}
make=${MAKE:-make}
fail=0
bad() { echo "test-check-libnccom: FAIL: $*"; fail=1; }

for spec in match:0:0:1:1 moved:1:0:1:1 stripped:2:0:1:2; do
  f=${spec%%:*}
  want=$(echo "${spec#*:}" | awk -F: '{print "abi-check " $1 "\npreload " $2 "\nconformance " $3 "\nworst " $4}')
  worst=${spec##*:}
  out=$b/check-libnccom/$f
  "$make" --no-print-directory check-libnccom LIB="$b/abi/libnccom-$f.so" CHECK_LIBNCCOM_OUT="$out" \
    CHECK_LIBNCCOM_COUNT=200 > "$b/check-libnccom-$f.log" 2>&1
  rc=$?
  if [ "$worst" -eq 0 ] && [ $rc -ne 0 ] || [ "$worst" -ne 0 ] && [ $rc -eq 0 ]; then
    bad "$f: make check-libnccom exited $rc, want $([ "$worst" -eq 0 ] && echo 0 || echo 'not 0')"
  fi
  got=$(cat "$out/exit-codes.txt" 2>/dev/null)
  [ "$got" = "$want" ] || bad "$f: exit codes
$got
want
$want"
  # The table make printed holds each step's row.
  for step in abi-check preload conformance; do
    code=$(echo "$want" | awk -v s=$step '$1 == s {print $2}')
    grep -Eq "^$step +$code  " "$b/check-libnccom-$f.log" || bad "$f: no table row '$step $code' in $b/check-libnccom-$f.log"
  done
  # The script's own exit code is the worst, not make's 2.
  sh mk/check-libnccom.sh "$b" "$b/abi/libnccom-$f.so" "$out" 200 > /dev/null 2>&1
  rc=$?
  [ $rc -eq "$worst" ] || bad "$f: mk/check-libnccom.sh exited $rc, want $worst"
  for step in abi-check preload conformance; do
    code=$(echo "$want" | awk -v s=$step '$1 == s {print $2}')
    python3 - "$out/$step.xml" "$code" <<'EOF' || bad "$f: $out/$step.xml"
import sys
import xml.etree.ElementTree as ET
path, code = sys.argv[1], int(sys.argv[2])
root = ET.parse(path).getroot()
assert root.tag == "testsuites", root.tag
cases = root.findall("./testsuite/testcase")
failures = len(root.findall("./testsuite/testcase/failure"))
errors = len(root.findall("./testsuite/testcase/error"))
assert cases and int(root.get("tests")) == len(cases), (root.get("tests"), len(cases))
assert (int(root.get("failures")), int(root.get("errors"))) == (failures, errors), root.attrib
want = {0: failures == 0 and errors == 0, 1: failures > 0 and errors == 0, 2: errors > 0}[code]
assert want, "%s: exit %d with %d failures, %d errors" % (path, code, failures, errors)
EOF
  done
  [ $fail -eq 0 ] && echo "test-check-libnccom: ok: $f: $(echo "$want" | tr '\n' ' ')and 3 JUnit files that parse"
done
[ $fail -eq 0 ] && echo "test-check-libnccom: passed"
exit $fail
