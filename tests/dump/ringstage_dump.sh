#!/bin/sh
# ringstage_dump.sh BUILD - `make test-dump` (issue 12): runs BUILD/ringstage
# (every rank of the embedded 4 x 32 cluster in one process) with
# NCCOM_RING_DUMP, then BUILD/nccom-rings on what it wrote: the job verifies;
# one rank's channel-0 next changed, a rank's file deleted, a file cut short,
# every Postset failing (--pod without NCCOM_RING_POD_ORDER) each give the
# finding or exit code they must; a directory that cannot be created costs
# one WARN per rank and not the result; D25's network order over 8 nodes is
# recorded, verified, and planned alike by nccom-rings plan (issue 23).
set -u
build=$1
ringstage=$build/ringstage
tool=$build/nccom-rings
tmp=$(mktemp -d)
out=$tmp/out
trap 'rm -rf "$tmp"' EXIT
fail=0
desc=
# The library's log is ours to read here, not a file of the host's; its
# lines are NCCL's (D21), chosen rather than left to whether a libnccom is
# loaded (D26).
unset NCCL_DEBUG NCCL_DEBUG_FILE NCCL_DEBUG_SUBSYS NCCOM_RING_PLATFORM NCCOM_RING_POD_ORDER NCCOM_RING_LAYOUT
export NCCOM_RING_LOG_STYLE=nccl

# run, want_rc, want
. "$(dirname "$0")/../lib/expect.sh"
# copy NAME: a fresh copy of the good dumps, to spoil.
copy() {
  rm -rf "$tmp/$1"
  cp -r "$tmp/ok" "$tmp/$1"
}
# edit_channel0 NAME RANK FIELD EXPR: copy NAME, then rank RANK's channel-0
# FIELD set to EXPR, a Python expression of d (that rank's dump).
edit_channel0() {
  copy "$1"
  run "edit rank $2" python3 -c '
import glob, json, sys
path = glob.glob(sys.argv[1] + "/rank-%06d.*.json" % int(sys.argv[2]))[0]
d = json.load(open(path))
d["channels"][0][sys.argv[3]] = eval(sys.argv[4])
json.dump(d, open(path, "w"))' "$tmp/$1" "$2" "$3" "$4"
  want_rc 0
}
# want_first LINE: the last run's first line is LINE.
want_first() {
  if [ "$(head -1 "$out")" != "$1" ]; then
    echo "FAIL: $desc: first line is '$(head -1 "$out")'"
    fail=1
  fi
}

run "ringstage with NCCOM_RING_DUMP" env NCCOM_RING_DUMP="$tmp/ok" "$ringstage" --quiet
want_rc 0
n=$(ls "$tmp/ok" | grep -c '^rank-[0-9]\{6\}\..*\.[0-9]*\.json$')
if [ "$n" -ne 128 ]; then echo "FAIL: $n dump files in $tmp/ok, want 128"; fail=1; fi
if ls -A "$tmp/ok" | grep -q '\.tmp$'; then echo "FAIL: a temporary file was left in $tmp/ok"; fail=1; fi

run "verify" "$tool" verify "$tmp/ok"
want_rc 0
want '^nccom-rings: 128 ranks, 16 channels, 4 nodes: every rank agrees$'
run "verify --json" "$tool" verify --json "$tmp/ok"
want_rc 0
want '"ok": true'

# GetNetDev's answers, one per channel, in rank 5's file; show prints them.
run "rank 5's netDevs" python3 -c '
import glob, json, sys
d = json.load(open(glob.glob(sys.argv[1] + "/rank-000005.*.json")[0]))
assert d["result"] == 0 and d["resultName"] == "ncclSuccess", d["result"]
assert [n["channel"] for n in d["netDevs"]] == list(range(16)), d["netDevs"]
print("netDevs", len(d["netDevs"]))' "$tmp/ok"
want_rc 0
run "show" "$tool" show --channel 3 "$tmp/ok"
want_rc 0
want '^channel 3 of 16, 128 ranks$'
run "show --dot" "$tool" show --dot "$tmp/ok"
want_rc 0
want 'subgraph cluster_node3'

