#!/bin/sh
# check.sh BUILD - `make test-preload`: build/libnccomring-preload.so, the
# preload shim (preload/), checked from outside and from inside processes
# that run under it. BUILD is an absolute directory holding the shim, the Go
# library (libnccomring.so and its SONAME link), preload-probe, conformance,
# libnccomref.so, boundary, libnccom-hooks{,-cxx}.so and
# preload-standin/libnccom.so.2 (the line style, D26). Every check can
# fail; the run fails when any did. Figures are printed for docs/operating.md.
# Each process that calls through the shim runs under the watchdog
# (WATCHDOG, build/watchdog): one that hangs is ended, and its check fails.
set -u
b=${1:?usage: WATCHDOG=PATH check.sh BUILD}
. "$(dirname "$0")/../../lib/watchdog.sh"
shim=$b/libnccomring-preload.so
lib=$b/libnccomring.so
probe=$b/preload-probe
failed=0
fail() { echo "test-preload: FAIL: $*"; failed=1; }
pass() { echo "test-preload: ok: $*"; }
# w CMD...: CMD under the watchdog. None of these processes sleeps: 20 s
# with none of its threads running or waiting to run is a hang (a first
# call stuck loading the library or starting its runtime, a child after
# fork waiting on a lock the runtime's threads held) and fails its check;
# 2 min of CPU without output is a spin; 10 min of wall clock only the last
# resort. Each takes under 2 s quiet, conformance through the shim 10 s.
w() { watched --blocked 20s --cpu 2m --wall 10m -- "$@"; }
# Nothing from the caller's environment changes what is measured.
# The line style (D26) is NCCL's in these processes, which load no
# libnccom, unless a check sets NCCOM_RING_LOG_STYLE or loads the stand-in.
clean="env -u LD_PRELOAD -u NCCOMRING_LIBRARY -u NCCOM_RING_PLATFORM -u NCCOM_RING_POD_ORDER
  -u NCCL_DEBUG -u NCCL_DEBUG_FILE -u NCCL_DEBUG_SUBSYS -u GOMAXPROCS -u GODEBUG -u NCCOM_RING_LOG_STYLE"

# 0. The shim's dynamic symbols are exactly the four functions under their C
# and C++ names, and each calls (never jumps to) the Go library's entry
# point, keeping its frame while the library runs (KEEP_FRAME in the shim).
want="_Z14ncclBuildRingsiPiiiS_S_
_Z14ncclTopoPresetP8ncclCommP13ncclTopoGraphP13ncclTopoRanks
_Z15ncclTopoPostsetP8ncclCommPiPP13ncclTopoRanksS1_S1_
_Z17ncclTopoGetNetDevP14ncclTopoSystemiP13ncclTopoGraphiPi
ncclBuildRings
ncclTopoGetNetDev
ncclTopoPostset
ncclTopoPreset"
got=$(nm -D --defined-only "$shim" | awk '{print $3}' | LC_ALL=C sort)
if [ "$got" = "$want" ]; then pass ".dynsym holds exactly the 8 names"; else fail ".dynsym is:
$got"; fi
# (x86-64 objdump syntax; a jmp inside the function is its own branch.)
tails=
for entry in $(nm -D -S --defined-only "$shim" | awk '{print $1 ":" $2 ":" $4}'); do
  addr=${entry%%:*}; rest=${entry#*:}; size=${rest%%:*}; name=${rest#*:}
  start=$((0x$addr)); stop=$((0x$addr + 0x$size))
  code=$(objdump -d --no-show-raw-insn --start-address=$start --stop-address=$stop "$shim")
  calls=$(printf '%s\n' "$code" | grep -c 'call  *\*')
  [ "$calls" -eq 1 ] || tails="$tails $name($calls indirect calls)"
  for target in $(printf '%s\n' "$code" | awk '$2 ~ /^jmp/ {print $3}'); do
    case $target in
      \**) tails="$tails $name(jmp $target)" ;;
      *) t=$((0x$target)); [ $t -ge $start ] && [ $t -lt $stop ] || tails="$tails $name(jmp $target)" ;;
    esac
  done
done
if [ -z "$tails" ] && [ -n "$got" ]; then
  pass "each function calls the Go library's entry point (objdump: one indirect call, no tail jump)"
else
  fail "objdump:$tails"
fi

