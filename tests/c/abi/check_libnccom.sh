#!/bin/sh
# check_libnccom.sh BUILD - `make test-check-libnccom` (issues 23, 32): the
# CI gate, mk/check-libnccom.sh and `make check-libnccom LIBNCCOM=PATH`, over
# three ABI fixtures of `make test-abi-tool` (BUILD/abi). Each step's exit
# code must be the fixture's:
#
#   fixture   abi-check  preload  conformance  worst
#   match         0         0          1         1
#   moved         1         0          1         1
#   stripped      2         0          1         2
#
# (conformance is 1 on all three: fixture.c's functions only touch the
# structs, they are no ring stage). One number for the worst, wherever it
# shows: the script's exit code, exit-codes.txt's `worst` line, the highest
# step code, make's `Error N` and its last line, and docs/ci.md's by-hand
# snippet under sh, sh -e and bash -eo pipefail; make itself exits 2. Every
# JUnit file must parse, and its counts agree with the step's code: 0 no
# failure or error, 1 a failure, 2 an error. Then what make says before it
# builds anything: check-libnccom without LIBNCCOM, and the old names.
set -u
b=${1:?usage: check_libnccom.sh BUILD}
make=${MAKE:-make}
fail=0
bad() { echo "test-check-libnccom: FAIL: $*"; fail=1; }
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

