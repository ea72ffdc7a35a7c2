#!/bin/sh
# check.sh BUILD - `make test-security` (issue 21, docs/security.md): the
# attacks another user can make on a job through shared files and the
# environment, reproduced against the built library, preload shim and
# tools. BUILD is an absolute directory holding libnccomring.so (and its
# SONAME link), libnccomring-preload.so, libnccomring-evil.so,
# security-host, ringstage and nccom-rings. Every host runs under the
# watchdog (WATCHDOG, build/watchdog): a wait is a failure, ended with the
# watchdog's lines naming where each thread waited.
# The set-user-ID test needs root and a file system that honours the
# set-user-ID bit; where either is missing it says so and is skipped.
set -u
b=${1:?usage: WATCHDOG=PATH check.sh BUILD}
. "$(dirname "$0")/../../lib/watchdog.sh"
lib=$b/libnccomring.so
shim=$b/libnccomring-preload.so
host=$b/security-host
tool=$b/nccom-rings
tmp=$(mktemp -d)
chmod 755 "$tmp" # the set-user-ID host's directory must be reachable by nobody
trap 'kill $catpid 2>/dev/null; rm -rf "$tmp"' EXIT
catpid=
failed=0
fail() { echo "test-security: FAIL: $*"; failed=1; }
pass() { echo "test-security: ok: $*"; }
clean="env -u LD_PRELOAD -u NCCOMRING_LIBRARY -u NCCOM_RING_PLATFORM -u NCCOM_RING_POD_ORDER -u NCCOM_RING_DUMP
  -u NCCOM_RING_LAYOUT -u NCCOM_RING_ABI_CHECK -u NCCOM_RING_GOMAXPROCS -u NCCL_DEBUG -u NCCL_DEBUG_FILE
  -u NCCL_DEBUG_SUBSYS NCCOM_RING_LOG_STYLE=nccl"
# (The lines read here are NCCL's, D21: chosen, not left to whether a
# libnccom is loaded, D26.)
out=$tmp/out
# run CMD...: runs CMD with stdout and stderr in $out; rc. None of these
# commands sleeps: 20 s with none of its threads running or waiting to run
# is a call waiting (on a FIFO, a lock), and fails the check; 2 min of CPU
# without output is a spin (a read of /dev/zero to its end); 10 min of wall
# clock only the last resort. Each ends in well under a second quiet.
run() {
  watched --blocked 20s --cpu 2m --wall 10m -- "$@" > "$out" 2>&1
  rc=$?
  if [ $rc -eq 124 ]; then
    echo "test-security: $*: ended by the watchdog:"
    grep '^watchdog:' "$out"
  fi
}
# warns: the number of NCCL WARN lines in $out.
warns() { grep -c 'NCCL WARN' "$out"; }
show() { sed 's/^/  | /' "$out" | head -20; }
nl=$(printf '\n.')
nl=${nl%.}

# ---- 0. The negative control: a host that waits on a FIFO fails ----

# What every check below relies on: a host that waits (here on purpose,
# after the stage started the library's runtime) is ended by the watchdog's
# blocked limit (2 s here, to be cheap; run's is 20 s), which says so and
# where its threads were (the system call, openat, and the kernel function
# only where the kernel lets the watchdog read them).
mkfifo "$tmp/control"
# shellcheck disable=SC2086 # clean: env and its options
watched --blocked 2s --cpu 2m --wall 10m -- $clean "$host" wait-fifo "$lib" "$tmp/control" > "$out" 2>&1
rc=$?
if [ $rc -eq 124 ] && grep -q '^watchdog: security-host: ended by the blocked limit' "$out" &&
   grep -q '^watchdog:   pid [0-9]* security-host (parent [0-9]*): ' "$out"; then
  pass "the negative control: a host waiting to open a FIFO is ended by the watchdog's blocked limit: $(grep '^watchdog:   pid' "$out" | sed 's/^watchdog: *//')"
