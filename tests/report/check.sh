#!/bin/sh
# check.sh BUILD - `make test-report` (issue 23): nccom-rings report on the
# dumps `nccom-rings plan --dump` writes of D25's example (no C needed),
# spoiled twice: node 0's host is `<script>alert(1)</script>` and rank 5's
# channel-0 next is moved on, so that the page holds verify's findings.
# Then Debian's headless chromium opens the page: it must exit 0 with no
# console line (an uncaught error or a refused script is one), the script
# must have drawn the picture and the group picture (its counts from the
# JSON), the host must be text in the DOM, and the
# screenshot must not be one colour (tests/report/notblank). The page,
# the DOM and the screenshot stay in BUILD/report-test to look at.
#
# Where chromium is not installed (mk/setup.sh installs it where it can:
# as root or with sudo), the browser half is skipped with a line saying so;
# the page's own checks still run. Chromium runs under the watchdog
# (WATCHDOG, build/watchdog: tests/lib/watchdog.sh).
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

# One profile per run, and no sandbox: the tests may run as root. The
# page's address is $page, "#channel=N" opening it on channel N. Under the
# watchdog: 60 s with none of chromium's threads (in all its processes)
# running or waiting to run is a hang (it waits on nothing: the page is a
# local file), 5 min of CPU without output a spin, 20 min the last resort;
# a run takes 1 to 3 s quiet.
page=job.html
browse() {
  watched --blocked 60s --cpu 5m --wall 20m -- "$chromium" --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$dir/profile" \
    --enable-logging=stderr --v=0 --window-size=1280,900 "$@" "file://$dir/$page"
}
run "chromium --screenshot" browse --screenshot="$dir/job.png"
want_rc 0
if grep -E 'CONSOLE|Uncaught|Content Security Policy' "$out" > "$dir/console.txt"; then
  echo "FAIL: $desc: the page wrote to the console:"
  sed 's/^/  | /' "$dir/console.txt" | head -20
  fail=1
fi
run "the screenshot is not blank" "${GO:-go}" run ./tests/report/notblank "$dir/job.png"
want_rc 0
desc="chromium --dump-dom"
browse --dump-dom > "$dir/dom.html" 2> "$dir/dom.log"
rc=$?
cp "$dir/dom.html" "$out"
want_rc 0
want 'id="status"[^>]*>rendered in [0-9]+ ms, [0-9]+ ms after the page began to load<'
want 'channel-note">8 inter-node edges; 1 node with a finding on this channel; drawn in'
# The group picture (level 2: leafA, leafB): channel 0 keeps rank order,
# so 4 edges each way, both arrows red: each leaf is left 4 times.
want 'group-note">level 2, channel 0: 8 crossings between 2 groups, the fewest 2 \(\+6\)<'
want '<text class="over"[^>]*>4</text>'
# 8 nodes drawn 3 times larger: each square carries its node's index.
want '<text class="nlabel"[^>]*>7</text>'
want '<td>&lt;script&gt;alert\(1\)&lt;/script&gt;</td>'
if grep -E 'CONSOLE|Uncaught' "$dir/dom.log"; then echo "FAIL: $desc: the page wrote to the console"; fail=1; fi
if grep -q '<script>alert' "$dir/dom.html"; then echo "FAIL: $desc: the host's markup became an element"; fail=1; fi
# Channel 8 repeats channel 0 (D10) but for rank 5's moved next: rank 5
# is marked in channel 8's userRanks, filled by the script.
desc="chromium --dump-dom, #channel=8"
page='job.html#channel=8'
browse --dump-dom > "$out" 2> "$dir/dom8.log"
rc=$?
want_rc 0
want 'channel-note">8 inter-node edges; 1 node with a finding on this channel;'
want '<details data-channel="8" open=""><summary>channel 8: 32 ranks</summary><pre class="ranks">0 1 2 3 ([0-9]+ )+<mark id="c8-r5">5</mark>'
if grep -E 'CONSOLE|Uncaught' "$dir/dom8.log"; then echo "FAIL: $desc: the page wrote to the console"; fail=1; fi

ms=$(grep -oE 'rendered in [0-9]+ ms, [0-9]+ ms after the page began to load' "$dir/dom.html")
[ $fail -eq 0 ] && echo "test-report: passed: the page of D25's example in chromium: $ms, its screenshot $dir/job.png"
exit $fail
