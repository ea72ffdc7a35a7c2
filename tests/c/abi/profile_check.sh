#!/bin/sh
# profile_check.sh BUILD - issue 21's attacks on the layout profile
# (NCCOM_RING_LAYOUT), through a host that preloads libnccomring and maps
# the moved stand-in libnccom.so.2 (selfcheck_host.c, mode profile): each
# profile is refused at the first Preset with the E4 WARN naming what is
# wrong, within 10 s of CPU time (/dev/zero is never read to its end; a
# FIFO is never waited on: the host runs under the watchdog, WATCHDOG), and
# nothing is written. Part of `make test-layout-profile`.
#
# Issue 34 (F4): a profile that declares a sizeof of 1 MiB and places
# node, nNodes and nChannels past the host's struct, run by
# build/boundary (layout-overrun) on one communicator of exactly
# sizeof(struct ncclComm) bytes with guard bytes after it: with no
# libnccom.so.2 mapped, with the stripped stand-in (no DWARF), with the
# moved one under NCCOM_RING_ABI_CHECK=off, and (the size now) with the
# moved one, whose DWARF gives 19224 bytes, under NCCOM_RING_ABI_CHECK=warn
# (which would run over a layout that differs): each refused (E4) naming the field or the size,
# and no byte written.
set -u
build=$(cd "${1:?usage: WATCHDOG=PATH profile_check.sh BUILD}" && pwd)
. "$(dirname "$0")/../../lib/watchdog.sh"
sc=$build/abi/selfcheck
lib=$sc/moved/libnccom.so.2
host=$sc/host-moved
tool=$build/nccom-abi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
run() {
  profile=$1
  want=$2
  # The watchdog before env: LD_PRELOAD must reach the host only (preloaded
  # into a wrapper, the Go runtime's threads, all signals unblocked, can
  # take the child's SIGCHLD the wrapper waits for; into the watchdog, a Go
  # program, it would start a second Go runtime). The host never sleeps: 20 s
  # with none of its threads running or waiting to run is a wait on the
  # FIFO, and a failure; 2 min of CPU without output a read without end;
  # 10 min the last resort. Each run takes well under a second quiet.
  watched --blocked 20s --cpu 2m --wall 10m -- env -u NCCOM_RING_PLATFORM -u NCCOM_RING_POD_ORDER -u NCCOM_RING_DUMP -u NCCL_DEBUG -u NCCL_DEBUG_FILE \
    -u NCCOM_RING_LAYOUT -u NCCOM_RING_ABI_CHECK -u NCCL_DEBUG_SUBSYS LD_PRELOAD="$build/libnccomring.so" \
    "$host" profile "$lib" "$profile" "$want" || fail=1
}

"$tool" profile "$lib" > "$dir/moved.json" || exit 1
"$tool" profile "$sc/match/libnccom.so.2" > "$dir/match.json" || exit 1
ln -s "$dir/moved.json" "$dir/link.json"
mkfifo "$dir/fifo.json"
head -c 70000 /dev/zero | tr '\0' ' ' > "$dir/big.json"
cat "$dir/moved.json" >> "$dir/big.json"
sed 's/"rank": [0-9]*/"rank": 9223372036854775804/' "$dir/moved.json" > "$dir/huge-offset.json"
sed 's/"nChannels": [0-9]*/"nChannels": 19224/' "$dir/moved.json" > "$dir/past-sizeof.json"
match_id=$(sed -n 's/.*"buildId": "\([0-9a-f]*\)".*/\1/p' "$dir/match.json")
moved_id=$(sed -n 's/.*"buildId": "\([0-9a-f]*\)".*/\1/p' "$dir/moved.json")
printf '{"ncclComm": {"topo": 17552, "rank": 17612, "nRanks": 17616, "node": 17640, "nNodes": 17644, "nChannels": 17704}, "buildId": "%s"}\n' \
  "$moved_id" > "$dir/no-sizeof.json"

run "$dir/link.json" "it is a symbolic link, which is not followed"
run "$dir/fifo.json" "it is a FIFO, not a regular file"
run /dev/zero "it is a character device, not a regular file"
run "$dir" "it is a directory, not a regular file"
run "$dir/big.json" "it has $(wc -c < "$dir/big.json" | tr -d ' ') bytes, more than the 65536 a layout profile may have"
run "$dir/match.json" "it is for build ID $match_id, and the libnccom.so.2 mapped in this process ($lib) has build ID $moved_id"
run "$dir/huge-offset.json" "ncclComm.rank at +9223372036854775804 is outside [0, 19224), the sizeof(ncclComm) as the profile declares it"
run "$dir/past-sizeof.json" "ncclComm.nChannels at +19224 is outside [0, 19224), the sizeof(ncclComm) as the profile declares it"
run "$dir/no-sizeof.json" "no \"sizeof\" object"

# overrun PROFILE WANT [STANDIN [VAR=VALUE]]: build/boundary layout-overrun.
overrun() {
  watched --blocked 20s --cpu 2m --wall 10m -- env -u NCCOM_RING_PLATFORM -u NCCOM_RING_POD_ORDER -u NCCOM_RING_DUMP -u NCCL_DEBUG -u NCCL_DEBUG_FILE \
    -u NCCOM_RING_LAYOUT -u NCCOM_RING_ABI_CHECK -u NCCL_DEBUG_SUBSYS ${4:+"$4"} \
    "$build/boundary" layout-overrun "$build/libnccomring.so" "$1" "$2" ${3:+"$3"} || fail=1
}
past() { # past BUILDID: the fields past 19212 bytes, a declared sizeof of 1 MiB
  printf '{"ncclComm": {"topo": 17552, "rank": 17616, "nRanks": 17620, "node": 19216, "nNodes": 19220, "nChannels": 19224}, "sizeof": {"ncclComm": 1048576}, "buildId": "%s"}\n' "$1"
}
past "" > "$dir/past-none.json"
past "$match_id" > "$dir/past-match.json"
past "$moved_id" > "$dir/past-moved.json"
beyond="ncclComm.node at +19216 (4 bytes) ends past the 19212 bytes of ncclComm that every host allocates (D3), and no larger ncclComm is known"
overrun "$dir/past-none.json" "$beyond: no libnccom.so.2 is mapped in this process"
overrun "$dir/past-match.json" "$beyond: $sc/stripped/libnccom.so.2 has no DWARF (.debug_info): it is stripped" "$sc/stripped/libnccom.so.2"
overrun "$dir/past-moved.json" "$beyond: NCCOM_RING_ABI_CHECK=off, so no libnccom's DWARF is read" "$lib" NCCOM_RING_ABI_CHECK=off
overrun "$dir/past-moved.json" "sizeof.ncclComm 1048576 is more than the 19224 bytes of ncclComm in the DWARF of $lib, the libnccom.so.2 mapped in this process" "$lib" NCCOM_RING_ABI_CHECK=warn
if [ $fail -ne 0 ]; then
  echo "profile_check: FAILED"
  exit 1
fi
echo "test-layout-profile: a link, a FIFO, /dev/zero, a directory, a 70 KB file, another build's profile, an offset at 2^63-4, one past its own sizeof, no sizeof: each refused (E4) within 10 s of CPU, none waited on; fields past the host's ncclComm with no libnccom, a stripped one, the check off, and a sizeof past the DWARF's: each refused (E4), nothing written after the struct"
