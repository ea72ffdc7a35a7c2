#!/bin/sh
# check.sh TOOL DIR - `make test-abi-tool`: runs build/nccom-abi on the
# stand-in libnccom builds in DIR (build/abi, see docs/checking.md) and checks
# each exit code and the words that name the finding. Measures the CPU time
# of `check` on the >= 10 MB library and fails above 2 s (issue 10's bound;
# it uses ~0.03 s). CPU time, not the wall clock: on a machine busy with
# other work the check takes longer but does no more (issue 32).
set -u
tool=$1
dir=$2
out=$(mktemp)
cpu=$(mktemp)
trap 'rm -f "$out" "$cpu"' EXIT
fail=0
desc=

# run, want_rc, want
. "$(dirname "$0")/../../lib/expect.sh"

# The documented layout, C and C++ (in a namespace, ncclComm a class).
run "check match" "$tool" check "$dir/libnccom-match.so"
want_rc 0
want 'ok: 6 sizes and 43 fields match layout/'
want 'ASSUMED \(D3\) ncclComm fields in this build: topo \+17552, rank \+17616, nRanks \+17620, node \+17640, nNodes \+17644, nChannels \+17704'
run "check --json match" "$tool" check --json "$dir/libnccom-match.so"
want_rc 0
want '"ok": true'
run "check match --json (flag after LIB)" "$tool" check "$dir/libnccom-match.so" --json
want_rc 0
want '"assumed": \{'
want '"nChannels": 17704'
run "profile match" "$tool" profile "$dir/libnccom-match.so"
want_rc 0
for f in '"topo": 17552' '"rank": 17616' '"nRanks": 17620' '"node": 17640' '"nNodes": 17644' '"nChannels": 17704'; do
  want "$f"
done
want '"buildId": "[0-9a-f]{40}"'
run "check cxx" "$tool" check "$dir/libnccom-cxx.so"
want_rc 0
run "check cxx-ns" "$tool" check "$dir/libnccom-cxx-ns.so"
want_rc 0
want 'class nccl::ncclComm'
want 'typedef nccl::ncclTopoRanks'

# One thing broken each: exit 1, naming struct, field, expected and actual.
run "check moved" "$tool" check "$dir/libnccom-moved.so"
want_rc 1
want 'ncclComm\.rank \(ASSUMED\): LIB has \+17612 \(4 bytes\), layout/ has \+17616 \(4 bytes\)'
want 'ncclComm\.nRanks \(ASSUMED\): LIB has \+17616 \(4 bytes\), layout/ has \+17620 \(4 bytes\)'
want '^2 mismatches'
want 'Only ASSUMED \(D3\) fields differ'
run "profile moved" "$tool" profile "$dir/libnccom-moved.so"
want_rc 0
want '"rank": 17612,'
want '"nRanks": 17616,'
run "check grown" "$tool" check "$dir/libnccom-grown.so"
want_rc 1
want 'ncclTopoGraph: sizeof is 33084, layout/ has 33080'
want 'Documented \(D2\) sizes or fields differ'
run "check renamed" "$tool" check "$dir/libnccom-renamed.so"
want_rc 1
want "ncclComm\.nChannels \(ASSUMED\): not in LIB's ncclComm; layout/ has \+17704 \(4 bytes\); LIB has int numChannels at \+17704"
run "profile renamed" "$tool" profile "$dir/libnccom-renamed.so"
want_rc 1
want 'no profile written'

