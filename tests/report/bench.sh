#!/bin/sh
# bench.sh BUILD - make bench's report figure (issue 37): the time to the
# first picture of nccom-rings report's page at 2,048 nodes (8 spines x 16
# leaves x 16 nodes, 2 ranks a node: 4,096 ranks, plan's limit for dumps),
# in headless chromium at 1400 x 1000: the page's own figure (from the
# start of navigation to the end of its first drawing, #status), the
# median of 3 loads (tests/report/browser --bench). A figure, not an
# assertion: the target is 2 s. Without chromium or D3 the line says
# skipped and why. Under the watchdog as check.sh's browser half is.
set -u
build=${1:?usage: WATCHDOG=PATH GO=go bench.sh BUILD}
tool=$build/nccom-rings
dir=$(cd "$build" && pwd)/report-bench
rm -rf "$dir"
mkdir -p "$dir"
. "$(dirname "$0")/../lib/watchdog.sh"
skip() { echo "report: first picture at 2,048 nodes: skipped: $1"; exit 0; }
chromium=${CHROMIUM-$(command -v chromium || command -v chromium-browser || true)}
[ -n "$chromium" ] || skip "no chromium (sudo apt-get install -y chromium)"
awk 'BEGIN { for (i = 0; i < 2048; i++) printf "trn%04d core/spine%d/leaf%d\n", i + 1, int(i / 256) + 1, int(i / 16) + 1 }' > "$dir/locations"
awk '{ h[NR] = $1 } END { for (k = 1; k <= 16; k++) for (i = k; i <= NR; i += 16) print h[i] }' "$dir/locations" > "$dir/hosts"
"$tool" plan --locations "$dir/locations" --hosts "$dir/hosts" --ranks-per-node 2 --dump "$dir/plan" > "$dir/plan.out" 2>&1 ||
  { cat "$dir/plan.out"; exit 1; }
"$tool" report "$dir/plan/rank" -o "$dir/job2048.html" > "$dir/report.out" 2>&1 || { cat "$dir/report.out"; exit 1; }
grep -q 'id="nod3"' "$dir/job2048.html" && skip "nccom-rings was built without D3 (sh mk/setup.sh fetches it)"
"${GO:-go}" build -o "$dir/browser" ./tests/report/browser || exit 1
watched --blocked 60s --cpu 2m --wall 20m -- "$dir/browser" --chromium "$chromium" --bench --runs 3 "2048-nodes=$dir/job2048.html"
