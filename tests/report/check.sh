#!/bin/sh
# check.sh BUILD - `make test-report` (issues 23 and 37).
#
# The page's own checks, no browser: nccom-rings report on the dumps
# `nccom-rings plan --dump` writes of D25's example (no C needed), spoiled
# twice: node 0's host is `<script>alert(1)</script>` and rank 5's
# channel-0 next is moved on, so that the page holds verify's findings;
# the host escaped, nothing outside the page referenced, --redact leaving
# no host name.
#
# The browser half (tests/report/browser, through the DevTools protocol):
# that page and three jobs planned here from generated locations, each
# over 3 levels (core/spineS/leafL) with its hosts interleaved between
# the leaves as a launcher that sorts names scatters them: cluster16's 16
# hosts in 4 leaves (its hosts-sorted.txt, 4 ranks a node), 128 nodes in
# 16 leaves (8 ranks a node), 512 nodes in 32 leaves (4 ranks a node).
# Each page at 1400 x 1000 in headless chromium: every drawn element
# inside its picture and no two visible labels overlapping at the initial
# fit, every group of the outermost levels labelled, every node of node
# 7's leaf labelled after zooming to it, node 7 found by its host name in
# the search box, no console line (browser/main.go says how). And the
# page comparing two jobs (report DIR_A DIR_B): cluster16's hosts in an
# order that scatters its leaves and spines (cmd/nccom-rings/diff_test.go's
# scatteredHosts), planned, its rank order (6 spine and 12 leaf crossings
# a ring) against its network order (2 and 4): the same checks on each of
# its two pictures, side by side. The pages, and a screenshot of each
# view, stay in BUILD/report-test.
#
# Where chromium is not installed (mk/setup.sh installs it where it can:
# as root or with sudo), or nccom-rings was built without D3 (the set-up
# step could not fetch it), the browser half is skipped with a line
# saying so, never passed. It runs under the watchdog (WATCHDOG,
# build/watchdog: tests/lib/watchdog.sh): every check prints a line, so
# 2 min of CPU without output is a spin (the page or chromium looping),
# 60 s with none of its threads or chromium's running or waiting to run a
# hang (a wait on a page that never finishes), 20 min the last resort; a
# run takes 15 to 40 s quiet, most of it chromium starting and drawing.
set -u
build=${1:?usage: WATCHDOG=PATH GO=go check.sh BUILD}
tool=$build/nccom-rings
dir=$(cd "$build" && pwd)/report-test
out=$dir/out
rm -rf "$dir"
mkdir -p "$dir"
fail=0
desc=
. "$(dirname "$0")/../lib/expect.sh"
. "$(dirname "$0")/../lib/watchdog.sh"

d25=cmd/nccom-rings/testdata/d25
run "plan --dump" "$tool" plan --locations "$d25/locations" --hosts "$d25/hosts" --ranks-per-node 4 --dump "$dir/plan"
want_rc 0
run "spoil rank 0's host and rank 5's next" python3 -c '
import glob, json, sys
for rank, edit in ((0, lambda d: d.update(host="<script>alert(1)</script>")),
                   (5, lambda d: d["channels"][0].update(next=(d["channels"][0]["next"] + 1) % d["nRanks"]))):
    path = glob.glob(sys.argv[1] + "/rank-%06d.*.json" % rank)[0]
    d = json.load(open(path))
    edit(d)
    json.dump(d, open(path, "w"))' "$dir/plan/rank"
want_rc 0

run "report" "$tool" report "$dir/plan/rank" -o "$dir/job.html"
want_rc 1
want '^nccom-rings report: wrote ".*/job.html": 32 ranks, 8 nodes, 16 channels; [0-9]+ findings$'
run "the page" cat "$dir/job.html"
want '<td>&lt;script&gt;alert\(1\)&lt;/script&gt;</td>'
want 'data-rank="5" data-channel="0"'
if grep -q '<script>alert' "$dir/job.html"; then echo "FAIL: the host's markup is in the page unescaped"; fail=1; fi
if grep -qiE '(src|href) *= *"?(https?:|//)|@import|url\( *"?(https?:|//)' "$dir/job.html"; then
  echo "FAIL: the page references something outside itself:"
  grep -oiE '(src|href) *= *"?(https?:|//)[^ ]*|@import[^;]*|url\( *"?(https?:|//)[^)]*' "$dir/job.html" | head -5
  fail=1
fi
run "report --redact" "$tool" report "$dir/plan/rank" --redact -o "$dir/redacted.html"
want_rc 1
if grep -q 'trn00' "$dir/redacted.html"; then echo "FAIL: a host name is left in the redacted page"; fail=1; fi

# The browser: $CHROMIUM when set (empty: none), else chromium on PATH.
# Without a working one the browser half is a skip, said on a line make
# test's table reads ("test-report: skipped: WHY"), never a pass: not
# installed, or a stub (its --version does not say Chromium).
skip_browser() {
  echo "test-report: skipped: the browser check: $1"
  exit $fail
}
if [ "${CHROMIUM+set}" = set ]; then
  chromium=$CHROMIUM
  [ -n "$chromium" ] || skip_browser "CHROMIUM is set and empty"