# The preload verdicts.
run "preload match" "$tool" preload "$dir/libnccom-match.so"
want_rc 0
want 'verdict: preloading replaces calls from hosts and from inside LIB, for all four functions'
want 'ncclTopoPreset +\.dynsym +GLOBAL +DEFAULT +JMP_SLOT'
run "preload cxx" "$tool" preload "$dir/libnccom-cxx.so"
want_rc 0
want 'ncclTopoPostset\(ncclComm\*, int\*, ncclTopoRanks\*\*, int\*, int\*\) +\.dynsym'
run "preload hidden" "$tool" preload "$dir/libnccom-hidden.so"
want_rc 1
want 'verdict: preloading replaces nothing, for all four functions'
want 'not in \.dynsym, only in \.symtab \(LOCAL, DEFAULT\): hidden visibility \(-fvisibility=hidden\), static'
run "preload symbolic" "$tool" preload "$dir/libnccom-symbolic.so"
want_rc 1
want 'DT_FLAGS 0x2 \(DF_SYMBOLIC\), DT_SYMBOLIC'
want 'verdict: preloading replaces calls from hosts only, for all four functions'
want '\-Bsymbolic'
run "preload protected" "$tool" preload "$dir/libnccom-protected.so"
want_rc 1
want 'ncclBuildRings: preloading replaces calls from hosts only: protected visibility'
run "preload nosemantic" "$tool" preload "$dir/libnccom-nosemantic.so"
want_rc 1
want 'ncclTopoGetNetDev: preloading replaces calls from hosts only: no relocation in LIB refers to it'
run "preload stripped (no DWARF needed)" "$tool" preload "$dir/libnccom-stripped.so"
want_rc 0

# Unusable input: exit 2, saying what to do.
run "check stripped" "$tool" check "$dir/libnccom-stripped.so"
want_rc 2
want 'has no DWARF'
want 'build libnccom with -g'
run "profile stripped" "$tool" profile "$dir/libnccom-stripped.so"
want_rc 2
for cmd in check preload dump profile; do
  run "$cmd not-elf" "$tool" "$cmd" "$dir/not-elf.so"
  want_rc 2
  want 'is not an ELF file'
done
run "preload on an executable" "$tool" preload "$tool"
want_rc 2
want 'this is not a shared object'
run "dump a struct LIB lacks" "$tool" dump "$dir/libnccom-match.so" ncclNoSuchStruct
want_rc 2
want 'no definition of ncclNoSuchStruct'
run "no arguments" "$tool"
want_rc 2
run "check without LIB" "$tool" check
want_rc 2
run "bad flag" "$tool" check --jsno "$dir/libnccom-match.so"
want_rc 2
for cmd in check preload dump profile; do
  run "$cmd --help" "$tool" "$cmd" --help
  want_rc 0
  want "^Usage: nccom-abi $cmd"
  want '2  unusable input'
done
run "--help" "$tool" --help
want_rc 0

# dump: the listing pahole would print (the Go test compares the numbers).
run "dump match ncclComm" "$tool" dump "$dir/libnccom-match.so" ncclComm
want_rc 0
want '/\* XXX 7 bytes hole \*/'
want 'size: 19224, members: 62, holes: 2, sum holes: 9, padding: 0'
# A fragment shows the ring stage's record (D25) over treeToChild1[16..31].
run "dump match ncclTopoRanks" "$tool" dump "$dir/libnccom-match.so" ncclTopoRanks
want_rc 0
want 'record \(D25\), struct nccomRingRecord'
want 'int      magic; .* 832     4'

# check on a >= 10 MB library with debug info, in under 2 s of CPU.
big="$dir/libnccom-big.so"
bytes=$(wc -c < "$big")
if [ "$bytes" -lt 10485760 ]; then
  echo "FAIL: $big is $bytes bytes, less than 10 MiB (raise ABI_BIG_STRUCTS)"
  fail=1
fi
run "check big" python3 "$(dirname "$0")/../../lib/cpu_time.py" "$cpu" "$tool" check "$big"
want_rc 0
ms=$(cat "$cpu")
echo "nccom-abi check on $big ($(( bytes / 1048576 )) MiB with debug info): $ms ms of CPU"
if [ "${ms:-0}" -gt 2000 ]; then
  echo "FAIL: check used $ms ms of CPU, over issue 10's 2 s"
  fail=1
fi

if [ "$fail" -ne 0 ]; then
  echo "test-abi-tool: FAILED"
  exit 1
fi
echo "test-abi-tool: check (match, moved, grown, renamed, C++, namespace), preload verdicts (default, C++, hidden, -Bsymbolic, protected, -fno-semantic-interposition), unusable input, dump: passed"