else fail "the negative control: a host waiting on a FIFO was not ended by the blocked limit (exit $rc)"; show; fi

# ---- 1. Wiring dumps in a directory others can write into ----

dumps=$tmp/dumps
mkdir -m 1777 "$dumps" # sticky, as /tmp: accepted
victim=$tmp/victim
echo "precious" > "$victim"
run $clean "$host" dump-links "$lib" "$dumps" "$victim"
if [ $rc -eq 0 ] && [ "$(cat "$victim")" = precious ]; then pass "$(tail -1 "$out" | sed 's/^security-host: //')"
else fail "links planted under the dump names (exit $rc)"; show; fi

for kind in fifo zero; do
  d=$tmp/swap-$kind
  mkdir -m 700 "$d"
  run $clean NCCL_DEBUG=WARN "$host" dump-swap "$lib" "$d" $kind
  if [ $rc -eq 0 ] && [ "$(warns)" = 0 ]; then pass "$(grep '^security-host:' "$out" | sed 's/^security-host: //')"
  else fail "dump swapped for $kind (exit $rc)"; show; fi
done

# A directory another user could write into, or another user's: one WARN
# (W1) per Postset, the call's result unchanged, nothing written there.
refused() { # DIR WANT DESC
  run $clean NCCL_DEBUG=WARN NCCOM_RING_DUMP="$1" "$host" stage "$lib"
  n=$(grep -c "NCCL WARN ncclTopoPostset: NCCOM_RING_DUMP=\"$1\": cannot write rank [01]'s wiring dump: \"$1\" $2; the call's result stands" "$out")
  if [ $rc -eq 0 ] && [ "$n" = 2 ] && [ "$(warns)" = 2 ] && [ -z "$(ls -A "$1" 2>/dev/null)" ]; then
    pass "$3: refused, one WARN per Postset (2 ranks), every call succeeded"
  else fail "$3 (exit $rc, $n WARNs of the text)"; show; fi
}
mkdir -m 777 "$tmp/world"
chmod 777 "$tmp/world" # whatever the umask
refused "$tmp/world" "is writable by group or others without the sticky bit (mode 0777): refused, another user could replace the dumps; chmod go-w or +t" \
  "a world-writable dump directory without the sticky bit"
mkdir -m 700 "$tmp/real"
ln -s "$tmp/real" "$tmp/link"
refused "$tmp/link" "is a symbolic link: a dump directory must not be one" "a dump directory that is a symbolic link"
# Issue 34 (F3): a link on the path, not only at its end, is refused and
# named (before, it was followed: the dumps went into $tmp/real/dumps).
mkdir -m 700 "$tmp/real/dumps"
run $clean NCCL_DEBUG=WARN NCCOM_RING_DUMP="$tmp/link/dumps" "$host" stage "$lib"
n=$(grep -c "NCCL WARN ncclTopoPostset: NCCOM_RING_DUMP=\"$tmp/link/dumps\": cannot write rank [01]'s wiring dump: \"$tmp/link\" is a symbolic link on the dump directory's path: links there are not followed; name the directory without them; the call's result stands" "$out")
if [ $rc -eq 0 ] && [ "$n" = 2 ] && [ "$(warns)" = 2 ] && [ -z "$(ls -A "$tmp/real/dumps")" ]; then
  pass "a symbolic link on the dump directory's path: refused, named, one WARN per Postset (2 ranks), every call succeeded"
else fail "a symbolic link on the dump directory's path (exit $rc, $n WARNs of the text)"; show; fi
if [ "$(id -u)" = 0 ]; then
  mkdir -m 755 "$tmp/theirs"
  chown nobody "$tmp/theirs"
  refused "$tmp/theirs" "is owned by uid $(id -u nobody), not by this process's effective uid 0: another user's directory is refused" \
    "a dump directory owned by another user (nobody)"
else
  echo "test-security: skipped: a dump directory owned by another user: needs root to give one away"
fi

