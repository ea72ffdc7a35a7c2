#!/bin/sh
# check-libnccom.sh - the CI gate over one libnccom build (issues 23, 32).
# CI runs this script itself: its exit code is the worst step's, which
# `make check-libnccom LIBNCCOM=PATH` cannot pass on (make exits 2 for any
# failing recipe). Run with --help for the usage.

# The conformance step's limits on one case. Kept in one place so a change
# to the harness's flags is a change to this line (and to docs/ci.md's
# snippet, which tests/c/abi/check_libnccom.sh checks against it).
CONFORMANCE_LIMITS="--cpu-limit 60 --blocked-limit 10 --timeout 600"
set -u

usage() {
  cat <<EOF
usage: sh mk/check-libnccom.sh [--out DIR] [--count N] [--steps LIST] [--build DIR] LIBNCCOM

Checks the libnccom build LIBNCCOM (a file, e.g. libnccom.so.2). Builds the
tools it needs first (make -s in the project), then runs each step to its
end whatever the others gave:
  abi-check    BUILD/nccom-abi check LIBNCCOM     its DWARF against layout/
  preload      BUILD/nccom-abi preload LIBNCCOM   can LD_PRELOAD replace the four?
  conformance  BUILD/conformance --real, LIBNCCOM as the reference
               ($CONFORMANCE_LIMITS; loads LIBNCCOM, so its dependencies must be installed)
Prints a table of the exit codes, writes DIR/STEP.xml (JUnit), DIR/STEP.log,
DIR/conformance.json and DIR/exit-codes.txt ("STEP CODE" lines, then
"worst CODE"), and exits with the worst (highest) code:
  0 pass, 1 a finding, 2 no verdict (unusable input, LIBNCCOM cannot be
  loaded or lacks the four, bad arguments, or the tools did not build),
  3 the harness saw a library crash, 4 a run limit ended a hung case (conformance.json: stopped.limit).

  --out DIR      results (default BUILD/check-libnccom)
  --count N      conformance: random clusters (default 20000, about 100 s)
  --steps LIST   comma-separated steps to run (default abi-check,preload,conformance;
                 abi-check,preload needs no loadable build: a plain runner)
  --build DIR    make's build directory, relative to the project (default build)
EOF
}

# Bad arguments: exit 2 before anything is built or any result is touched.
die() { echo "check-libnccom.sh: $*" >&2; echo "run sh mk/check-libnccom.sh --help for the usage" >&2; exit 2; }
# A path as given from where the script was started: the script runs make
# from the project's root.
abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }

out= count=20000 steps=abi-check,preload,conformance build=build lib=
while [ $# -gt 0 ]; do
  case $1 in
    -h|--help) usage; exit 0 ;;
    --out|--count|--steps|--build)
      [ $# -ge 2 ] || die "$1 needs a value"
      case $1 in
        --out) out=$2 ;; --count) count=$2 ;; --steps) steps=$2 ;; --build) build=$2 ;;
      esac
      shift 2 ;;
    --) shift; break ;;
    -*) die "unknown flag $1" ;;
    *) [ -z "$lib" ] || die "one LIBNCCOM expected, got '$lib' and '$1'"; lib=$1; shift ;;
  esac
done
if [ $# -gt 0 ]; then
  [ -z "$lib" ] && [ $# -eq 1 ] || die "one LIBNCCOM expected"
  lib=$1
fi
[ -n "$lib" ] || die "name the libnccom build to check: sh mk/check-libnccom.sh LIBNCCOM"
case $count in ''|*[!0-9]*) die "--count wants a number, got '$count'" ;; esac
case ,$steps, in ,,) die "--steps is empty" ;; esac
for s in $(echo "$steps" | tr ',' ' '); do
  case $s in abi-check|preload|conformance) ;; *) die "unknown step '$s' (abi-check, preload, conformance)" ;; esac
done
want() { case ,$steps, in *,$1,*) return 0 ;; esac; return 1; }

lib=$(abs "$lib")
[ -n "$out" ] && out=$(abs "$out")
root=$(cd "$(dirname "$0")/.." && pwd) || exit 2
cd "$root" || exit 2
[ -n "$out" ] || out=$(abs "$build/check-libnccom")
mkdir -p "$out" || exit 2
# No file from an earlier run may pass for this one's.
rm -f "$out"/*.xml "$out"/*.json "$out"/*.log "$out/exit-codes.txt"

worst=0
table=
# record STEP CODE FILE: one row of the table and of exit-codes.txt; FILE
# is the step's JUnit file, or what to read when there is none.
record() {
  case $1:$2 in
    *:0) what="pass" ;;
    input:2) what="no such file" ;;
    build:2) what="the tools did not build" ;;
    *:1) what="a finding" ;;
    conformance:2) what="cannot be loaded, lacks the four, or bad flags" ;;
    *:2) what="unusable input" ;;
    conformance:3) what="a library crashed" ;;
    conformance:4) what="a run limit ended a hung case" ;;
    *) what="unexpected exit" ;;
  esac
  table="$table$(printf '%-12s %4s  %-48s %s' "$1" "$2" "$what" "$3")
"
  echo "$1 $2" >> "$out/exit-codes.txt"
  if [ "$2" -gt "$worst" ]; then worst=$2; fi
}
# finish: the table, the worst code in exit-codes.txt and as the exit code,
# the three always the same number.
finish() {
  echo "check-libnccom: $lib"
  printf '%-12s %4s  %-48s %s\n' STEP EXIT MEANING JUNIT
  printf '%s' "$table"
  echo "worst $worst" >> "$out/exit-codes.txt"
  echo "check-libnccom: worst exit $worst (each step's output: $out/*.log; the codes: $out/exit-codes.txt)"
  exit "$worst"
}

# A mistyped path is said at once, not after the build.
if [ ! -f "$lib" ]; then
  record input 2 -
  finish
fi

# The tools, built by make (quiet; its output in build.log). A failed build
# is no verdict on LIBNCCOM: exit 2, and no step runs.
targets="$build/nccom-abi"
want conformance && targets="$targets $build/conformance $build/libnccomring.so $build/libnccomring.so.0"
# shellcheck disable=SC2086 # targets is a list of words
if ! ${MAKE:-make} -s --no-print-directory BUILD="$build" $targets > "$out/build.log" 2>&1; then
  record build 2 "$out/build.log"
  finish
fi

# Each step's output goes to its log, so the table stays readable.
if want abi-check; then
  c=0
  "$build/nccom-abi" check --junit "$out/abi-check.xml" "$lib" > "$out/abi-check.log" 2>&1 || c=$?
  record abi-check $c "$out/abi-check.xml"
fi
if want preload; then
  c=0
  "$build/nccom-abi" preload --junit "$out/preload.xml" "$lib" > "$out/preload.log" 2>&1 || c=$?
  record preload $c "$out/preload.xml"
fi
# The harness loads LIBNCCOM: --real compares what the spec fixes (README,
# "The conformance suite").
if want conformance; then
  c=0
  # shellcheck disable=SC2086 # CONFORMANCE_LIMITS is a list of flags
  "$build/conformance" --candidate "$build/libnccomring.so" --reference "$lib" --real --count "$count" \
    $CONFORMANCE_LIMITS --json "$out/conformance.json" --junit "$out/conformance.xml" > "$out/conformance.log" 2>&1 || c=$?
  record conformance $c "$out/conformance.xml"
fi
finish
