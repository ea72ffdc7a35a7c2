#!/bin/sh
# check.sh - the LD_PRELOAD proof (issue #3), run by `make test-proofs` and
# by ctest (tests/c/proofs.cmake).
#
#   check.sh STANDIN_LIB STANDIN_HOST NO_LOCAL_NET_HOST NCCOMRING_LIB REF_LIB [SYMBOLIC_DIR]
#
# STANDIN_LIB        build/libnccom-standin.so (plain -fPIC -shared)
# STANDIN_HOST       build/standin-host (NEEDED libnccom-standin.so)
# NO_LOCAL_NET_HOST  build/no-local-net (NEEDED libnccomring.so.0 only)
# NCCOMRING_LIB      build/libnccomring.so, the library preloaded
# REF_LIB            build/libnccomref.so, the reference model
# SYMBOLIC_DIR       optional: a directory holding the same stand-in linked
#                    with -Wl,-Bsymbolic, for the negative control
set -eu

if [ $# -lt 5 ]; then
  echo "usage: $0 STANDIN_LIB STANDIN_HOST NO_LOCAL_NET_HOST NCCOMRING_LIB REF_LIB [SYMBOLIC_DIR]" >&2
  exit 2
fi
abs() { (cd "$(dirname "$1")" && printf '%s/%s\n' "$(pwd -P)" "$(basename "$1")"); }
STANDIN=$(abs "$1")
HOST=$(abs "$2")
NOLOCAL=$(abs "$3")
LIB=$(abs "$4")
REF=$(abs "$5")
SYMBOLIC_DIR=${6:-}

# Nothing from the caller's environment may change the results or the logs.
unset NCCL_DEBUG NCCL_DEBUG_SUBSYS NCCL_DEBUG_FILE NCCOM_RING_PLATFORM NCCOM_RING_POD_ORDER LD_PRELOAD || true
# The WARN line read below is NCCL's form (D21), chosen rather than left to
# whether the process maps a libnccom (D26).
export NCCOM_RING_LOG_STYLE=nccl

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "check.sh: FAIL: $*" >&2; exit 1; }
step() { echo "== $*"; }

NAMES="ncclTopoPreset ncclTopoPostset ncclBuildRings ncclTopoGetNetDev"

step "the stand-in exports the four functions, ncclTopoGetLocalNet and its driver"
nm -D --defined-only "$STANDIN" > "$TMP/standin.dynsym"
for name in $NAMES ncclTopoGetLocalNet standinBuildGraphTransports standinCallBuildRings standinCallGetNetDev; do
  grep -Eq " T $name\$" "$TMP/standin.dynsym" || fail "$STANDIN does not export $name"
done
echo "ok: nm -D --defined-only lists all of them"

step "the stand-in is interposable: no DT_SYMBOLIC, and its own calls of the four go through its PLT"
if readelf -dW "$STANDIN" | grep -Eq '\(SYMBOLIC\)|FLAGS.*SYMBOLIC'; then
  fail "$STANDIN is linked -Bsymbolic"
fi
readelf -rW "$STANDIN" > "$TMP/standin.relocs"
objdump -d --no-show-raw-insn "$STANDIN" > "$TMP/standin.dis"
for name in $NAMES; do
  line=$(grep -E "JUMP_SLOT +[0-9a-f]+ +$name( |\$)" "$TMP/standin.relocs") ||
    fail "no JUMP_SLOT relocation for $name in $STANDIN"
  echo "readelf -r: $line" | tr -s ' '
  call=$(grep -E "(call|jmp) +[0-9a-f]+ <$name@plt>" "$TMP/standin.dis" | head -1)
  [ -n "$call" ] || fail "objdump -d shows no call of $name@plt in $STANDIN"
  echo "objdump -d: $call" | tr -s ' \t' '  '
done