# 1. A process that never calls starts under a 300 MB address-space limit.
if (ulimit -v 300000 && $clean LD_PRELOAD="$shim" sleep 0.1); then
  pass "ulimit -v 300000: LD_PRELOAD=libnccomring-preload.so sleep 0.1 exits 0"
else
  fail "ulimit -v 300000: LD_PRELOAD=libnccomring-preload.so sleep 0.1 failed"
fi
contrast=$( (ulimit -v 300000 && $clean LD_PRELOAD="$lib" sleep 0.1) 2>&1 ); rc=$?
echo "test-preload: ok (expected), the contrast: ulimit -v 300000: LD_PRELOAD=libnccomring.so sleep 0.1 exits $rc:" \
  "$(printf '%s\n' "$contrast" | head -1)"
# ... and a call there is refused cleanly instead of killing the process.
# (The watchdog, a Go program, stays outside the limit.)
# shellcheck disable=SC2086 # clean: env and its options
if w sh -c 'ulimit -v 300000 && exec "$@"' sh $clean NCCL_DEBUG=WARN LD_PRELOAD="$shim" "$probe" missing "RLIMIT_AS"; then
  pass "ulimit -v 300000: the first call returns ncclSystemError with a WARN, the process lives"
else
  fail "ulimit -v 300000: a call through the shim"
fi

# 2. A process that never calls: 1 thread, the Go library not mapped.
if $clean LD_PRELOAD="$shim" "$probe" idle-check; then
  pass "a preloaded process that never calls has 1 thread and no libnccomring.so"
else
  fail "idle-check under the shim"
fi
echo "test-preload: figures, the same process under the Go library and under no preload:"
$clean LD_PRELOAD="$lib" "$probe" idle || fail "idle under the Go library"
$clean "$probe" idle || fail "idle without a preload"

# 3. The conformance suite through the shim.
if w $clean "$b/conformance" --candidate "$shim" --reference "$b/libnccomref.so" --count 2000; then
  pass "conformance through the shim"
else
  fail "conformance through the shim"
fi

# 4. Hooks in a stand-in libnccom loaded RTLD_LOCAL, found through the
# shim's caller address; the SwitchV1 gate.
for run in "rtld-local $b/libnccom-hooks.so" "rtld-local $b/libnccom-hooks-cxx.so" \
           "gate $b/libnccom-hooks.so"; do
  # shellcheck disable=SC2086 # run is "MODE HOOKLIB"
  if w $clean LD_PRELOAD="$shim" "$b/boundary" $run; then pass "boundary $run"; else fail "boundary $run"; fi
done

# 5. fork before the first call; the shim named by a relative path and the
# process changing directory first.
if (cd "$b" && w $clean LD_PRELOAD=./libnccomring-preload.so ./preload-probe fork); then
  pass "fork before the first call"
else
  fail "fork before the first call"
fi
if w $clean LD_PRELOAD="$shim" "$probe" race; then pass "simultaneous first calls"; else fail "race"; fi
# A mapped file whose path forges a /proc/self/maps line naming another
# directory (issue 21): the shim finds itself with dladdr and realpath.
forge=$(mktemp -d)
(cd "$b" && w $clean LD_PRELOAD=./libnccomring-preload.so ./preload-probe maps-forgery "$forge" "$b/libnccomref.so")
case $? in
  0) pass "a file mapped from a path that forges a maps line: the Go library beside the shim was loaded" ;;
  77) echo "test-preload: skipped: the forged maps line (the kernel's line does not fall where the test needs it)" ;;
  *) fail "maps-forgery" ;;
esac
rm -rf "$forge"

# A library that cannot be used: ncclSystemError, one WARN per call only
# when NCCL_DEBUG asks.
missing=$b/no-such-dir/libnccomring.so.0
w $clean NCCL_DEBUG=WARN NCCOMRING_LIBRARY="$missing" LD_PRELOAD="$shim" "$probe" missing \
  "$missing: cannot open shared object file" || fail "missing library, NCCL_DEBUG=WARN"
w $clean NCCOMRING_LIBRARY="$missing" LD_PRELOAD="$shim" "$probe" missing "" ||
  fail "missing library, NCCL_DEBUG unset"
w $clean NCCL_DEBUG=INFO NCCOMRING_LIBRARY="$b/libnccomref.so" LD_PRELOAD="$shim" "$probe" missing \
  "no entry point nccomring_topo_preset_from" || fail "a library without the entry points"
