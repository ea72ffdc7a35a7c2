#!/bin/sh
# operator-demo.sh BUILD - `make operator-demo` (issue 23): one operator's
# walkthrough on one stand-in libnccom, the way a job meets the library.
# The stand-in is BUILD/abi/selfcheck/match/libnccom.so.2 (tests/c/abi/
# fixture.c, built -g with SONAME libnccom.so.2); the job is
# BUILD/abi/selfcheck/host-match in mode `job` (16 ranks on 4 nodes in one
# process, every ring-stage call made from inside the stand-in). In order:
# nccom-abi check on the stand-in, the job under LD_PRELOAD of the preload
# shim with NCCOM_RING_DUMP, the self-check's INFO line, nccom-rings verify
# and score on the dumps, and the HTML report when nccom-rings has one.
# One line per step; the first step that fails stops the walkthrough with
# its output and exit 1. The files stay in BUILD/operator-demo.
set -u
b=${1:?usage: operator-demo.sh BUILD}
lib=$b/abi/selfcheck/match/libnccom.so.2
host=$b/abi/selfcheck/host-match
abi=$b/nccom-abi
rings=$b/nccom-rings
dir=$b/operator-demo
out=$dir/step.out

# step NAME CMD...: runs CMD into $out; on failure prints it and stops.
step() {
  name=$1
  shift
  if ! "$@" > "$out" 2>&1; then
    cat "$out"
    echo "operator-demo: FAILED at $name: $*"
    exit 1
  fi
}
say() { printf '%-11s %s\n' "$1:" "$2"; }

rm -rf "$dir"
# The dumps' directory exists before the job, writable by its user only:
# the library refuses one others can write into (docs/security.md).
mkdir -p "$dir" && mkdir -m 755 "$dir/dumps" || exit 1

step check "$abi" check "$lib"
say check "nccom-abi check $lib: $(tail -1 "$out")"

# The job's environment is an operator's: the shim preloaded, the library's
# INFO lines in a file, dumps on. Nothing else from the caller's
# environment changes what the demo shows.
step job env -u NCCOM_RING_LAYOUT -u NCCOM_RING_ABI_CHECK -u NCCOM_RING_LOG_STYLE -u NCCOM_RING_PLATFORM \
  -u NCCOM_RING_POD_ORDER -u NCCOM_RING_NODE_ORDER -u NCCL_DEBUG_SUBSYS \
  LD_PRELOAD="$b/libnccomring-preload.so" NCCL_DEBUG=INFO NCCL_DEBUG_FILE="$dir/nccl.log" \
  NCCOM_RING_DUMP="$dir/dumps" "$host" job "$lib"
say preload "LD_PRELOAD=libnccomring-preload.so: $(tail -1 "$out" | sed 's/^job: //')"

# The self-check's one INFO line: "matches", never "not verified".
line=$(grep 'the ring-stage layout in use' "$dir/nccl.log")
case $line in
  *"not verified"* | "")
    cat "$dir/nccl.log"
    echo "operator-demo: FAILED at self-check: want the INFO line saying the layout matches, got: $line"
    exit 1
    ;;
esac
say self-check "verified: ${line#*libnccomring: }"

n=$(ls "$dir/dumps" | grep -c '^rank-.*\.json$')
say dumps "NCCOM_RING_DUMP wrote $n files to $dir/dumps"

step verify "$rings" verify "$dir/dumps"
say verify "$(head -1 "$out")"

step score "$rings" score "$dir/dumps"
say score "$(sed -n 2p "$out" | sed 's/^ *//')"

step report "$rings" report "$dir/dumps" -o "$dir/job.html"
say report "wrote $dir/job.html"
rm -f "$out"
echo "operator-demo: passed; the files are in $dir"