step "the host is linked against the stand-in, not libnccomring"
readelf -dW "$HOST" > "$TMP/host.dyn"
grep -q 'NEEDED.*\[libnccom-standin.so\]' "$TMP/host.dyn" || fail "$HOST does not need libnccom-standin.so"
if grep -q 'NEEDED.*libnccomring' "$TMP/host.dyn"; then fail "$HOST needs libnccomring"; fi
echo "ok: NEEDED libnccom-standin.so"

step "without LD_PRELOAD: both call paths get the stand-in's wrong answers"
"$HOST" --expect standin --ref "$REF"

step "without LD_PRELOAD, --expect reference must fail (the test can tell the two apart)"
if "$HOST" --expect reference --ref "$REF" > "$TMP/neg.out" 2>&1; then
  cat "$TMP/neg.out"
  fail "--expect reference passed without LD_PRELOAD"
fi
echo "ok: failed as it must ($(grep -c 'FAIL' "$TMP/neg.out") failures reported)"

step "LD_PRELOAD=$LIB: both call paths give the reference model's results; D19 fallback"
LD_PRELOAD="$LIB" "$HOST" --expect reference --ref "$REF"

step "LD_PRELOAD: --print direct and --print driver equal --print reference line for line"
"$HOST" --print reference --ref "$REF" | tail -n +2 > "$TMP/reference.txt"
for path in direct driver; do
  LD_PRELOAD="$LIB" "$HOST" --print "$path" --ref "$REF" | tail -n +2 > "$TMP/$path.txt"
  cmp -s "$TMP/$path.txt" "$TMP/reference.txt" || {
    diff "$TMP/$path.txt" "$TMP/reference.txt" | head -20
    fail "--print $path under LD_PRELOAD differs from the reference"
  }
done
echo "ok: $(wc -l < "$TMP/reference.txt") lines identical"
grep -E '^rank 0 channel [01]:|^ncclTopoGetNetDev' "$TMP/direct.txt"

if [ -n "$SYMBOLIC_DIR" ]; then
  step "control: a -Bsymbolic stand-in cannot be preloaded over for its internal calls"
  SYM=$(abs "$SYMBOLIC_DIR/libnccom-standin.so")
  readelf -dW "$SYM" | grep -Eq 'SYMBOLIC' || fail "$SYM is not linked -Bsymbolic"
  if readelf -rW "$SYM" | grep -Eq "JUMP_SLOT.* (ncclTopoPreset|ncclTopoPostset|ncclBuildRings|ncclTopoGetNetDev)( |\$)"; then
    fail "$SYM still has JUMP_SLOT relocations for the four"
  fi
  LD_LIBRARY_PATH="$(dirname "$SYM")" LD_PRELOAD="$LIB" "$HOST" --expect split --ref "$REF"
fi

step "D19 without any ncclTopoGetLocalNet: ncclInternalError and the exact WARN"
for obj in "$NOLOCAL" "$LIB"; do
  if nm -D --defined-only "$obj" | grep -q ' ncclTopoGetLocalNet$'; then fail "$obj defines ncclTopoGetLocalNet"; fi
done
if readelf -dW "$NOLOCAL" | grep -q 'NEEDED.*standin'; then fail "$NOLOCAL needs the stand-in"; fi
NCCL_DEBUG=WARN NCCL_DEBUG_FILE="$TMP/warn.log" "$NOLOCAL"
cat "$TMP/warn.log"
want='ncclTopoGetNetDev: graph is NULL and the host process provides no ncclTopoGetLocalNet to fall back on'
[ "$(wc -l < "$TMP/warn.log")" -eq 1 ] || fail "want exactly one log line"
grep -Eq "^[^ ]+:[0-9]+:[0-9]+ \[3\] NCCL WARN $want\$" "$TMP/warn.log" ||
  fail "the WARN line is not '<host>:<pid>:<tid> [3] NCCL WARN $want'"
echo "ok: exact WARN text"

echo "check.sh: LD_PRELOAD proof passed"