# docs/ci.md's by-hand snippet: the sh block after the ci-snippet marker,
# run as documented from the project's root (its paths are build/...).
awk '/^<!-- ci-snippet/ { on = 1; next } on && /^```sh/ { inblock = 1; next }
     inblock && /^```/ { exit } inblock { print }' docs/ci.md | sed "s#build/#$b/#g" > "$tmp/snippet.sh"
[ -s "$tmp/snippet.sh" ] || bad "docs/ci.md: no sh block after the ci-snippet marker"
# Its conformance flags are the script's (one place to change them, and
# the snippet must follow).
limits=$(sed -n 's/^CONFORMANCE_LIMITS="\(.*\)"$/\1/p' mk/check-libnccom.sh)
[ -n "$limits" ] || bad "mk/check-libnccom.sh: no CONFORMANCE_LIMITS line"
grep -q -- "--real .*$limits" "$tmp/snippet.sh" || bad "docs/ci.md's snippet does not pass the script's conformance flags '$limits'"

for spec in match:0:0:1:1 moved:1:0:1:1 stripped:2:0:1:2; do
  f=${spec%%:*}
  want=$(echo "${spec#*:}" | awk -F: '{print "abi-check " $1 "\npreload " $2 "\nconformance " $3 "\nworst " $4}')
  worst=${spec##*:}
  lib=$b/abi/libnccom-$f.so
  out=$b/check-libnccom/$f

  # The script, as CI calls it.
  sh mk/check-libnccom.sh --build "$b" --out "$out" --count 200 "$lib" > "$b/check-libnccom-$f.log" 2>&1
  rc=$?
  [ $rc -eq "$worst" ] || bad "$f: mk/check-libnccom.sh exited $rc, want $worst"
  got=$(cat "$out/exit-codes.txt" 2>/dev/null)
  [ "$got" = "$want" ] || bad "$f: exit codes
$got
want
$want"
  high=$(awk '$1 != "worst" && $2 > m { m = $2 } END { print m + 0 }' "$out/exit-codes.txt" 2>/dev/null)
  [ "$high" = "$worst" ] || bad "$f: the highest step code in exit-codes.txt is $high, want $worst"
  for step in abi-check preload conformance; do
    code=$(echo "$want" | awk -v s=$step '$1 == s {print $2}')
    grep -Eq "^$step +$code  " "$b/check-libnccom-$f.log" || bad "$f: no table row '$step $code' in $b/check-libnccom-$f.log"
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

  # make check-libnccom: make's own exit is 2 (0 only when the worst is 0);
  # its Error line and its last line of its own carry the worst.
  mlog=$b/check-libnccom-$f-make.log
  "$make" --no-print-directory check-libnccom LIBNCCOM="$lib" CHECK_LIBNCCOM_OUT="$out" \
    CHECK_LIBNCCOM_COUNT=200 > "$mlog" 2>&1
  rc=$?
  if [ "$worst" -eq 0 ]; then mwant=0; else mwant=2; fi
  [ $rc -eq $mwant ] || bad "$f: make check-libnccom exited $rc, want $mwant"
  got=$(cat "$out/exit-codes.txt" 2>/dev/null)
  [ "$got" = "$want" ] || bad "$f: exit codes after make check-libnccom: $got"
  if [ "$worst" -ne 0 ]; then
    grep -q "check-libnccom\] Error $worst\$" "$mlog" || bad "$f: no 'Error $worst' from make in $mlog"
    grep -q "^check-libnccom: worst $worst (in $out/exit-codes.txt); make exits 2 for any failure" "$mlog" ||
      bad "$f: make check-libnccom does not say 'worst $worst' and where, in $mlog"
  fi

  # docs/ci.md's snippet: the same worst under every shell CI uses, and
  # every step run (a shell that stopped early leaves a JUnit file out).
  for shell in "sh" "sh -e" "bash -e -o pipefail"; do
    sout=$tmp/$f-snippet
    rm -rf "$sout"
    LIBNCCOM=$lib OUT=$sout COUNT=200 $shell "$tmp/snippet.sh" > "$tmp/snippet.log" 2>&1
    rc=$?
    [ $rc -eq "$worst" ] || bad "$f: docs/ci.md's snippet under '$shell' exited $rc, want $worst ($(tail -1 "$tmp/snippet.log"))"
    for step in abi-check preload conformance; do
      [ -s "$sout/$step.xml" ] || bad "$f: docs/ci.md's snippet under '$shell' did not run $step"
    done
  done
  [ $fail -eq 0 ] && echo "test-check-libnccom: ok: $f: $(echo "$want" | tr '\n' ' ')from the script, exit-codes.txt, make's Error line and the snippet under 3 shells; 3 JUnit files that parse"
done

# What make says before building anything. A fresh BUILD directory it
# would have to fill, and a stamp against which nothing in $b may be newer.
# Each must stop having used well under the minute of CPU the library
# takes to compile: 5 s of CPU (reading the Makefile uses about 0.05 s).
# CPU time, not the wall clock: on a machine busy with other work make
# takes longer, but does no more (issue 32).
touch "$tmp/stamp"
# parse_fail NAME WANT CMD...: CMD exits 2 at once, its message holding WANT.
parse_fail() {
  name=$1 want=$2; shift 2
  python3 tests/lib/cpu_time.py "$tmp/parse.cpu" "$@" > "$tmp/parse.log" 2>&1
  rc=$?
  ms=$(cat "$tmp/parse.cpu" 2>/dev/null)
  [ $rc -eq 2 ] || bad "$name: exited $rc, want 2"
  grep -qF -- "$want" "$tmp/parse.log" || bad "$name: the message does not say '$want': $(cat "$tmp/parse.log")"
  [ "${ms:-0}" -le 5000 ] || bad "$name: used $ms ms of CPU: it built something first?"
  [ ! -e "$tmp/fresh" ] || bad "$name: created $tmp/fresh"
}
parse_fail "make check-libnccom without LIBNCCOM" "make check-libnccom LIBNCCOM=PATH" \
  env -u LIBNCCOM "$make" --no-print-directory check-libnccom BUILD="$tmp/fresh"
parse_fail "make check-libnccom LIBNCCOM=" "make check-libnccom LIBNCCOM=PATH" \
  "$make" --no-print-directory check-libnccom LIBNCCOM= BUILD="$tmp/fresh"
parse_fail "make check-libnccom LIB=x (the old name)" "LIBNCCOM=PATH" \
  env -u LIBNCCOM "$make" --no-print-directory check-libnccom LIB=x BUILD="$tmp/fresh"
parse_fail "make conformance NCCOM_REF_LIB=x (the old name)" "make conformance LIBNCCOM=PATH" \
  "$make" --no-print-directory conformance NCCOM_REF_LIB=x BUILD="$tmp/fresh"
parse_fail "NCCOM_REF_LIB=x make conformance (the old name)" "make conformance LIBNCCOM=PATH" \
  env NCCOM_REF_LIB=x "$make" --no-print-directory conformance BUILD="$tmp/fresh"
# The same in the real build directory: nothing touched.
parse_fail "make check-libnccom without LIBNCCOM, in $b" "make check-libnccom LIBNCCOM=PATH" \
  env -u LIBNCCOM "$make" --no-print-directory check-libnccom
newer=$(find "$b" -newer "$tmp/stamp" | head -3)
[ -z "$newer" ] || bad "make changed $b while reading the Makefile: $newer"
# With none of them, make reads the Makefile as before.
env -u LIBNCCOM -u NCCOM_REF_LIB "$make" --no-print-directory -n all conformance > "$tmp/parse.log" 2>&1 ||
  bad "make -n all conformance with no LIBNCCOM: $(tail -3 "$tmp/parse.log")"
grep -q -- "--reference $b/libnccomref.so " "$tmp/parse.log" ||
  bad "make conformance without LIBNCCOM does not use the reference model: $(grep -- --reference "$tmp/parse.log")"
[ $fail -eq 0 ] && echo "test-check-libnccom: ok: make stops at once without LIBNCCOM and on LIB= and NCCOM_REF_LIB=, naming LIBNCCOM, and changes nothing in $b"

[ $fail -eq 0 ] && echo "test-check-libnccom: passed"
exit $fail
