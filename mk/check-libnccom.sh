#!/bin/sh
# check-libnccom.sh BUILD LIB OUT [COUNT] - `make check-libnccom LIB=PATH`
# (issue 23), the CI gate over one libnccom build. Runs, each to its end
# whatever the others gave:
#   abi-check    BUILD/nccom-abi check LIB      (its DWARF against layout/)
#   preload      BUILD/nccom-abi preload LIB    (can LD_PRELOAD replace the
#                                                four over LIB's own calls?)
#   conformance  BUILD/conformance --real with LIB as the reference
#                                               (COUNT random clusters;
#                                                loads LIB, so LIB's own
#                                                dependencies must be there)
# and keeps each exit code, which make would fold into its own 2: each
# step's code and what it means in a table, the JUnit files (and the
# harness's JSON summary) in OUT, the codes in OUT/exit-codes.txt ("STEP
# CODE" lines, then "worst CODE"), and the worst code (the highest) as
# this script's. The codes: 0 pass, 1 a finding, 2 unusable input (nccom-abi:
# not ELF, no DWARF; the harness: LIB cannot be loaded or lacks the four),
# 3 the harness saw a library crash, 4 a case ran past its timeout.
set -u
b=${1:?usage: check-libnccom.sh BUILD LIB OUT [COUNT]}
lib=${2:?usage: check-libnccom.sh BUILD LIB OUT [COUNT]}
out=${3:?usage: check-libnccom.sh BUILD LIB OUT [COUNT]}
count=${4:-20000}
mkdir -p "$out" || exit 2
rm -f "$out"/*.xml "$out"/*.json "$out"/*.log "$out/exit-codes.txt"

worst=0
table=
# record STEP CODE FILE: one row; the worst code so far.
record() {
  case $1:$2 in
    *:0) what="pass" ;;
    *:1) what="a finding" ;;
    conformance:2) what="LIB cannot be used (load, symbols) or bad flags" ;;
    *:2) what="unusable input" ;;
    conformance:3) what="a library crashed" ;;
    conformance:4) what="a case ran past --timeout" ;;
    *) what="unexpected exit" ;;
  esac
  table="$table$(printf '%-12s %4s  %-48s %s' "$1" "$2" "$what" "$3")
"
  echo "$1 $2" >> "$out/exit-codes.txt"
  [ "$2" -gt "$worst" ] && worst=$2
}

# Each step's output goes to its log, so the table stays readable; the log
# is named in the row's last column when the step did not pass.
"$b/nccom-abi" check --junit "$out/abi-check.xml" "$lib" > "$out/abi-check.log" 2>&1
record abi-check $? "$out/abi-check.xml"
"$b/nccom-abi" preload --junit "$out/preload.xml" "$lib" > "$out/preload.log" 2>&1
record preload $? "$out/preload.xml"
# The harness loads LIB: --real compares what the spec fixes (README, "The
# conformance suite"); --timeout bounds a hang.
"$b/conformance" --candidate "$b/libnccomring.so" --reference "$lib" --real --count "$count" --timeout 60 \
  --json "$out/conformance.json" --junit "$out/conformance.xml" > "$out/conformance.log" 2>&1
record conformance $? "$out/conformance.xml"

echo "check-libnccom: $lib"
printf '%-12s %4s  %-48s %s\n' STEP EXIT MEANING JUNIT
printf '%s' "$table"
echo "worst $worst" >> "$out/exit-codes.txt"
echo "check-libnccom: worst exit $worst (each step's output: $out/*.log; the codes: $out/exit-codes.txt)"
exit "$worst"