# ---- 2. NCCL_DEBUG_FILE: links, FIFOs, devices, long paths ----

# logfile VALUE WANT DESC: the failing call returns at once (security-host
# warn: ncclInvalidArgument), one WARN on stdout says WANT about the file,
# and the call's own WARN follows it there.
logfile() {
  run $clean NCCL_DEBUG=WARN NCCL_DEBUG_FILE="$1" "$host" warn "$lib"
  if [ $rc -eq 0 ] && [ "$(warns)" = 2 ] && grep -q "NCCL WARN NCCL_DEBUG_FILE=$2; logging to stdout" "$out" &&
     grep -q 'NCCL WARN ncclTopoPreset: comm is NULL' "$out"; then
    pass "NCCL_DEBUG_FILE $3: one WARN, the lines on stdout, the call returned"
  else fail "NCCL_DEBUG_FILE $3 (exit $rc)"; show; fi
}
mkfifo "$tmp/fifo"
logfile "$tmp/fifo" "\"$tmp/fifo\" is a FIFO, not a regular file" "a FIFO without a reader"
# A reader that waits, and would leave (SIGPIPE) once lines came: none come.
cat "$tmp/fifo" > "$tmp/fifo.read" &
catpid=$!
logfile "$tmp/fifo" "\"$tmp/fifo\" is a FIFO, not a regular file" "a FIFO with a reader"
kill $catpid 2>/dev/null
wait $catpid 2>/dev/null
catpid=
logfile /dev/zero '"/dev/zero" is a character device, not a regular file' "/dev/zero"
echo "precious" > "$tmp/target"
ln -s "$tmp/target" "$tmp/log-link"
logfile "$tmp/log-link" "\"$tmp/log-link\" is a symbolic link, not a regular file" "a symbolic link"
[ "$(cat "$tmp/target")" = precious ] || fail "the link's target was written"
logfile "$tmp" "\"$tmp\" is a directory, not a regular file" "a directory"