else
  chromium=$(command -v chromium || command -v chromium-browser || true)
  [ -n "$chromium" ] || skip_browser "chromium is not installed and mk/setup.sh could not install it here (not root, no sudo without a password); to run it: sudo apt-get install -y chromium"
fi
version=$(watched --blocked 30s --cpu 1m --wall 5m -- "$chromium" --version 2>/dev/null) || version=
case $version in
  *Chromium*|*Chrome*) echo "test-report: $version" ;;
  *) skip_browser "$chromium is not a working chromium (--version said '$(printf '%s' "$version" | head -c 80)')" ;;
esac
if grep -q 'id="nod3"' "$dir/job.html"; then
  skip_browser "nccom-rings was built without D3 (the page says so): sh mk/setup.sh fetches it, then make test-report again"
fi

# The jobs. gen N SPINES LEAVES PER RANKS: N hosts trn0001.., PER a leaf,
# LEAVES leaves a spine, in a hostfile that takes one host from each leaf
# in turn; node 7 is the hostfile's 8th host.
gen() {
  n=$1 leaves=$3 per=$4 ranks=$5 j=$dir/job$1
  mkdir -p "$j"
  awk -v n="$n" -v leaves="$leaves" -v per="$per" 'BEGIN {
    for (i = 0; i < n; i++) printf "trn%04d core/spine%d/leaf%d\n", i + 1, int(i / (leaves * per)) + 1, int(i / per) + 1 }' > "$j/locations"
  awk -v per="$per" '{ h[NR] = $1 } END { for (k = 1; k <= per; k++) for (i = k; i <= NR; i += per) print h[i] }' "$j/locations" > "$j/hosts"
  run "plan --dump: $n nodes" "$tool" plan --locations "$j/locations" --hosts "$j/hosts" --ranks-per-node "$ranks" --dump "$j/plan"
  want_rc 0
  run "report: $n nodes" "$tool" report "$j/plan/rank" -o "$dir/job$n.html"
  want_rc 0
}
c16=cmd/nccom-rings/testdata/cluster16
mkdir -p "$dir/job16"
awk '!/^#/ && NF { n = substr($1, length("trn1-st-trn1-") + 1); printf "%s core/spine%d/leaf%d\n", $1, int((n - 1) / 8) + 1, int((n - 1) / 4) + 1 }' \
  "$c16/hosts.txt" > "$dir/job16/locations"
run "plan --dump: cluster16" "$tool" plan --locations "$dir/job16/locations" --hosts "$c16/hosts-sorted.txt" --ranks-per-node 4 --dump "$dir/job16/plan"
want_rc 0
run "report: cluster16" "$tool" report "$dir/job16/plan/rank" -o "$dir/job16.html"
want_rc 0
grep -v '^#' "$c16/hosts-sorted.txt" | awk 'NF { print $1 }' > "$dir/job16/hosts"
gen 128 4 4 8 8
gen 512 4 8 16 4
host7() { sed -n 8p "$1"; }

# The comparison: diff_test.go's scatteredHosts, 32 ranks a node, located
# as job16. Both orders number the nodes by rank, so in the hostfile's
# order: node 7 is its 8th host in either job.
mkdir -p "$dir/cmp16"
for h in 1 2 5 9 10 13 3 6 7 11 14 15 4 8 12 16; do echo "trn1-st-trn1-$h slots=32"; done > "$dir/cmp16/hosts"
run "plan --dump: cluster16 scattered" "$tool" plan --locations "$dir/job16/locations" --hosts "$dir/cmp16/hosts" --dump "$dir/cmp16/plan"
want_rc 0
run "report A B: scattered -> regrouped" "$tool" report "$dir/cmp16/plan/rank" "$dir/cmp16/plan/network" -o "$dir/cmp16.html"
want_rc 0
want '; crossings per ring: level 1: 0 -> 0 \(fewest 0\); level 2: 6 -> 2 \(fewest 2\); level 3: 12 -> 4 \(fewest 4\); 0 findings$'
cmp7=$(awk '{ print $1 }' "$dir/cmp16/hosts" | sed -n 8p)

run "build tests/report/browser" "${GO:-go}" build -o "$dir/browser" ./tests/report/browser
want_rc 0
mkdir -p "$dir/shots"
run "browser" watched --blocked 60s --cpu 2m --wall 20m -- "$dir/browser" --chromium "$chromium" --shots "$dir/shots" \
  "d25=$dir/job.html,host7=$(awk '!/^#/ && NF { print $1 }' "$d25/hosts" | sed -n 8p)" \
  "16-nodes=$dir/job16.html,host7=$(host7 "$dir/job16/hosts")" \
  "128-nodes=$dir/job128.html,host7=$(host7 "$dir/job128/hosts")" \
  "512-nodes=$dir/job512.html,host7=$(host7 "$dir/job512/hosts")" \
  "compare-16=$dir/cmp16.html,a-host7=$cmp7,b-host7=$cmp7"
want_rc 0
for p in d25 16-nodes 128-nodes 512-nodes compare-16; do want "^$p: passed$"; done
grep -v ': screenshot ' "$out" | sed 's/^/  /'
[ $fail -eq 0 ] && echo "test-report: passed: D25's example, 16, 128 and 512 nodes, and the 16-node comparison's two pictures in chromium at 1400 x 1000; screenshots in $dir/shots"
exit $fail