# Rank 7's channel-0 next moved one rank on: rank 7 is named first (issue
# 23: by the views of succ(7), rank 7's next, rank 8's prev and the 128
# userRanks, 129 of which say 8).
edit_channel0 next 7 next '(d["channels"][0]["next"] + 1) % d["nRanks"]'
run "verify, rank 7's next changed" "$tool" verify "$tmp/next"
want_rc 1
want_first "nccom-rings: rank 7: channel 0 next is 9, but rank 9's prev is 8; 129 of 130 views have 8 after 7"

# Rank 3's channel-0 prev changed: before issue 23 the first line blamed
# rank 2, whose next disagrees with it; by plurality (129 of the 130 views
# of pred(3) say 2) rank 3 is named first.
edit_channel0 prev 3 prev 1
run "verify, rank 3's prev changed" "$tool" verify "$tmp/prev"
want_rc 1
want_first "nccom-rings: rank 3: channel 0 prev is 1, but rank 1's next is 2; 129 of 130 views have 2 before 3"

copy missing
rm "$tmp"/missing/rank-000009.*.json
run "verify, rank 9 deleted" "$tool" verify "$tmp/missing"
want_rc 1
want '^nccom-rings: missing rank 9 \(of 128\)$'

copy cut
f=$(ls "$tmp"/cut/rank-000011.*.json)
head -c 100 "$f" > "$tmp/half" && mv "$tmp/half" "$f"
# Issue 23: the cut file is one finding (not also a missing rank), the
# other 127 ranks are checked and agree, exit 2; --json is one document.
run "verify, rank 11's file cut short" "$tool" verify "$tmp/cut"
want_rc 2
want '^nccom-rings: rank 11: ".*/rank-000011\..*\.json": not a ring dump: at byte 100'
want '^nccom-rings: ".*": 1 finding, 1 input unusable$'
if grep -q missing "$out"; then echo "FAIL: $desc: rank 11 is also reported missing"; fail=1; fi
run "verify --json, rank 11's file cut short" "$tool" verify --json "$tmp/cut"
want_rc 2
if ! python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["unusable"] == 1 and r["files"] == 127 and not r["ok"], r
assert [(f["kind"], f["rank"]) for f in r["findings"]] == [("unusable", 11)], r["findings"]
assert r["findings"][0]["hint"]' "$out"; then
  echo "FAIL: $desc: not the one-finding JSON document"; fail=1
fi

run "verify, no such directory" "$tool" verify "$tmp/none"
want_rc 2

# Postset fails (enablePod on 4 nodes, P12): rank 0's file says so with its
# WARN; ringstage stops at the first failing call, so the other ranks have
# no file.
run "ringstage --pod with NCCOM_RING_DUMP" env NCCOM_RING_DUMP="$tmp/pod" "$ringstage" --quiet --pod
want_rc 1
run "verify, failed Postsets" "$tool" verify "$tmp/pod"
want_rc 1
want '^nccom-rings: rank 0: ncclTopoPostset failed with "ncclInvalidUsage" \(5\): "ncclTopoPostset: comm->enablePod is set on 4 nodes'
want '^nccom-rings: missing ranks 1, 2, 3, .* and 107 more \(of 128\)$'
if grep -q '"channels"' "$tmp"/pod/rank-000000.*.json; then echo "FAIL: a failed Postset's dump lists channels"; fail=1; fi

# A directory that cannot be made: one WARN per rank, the calls succeed.
run "NCCOM_RING_DUMP under /dev/null" env NCCL_DEBUG=WARN NCCOM_RING_DUMP=/dev/null/dumps "$ringstage" --quiet
want_rc 0
warns=$(grep -c "NCCL WARN ncclTopoPostset: NCCOM_RING_DUMP=\"/dev/null/dumps\": cannot write rank [0-9]*'s wiring dump: .*; the call's result stands" "$out")
if [ "$warns" -ne 128 ]; then echo "FAIL: $desc: $warns WARN lines, want 128 (one per rank)"; fail=1; fi