# 1,030 bytes: once cut at 1,024 into another file's name; now used whole.
long=$tmp
while [ ${#long} -lt 900 ]; do long=$long/dddddddddddddddddddddddddddddddddddddddddddddddddd; done
mkdir -p "$long"
long=$long/$(printf '%*s' $((1030 - ${#long} - 1)) '' | tr ' ' l)
run $clean NCCL_DEBUG=WARN NCCL_DEBUG_FILE="$long" "$host" warn "$lib"
cut=$(printf '%s' "$long" | cut -c1-1023)
if [ $rc -eq 0 ] && [ ${#long} -eq 1030 ] && grep -q 'NCCL WARN ncclTopoPreset: comm is NULL' "$long" && [ ! -e "$cut" ] &&
   [ "$(warns)" = 0 ]; then
  pass "NCCL_DEBUG_FILE of 1,030 bytes: that file written, nothing at its first 1,023 bytes"
else fail "NCCL_DEBUG_FILE of ${#long} bytes (exit $rc)"; show; fi
# Longer than PATH_MAX once %p is expanded: refused, never cut.
huge=$tmp/$(printf '%*s' 4080 '' | tr ' ' h)%p
logfile "$huge" '".*hhhh"\.\.\. ([0-9]* bytes) is longer than 4095 bytes once %h and %p are expanded' "longer than PATH_MAX after %p"
if ls "$tmp" | grep -q '^hhhh'; then fail "a file was created from a cut NCCL_DEBUG_FILE"; fi

# ---- 3. Values with newlines cannot forge log lines ----

forged="${nl}forged:1:1 [0] NCCL WARN every rank agrees"
# envline NAME VALUE WARNS RC ARGS...: ringstage ARGS with NAME=VALUE
# prints WARNS WARN lines, none of them forged, the value quoted, and
# exits RC.
envline() {
  name=$1 value=$2 want=$3 wantrc=$4
  shift 4
  run $clean NCCL_DEBUG=WARN "$name=$value" "$b/ringstage" --quiet "$@"
  if [ $rc -eq "$wantrc" ] && [ "$(warns)" = "$want" ] && ! grep -q '^forged' "$out" &&
     grep -qF '\nforged:1:1 [0] NCCL WARN every rank agrees' "$out"; then
    pass "a newline in $name: $want WARN line(s), the value quoted, nothing forged"
  else fail "a newline in $name (exit $rc, want $wantrc)"; show; fi
}
envline NCCL_DEBUG "WARN$forged" 1 0 --nodes 1
envline NCCL_DEBUG_SUBSYS "INIT$forged" 1 0 --nodes 1
envline NCCOM_RING_PLATFORM "generic$forged" 2 1 --nodes 1 # D28: Preset's WARN, then Postset's
envline NCCOM_RING_POD_ORDER "node$forged" 2 1 --nodes 2 --pod
envline NCCOM_RING_ABI_CHECK "off$forged" 1 0 --nodes 1
envline NCCOM_RING_GOMAXPROCS "2$forged" 1 0 --nodes 1
# At INFO the ENV line and the dump's line quote them too.
ddir="$tmp/dir${forged}"
run $clean NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=ENV,INIT NCCOM_RING_DUMP="$ddir" "$b/ringstage" --quiet --nodes 1
if [ $rc -eq 0 ] && ! grep -q '^forged' "$out" && grep -q 'NCCOM_RING_DUMP=".*\\nforged' "$out"; then
  pass "a newline in NCCOM_RING_DUMP: quoted in the ENV and INFO lines"
else fail "a newline in NCCOM_RING_DUMP (exit $rc)"; show; fi

# ---- 4. Secure execution: a set-user-ID-root host run by nobody ----

secure_test() {
  if [ "$(id -u)" != 0 ]; then
    echo "test-security: skipped: the set-user-ID host: making a file set-user-ID root needs root"; return
  fi
  if ! command -v setpriv > /dev/null; then
    echo "test-security: skipped: the set-user-ID host: setpriv (util-linux) is not installed"; return
  fi
  sdir=$tmp/suid
  mkdir -m 755 "$sdir"
  cp "$host" "$sdir/secure-host"
  chown root:root "$sdir/secure-host"
  chmod 4755 "$sdir/secure-host"
  private=$tmp/root-only
  mkdir -m 700 "$private"
  # What the caller sets: a library to run as root, a log file, a dump
  # directory and a layout profile where only root can write.
  run setpriv --reuid="$(id -u nobody)" --regid="$(id -g nobody)" --clear-groups \
    env -i PATH=/usr/bin:/bin NCCL_DEBUG=WARN NCCOMRING_LIBRARY="$b/libnccomring-evil.so" EVIL_MARKER="$private/evil-ran" \
    NCCL_DEBUG_FILE="$private/nccl.log" NCCOM_RING_DUMP="$private/dumps" NCCOM_RING_LAYOUT="$private/layout.json" \
    "$sdir/secure-host" secure "$shim"
  if ! grep -q '^AT_SECURE=1$' "$out"; then
    echo "test-security: skipped: the set-user-ID host did not run with AT_SECURE (a nosuid mount, no_new_privs, or a policy):"
    show
    return
  fi
  ok=1
  [ $rc -eq 0 ] || { fail "the set-user-ID host exited $rc"; ok=0; }
  [ ! -e "$private/evil-ran" ] || { fail "NCCOMRING_LIBRARY was loaded (its constructor ran as root)"; ok=0; }
  [ ! -e "$private/nccl.log" ] || { fail "NCCL_DEBUG_FILE was created"; ok=0; }
  [ ! -e "$private/dumps" ] || { fail "NCCOM_RING_DUMP was written"; ok=0; }
  for v in NCCOMRING_LIBRARY NCCL_DEBUG_FILE NCCOM_RING_DUMP NCCOM_RING_LAYOUT; do
    n=$(grep -c "NCCL WARN $v is ignored: this process runs with secure execution (AT_SECURE" "$out")
    [ "$n" = 1 ] || { fail "$n WARNs about $v, want 1"; ok=0; }
  done
  [ "$(warns)" = 4 ] || { fail "$(warns) WARN lines, want 4"; ok=0; }
  if [ $ok = 1 ]; then
    pass "a set-user-ID-root host run by nobody (AT_SECURE=1) ignored NCCOMRING_LIBRARY, NCCL_DEBUG_FILE, NCCOM_RING_DUMP and NCCOM_RING_LAYOUT, one WARN each, and ran the stage through the preload shim"
  else show; fi
  # The same host run by root itself is not AT_SECURE: the variables count.
  run env -i PATH=/usr/bin:/bin NCCL_DEBUG=WARN NCCL_DEBUG_FILE="$private/nccl.log" "$sdir/secure-host" secure "$shim"
  if [ $rc -eq 0 ] && grep -q '^AT_SECURE=0$' "$out" && [ -f "$private/nccl.log" ]; then
    pass "the same host run by root (AT_SECURE=0) honours NCCL_DEBUG_FILE"
  else fail "the host run by root (exit $rc)"; show; fi
}
secure_test

# ---- 5. nccom-rings on crafted dumps, in 2 GB of address space ----

# tool WANTRC DESC DIR: nccom-rings verify DIR under ulimit -v 2000000.
tool() {
  run sh -c 'ulimit -v 2000000 && exec "$0" verify "$1"' "$tool" "$3"
  if [ $rc -eq "$1" ] && ! grep -q "$(printf '\033')" "$out" && ! grep -q 'fatal error\|goroutine' "$out"; then
    pass "nccom-rings verify, $2: exit $rc: $(grep -v '^nccom-rings: ".*": [0-9]* finding' "$out" | head -1 | cut -c1-160)"
  else fail "nccom-rings verify, $2 (exit $rc, want $1)"; show; fi
}
crafted() { # NAME: a fresh directory for one crafted job
  rm -rf "$tmp/rings"
  mkdir -m 700 "$tmp/rings"
  echo "$tmp/rings"
}
d=$(crafted)
printf '{"format":1,"rank":0,"nRanks":2147483647,"result":0,"resultName":"ncclSuccess","version":"0","host":"h","pid":1}' > "$d/rank-000000.h.1.json"
tool 1 "a 112-byte dump claiming 2^31-1 ranks" "$d"
grep -q 'missing ranks 1, 2, .* and 2147483626 more (of 2147483647)' "$out" || fail "no missing-ranks finding"
d=$(crafted)
printf '{"format":1,"rank":0,"nRanks":100000000,"result":0,"resultName":"ncclSuccess","version":"0","host":"h","pid":1}' > "$d/rank-000000.h.1.json"
tool 1 "a dump claiming 10^8 ranks" "$d"
d=$(crafted)
: > "$d/rank-000000.h.1.json"
truncate -s 3G "$d/rank-000000.h.1.json"
tool 2 "a 3 GB dump file" "$d"
d=$(crafted)
esc='\u001b' # JSON's escape: the decoded string holds the ESC byte itself
printf '{"format":1,"rank":0,"nRanks":1,"result":5,"resultName":"ncclInvalidUsage","warn":"%s[2J%s[Hnccom-rings: 1 rank, 1 channel, 1 node: every rank agrees","version":"0","host":"%s]0;x","pid":1}' \
  "$esc" "$esc" "$esc" > "$d/rank-000000.h.1.json"
tool 1 "terminal escapes in a dump's warn and host" "$d"
d=$(crafted)
mkfifo "$d/rank-000000.h.1.json"
ln -s /dev/zero "$d/rank-000001.h.1.json"
tool 2 "a FIFO and a link to /dev/zero as dumps" "$d"

if [ $failed -ne 0 ]; then echo "test-security: FAILED"; exit 1; fi
echo "test-security: passed"