# A NCCOMRING_LIBRARY longer than PATH_MAX is refused, not cut to fit
# (the cut name could be another file): docs/security.md, the preload shim.
longlib=$b/$(printf '%*s' 4200 '' | tr ' ' l)
w $clean NCCL_DEBUG=WARN NCCOMRING_LIBRARY="$longlib" LD_PRELOAD="$shim" "$probe" missing \
  "NCCOMRING_LIBRARY is longer than 4095 bytes; not loaded" || fail "a NCCOMRING_LIBRARY longer than PATH_MAX"
# The shim logs with the library's logger: with NCCL_DEBUG_FILE, the WARNs
# go to that file, not to stderr.
logdir=$(mktemp -d)
w $clean NCCL_DEBUG=WARN NCCL_DEBUG_FILE="$logdir/shim.log" NCCOMRING_LIBRARY="$missing" LD_PRELOAD="$shim" \
  "$probe" missing "$missing: cannot open shared object file" || fail "missing library, NCCL_DEBUG_FILE set"
rm -rf "$logdir"

# 6. What the first call costs through the shim (loading the library and
# starting its runtime) and what a steady call costs, beside the library.
w $clean LD_PRELOAD="$shim" "$probe" latency || fail "latency through the shim"
w $clean LD_PRELOAD="$lib" "$probe" latency || fail "latency of the Go library"

# 7. The line style (D26). Over a stand-in libnccom.so.2 (dlopen'd by the
# probe, making two failing calls from inside it, as libnccom's init
# does), the WARNs take libnccom's form without NCCL_DEBUG; with
# NCCOM_RING_LOG_STYLE=nccl they take NCCL's again, and need NCCL_DEBUG.
standin=$b/preload-standin/libnccom.so.2
ts='[0-9]{4}-(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)-[0-3][0-9] [0-2][0-9]:[0-5][0-9]:[0-6][0-9]\.[0-9]{4} [0-9]+:[0-9]+'
out=$(mktemp)
if w $clean LD_PRELOAD="$shim" "$probe" standin "$standin" > "$out" 2>&1 && [ "$(wc -l < "$out")" -eq 2 ] &&
   grep -Eq "^$ts \[-1\] exports\.go:[0-9]+ CCOM WARN libnccomring: ncclTopoPostset: comm is NULL\$" "$out" &&
   grep -Eq "^$ts \[2\] exports\.go:[0-9]+ CCOM WARN libnccomring: ncclBuildRings: rings is NULL\$" "$out"; then
  pass "over a stand-in libnccom.so.2, NCCL_DEBUG unset: the WARNs in libnccom's form: $(head -1 "$out")"
else
  fail "over a stand-in libnccom.so.2, NCCL_DEBUG unset: want two CCOM WARN lines, got:
$(cat "$out")"
fi
if w $clean NCCOM_RING_LOG_STYLE=nccl NCCL_DEBUG=WARN LD_PRELOAD="$shim" "$probe" standin "$standin" > "$out" 2>&1 &&
   [ "$(wc -l < "$out")" -eq 2 ] &&
   grep -Eq '^[^ :]+:[0-9]+:[0-9]+ \[-1\] NCCL WARN ncclTopoPostset: comm is NULL$' "$out" &&
   grep -Eq '^[^ :]+:[0-9]+:[0-9]+ \[2\] NCCL WARN ncclBuildRings: rings is NULL$' "$out"; then
  pass "NCCOM_RING_LOG_STYLE=nccl over the stand-in: NCCL's form: $(head -1 "$out")"
else
  fail "NCCOM_RING_LOG_STYLE=nccl NCCL_DEBUG=WARN over the stand-in: want two NCCL WARN lines, got:
$(cat "$out")"
fi
if w $clean NCCOM_RING_LOG_STYLE=nccl LD_PRELOAD="$shim" "$probe" standin "$standin" > "$out" 2>&1 && [ ! -s "$out" ]; then
  pass "NCCOM_RING_LOG_STYLE=nccl over the stand-in, NCCL_DEBUG unset: nothing printed (D21)"
else
  fail "NCCOM_RING_LOG_STYLE=nccl, NCCL_DEBUG unset, over the stand-in: printed:
$(cat "$out")"
fi
rm -f "$out"

if [ $failed -ne 0 ]; then echo "test-preload: FAILED"; exit 1; fi
echo "test-preload: passed"