# D25: the network order over 8 nodes alternating between two leaves; the
# dumps record it and verify checks it; a rank whose dump says another
# location than its node's is named.
locs=$(dirname "$0")/../../testdata/locations/8-nodes-alternating-leaves.txt
run "ringstage --order network" env NCCOM_RING_DUMP="$tmp/order" "$ringstage" --quiet --nodes 8 --order network --locations "$locs"
want_rc 0
run "verify, network order" "$tool" verify "$tmp/order"
want_rc 0
want '^nccom-rings: 256 ranks, 16 channels, 8 nodes: every rank agrees$'
# D28: the dump holds the rank's own record, the hashes of "spine0" and
# "leafB" (FNV-1a), and the name, which ringstage's environment held at
# the rank's Postset.
if ! grep -q '"order":{"asked":"network","location":"spine0/leafB","locationHashes":\[2444203852,1536875317\],"fromRecord":true,"network":true,"sequence":\[0,2,4,6,1,3,5,7\]}' "$tmp"/order/rank-000033.*.json; then
  echo "FAIL: rank 33's dump does not record the network order"; fail=1
fi
# Issue 23: plan (the Go ring stage, without a job) builds what
# ringstage's job built through the C ABI: diff finds only the host names
# (ringstage runs every rank on this host, plan's hosts are the node
# indices); score gives D25's 2 leaf crossings per ring, the fewest.
printf '0\n1\n2\n3\n4\n5\n6\n7\n' > "$tmp/hosts"
run "plan --order network" "$tool" plan --locations "$locs" --hosts "$tmp/hosts" --ranks-per-node 32 --order network --dump "$tmp/plan"
want_rc 0
run "diff of ringstage's job and plan's" "$tool" diff "$tmp/order" "$tmp/plan"
want_rc 1
want '^nccom-rings diff: placement: node 0 on host ".*" -> "0"; 0 ranks on another node, 8 of 8 nodes on another host$'
want '^nccom-rings diff: crossings per ring: level 1: 0 -> 0 \(fewest 0\); level 2: 2 -> 2 \(fewest 2\)$'
# Issue 37: diff prints both jobs' scores (crossings, NIC-index
# mismatches) before what differs; of what differs, only the hosts.
if [ "$(grep -cv -e '^nccom-rings diff: crossings per ring: ' -e '^nccom-rings diff: NIC-index mismatches: ' "$out")" -ne 1 ]; then echo "FAIL: $desc: more than the host names differ"; sed 's/^/  | /' "$out"; fail=1; fi
graph=$(dirname "$0")/../../testdata/graphs/03_nccl524_4gpu_4nic_graph.xml
run "ringstage --graph, network order" env NCCOM_RING_DUMP="$tmp/graph" "$ringstage" --quiet --nodes 8 --graph "$graph" --order network --locations "$locs"
want_rc 0
run "plan --graph" "$tool" plan --locations "$locs" --hosts "$tmp/hosts" --graph "$graph" --order network --dump "$tmp/plan-graph"
want_rc 0
run "diff of ringstage's job and plan's, --graph" "$tool" diff "$tmp/graph" "$tmp/plan-graph"
want_rc 1
want '^nccom-rings diff: placement: '
if [ "$(grep -cv -e '^nccom-rings diff: crossings per ring: ' -e '^nccom-rings diff: NIC-index mismatches: ' "$out")" -ne 1 ]; then echo "FAIL: $desc: more than the host names differ"; sed 's/^/  | /' "$out"; fail=1; fi
run "score, network order" "$tool" score --max-excess 0 "$tmp/order"
want_rc 0
want 'level 2: 2 crossings \(2 groups: fewest 2\)'
run "edit rank 8's location" python3 -c '
import glob, json, sys
p = glob.glob(sys.argv[1] + "/rank-000008.*.json")[0]
d = json.load(open(p))
d["order"]["location"] = "spine0/leafB"
d["order"]["locationHashes"] = [2444203852, 1536875317]
json.dump(d, open(p, "w"))' "$tmp/order"
want_rc 0
run "verify, rank 8's location" "$tool" verify "$tmp/order"
want_rc 1
want '^nccom-rings: rank 8: its record carries the location "spine0/leafB", but its node 0 is placed at the location "spine0/leafA" \(the value most of its ranks carry; D28\)'

if [ "$fail" -ne 0 ]; then
  exit 1
fi
echo "test-dump: 128 ranks dumped and verified; a changed next (its rank named first), a deleted file, a cut file (the other ranks still checked), a failed Postset and an unwritable directory each reported; the network order recorded and checked, and planned alike in Go (plan, diff, score): passed"
