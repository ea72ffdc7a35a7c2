package main

import (
	"encoding/json"
	"fmt"
	stdhtml "html"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/report"
	"github.com/nccomring/libnccomring/cmd/nccom-rings/simulate"
	"github.com/nccomring/libnccomring/internal/cli"
	"github.com/nccomring/libnccomring/ringdump"
)

func readPage(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

func rankFile(t *testing.T, dir string, rank int) string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, fmt.Sprintf("rank-%06d.*.json", rank)))
	require.NoError(t, err)
	require.Len(t, m, 1)
	return m[0]
}

func TestReportOfD25sExample(t *testing.T) {
	dir, _ := planD25(t)
	page := filepath.Join(t.TempDir(), "job.html")
	code, out, errOut := runTool("report", filepath.Join(dir, "rank"), "-o", page)
	require.Equal(t, cli.ExitOK, code, errOut)
	assert.Equal(t, `nccom-rings report: wrote "`+page+`": 32 ranks, 8 nodes, 16 channels; 0 findings`+"\n", out)
	html := readPage(t, page)
	assert.Contains(t, html, "32 ranks on 8 nodes, 16 channels (8 before doubling); locations from the dumps: 8 of 8 nodes located, 2 levels.")
	assert.Contains(t, html, "Every rank agrees on every channel.")
	// Rank order alternates leaves: 8 leaf crossings of the 2 a ring needs.
	assert.Contains(t, html, `<td class="n over">8 / 2 (2) +6</td>`)
	assert.Contains(t, html, "<td>trn001</td><td>spine0/leafA</td><td>0-3</td>")

	code, _, errOut = runTool("report", filepath.Join(dir, "rank"), "--redact", "-o", page)
	require.Equal(t, cli.ExitOK, code, errOut)
	html = readPage(t, page)
	assert.NotContains(t, html, "trn00")
	assert.NotContains(t, html, "leafA")
	assert.Contains(t, html, "<td>host-1</td><td>loc-1/loc-2</td><td>0-3</td>")
}

func TestReportShowsFindingsAndHostileHostsAsText(t *testing.T) {
	dir, _ := planD25(t)
	ranks := filepath.Join(dir, "rank")
	edit(t, rankFile(t, ranks, 0), func(d *ringdump.Dump) { d.Host = "<script>alert(1)</script>" })
	edit(t, rankFile(t, ranks, 5), func(d *ringdump.Dump) { d.Channels[0].Next = (d.Channels[0].Next + 1) % d.NRanks })
	page := filepath.Join(t.TempDir(), "job.html")
	code, out, errOut := runTool("report", ranks, "-o", page)
	require.Equal(t, cli.ExitFinding, code, errOut)
	assert.Contains(t, out, "; 2 findings\n")
	html := readPage(t, page)
	assert.NotContains(t, html, "<script>alert")
	assert.Contains(t, html, "<td>&lt;script&gt;alert(1)&lt;/script&gt;</td><td>spine0/leafA</td><td>0-3</td>")
	// Rank 5 (node 1) sent to 6; its next now says 7, 33 of 34 views say 6.
	assert.Contains(t, html, `data-rank="5" data-channel="0"><td class="n">5</td><td class="n">0</td><td>next</td><td>rank 5: channel 0 next is 7, but rank 7&#39;s prev is 6; 33 of 34 views have 6 after 5`)
	assert.Contains(t, html, `<tr id="node-1" data-node="1" class="marked"><td class="n">1</td><td>trn002</td>`)
}

func TestReportWithoutRings(t *testing.T) {
	dir, _ := planD25(t)
	ranks := filepath.Join(dir, "rank")
	require.NoError(t, os.Remove(rankFile(t, ranks, 3)))
	page := filepath.Join(t.TempDir(), "job.html")
	code, out, errOut := runTool("report", ranks, "-o", page)
	require.Equal(t, cli.ExitFinding, code, errOut)
	assert.Equal(t, `nccom-rings report: wrote "`+page+`": no rings (rank 3 has no dump (of 32 ranks)); 1 finding`+"\n", out)
	html := readPage(t, page)
	assert.Contains(t, html, "No rings to show: rank 3 has no dump (of 32 ranks)")
	assert.Contains(t, html, "missing rank 3 (of 32)")
}

func TestReportUsage(t *testing.T) {
	code, out, _ := runTool("report", "--help")
	assert.Equal(t, cli.ExitOK, code)
	assert.Contains(t, out, "Usage: nccom-rings report [--locations FILE] [--redact] -o FILE DIR\n")
	code, _, errOut := runTool("report", t.TempDir())
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Contains(t, errOut, "-o FILE is needed")
	code, _, errOut = runTool("report", filepath.Join(t.TempDir(), "none"), "-o", filepath.Join(t.TempDir(), "x.html"))
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Contains(t, errOut, "nccom-rings report: ")
	dir, _ := planD25(t)
	code, _, errOut = runTool("report", filepath.Join(dir, "rank"), "--locations", filepath.Join(dir, "none"), "-o", filepath.Join(t.TempDir(), "x.html"))
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Contains(t, errOut, "none")
}

// compareBlock is a comparison page's JSON block.
func compareBlock(t *testing.T, html string) report.CompareData {
	t.Helper()
	_, rest, ok := strings.Cut(html, `<script type="application/json" id="compare">`)
	require.True(t, ok)
	text, _, ok := strings.Cut(rest, "</script>")
	require.True(t, ok)
	var d report.CompareData
	require.NoError(t, json.Unmarshal([]byte(text), &d))
	return d
}

// sideBlob is side's ("a" or "b") blob on a comparison page, what page.js
// draws that job from.
func sideBlob(t *testing.T, html, side string) *report.Data {
	t.Helper()
	_, rest, ok := strings.Cut(html, `<script type="application/json" id="`+side+`-data">`)
	require.True(t, ok, "no %s-data block", side)
	text, _, ok := strings.Cut(rest, "</script>")
	require.True(t, ok)
	var d report.Data
	require.NoError(t, json.Unmarshal([]byte(text), &d))
	return &d
}

// Issue 37, done when 3: the scattered job and its regrouped version
// (TestDiffOfTheScatteredJobAndItsRegroupedVersion's figures, by hand
// there) side by side: 6 -> 2 crossings of the spines, 12 -> 4 of the
// leaves, each at its fewest after.
func TestReportComparesTheScatteredAndRegroupedJobs(t *testing.T) {
	dumps := planScattered(t)
	scattered, regrouped := filepath.Join(dumps, "rank"), filepath.Join(dumps, "network")
	page := filepath.Join(t.TempDir(), "cmp.html")
	code, out, errOut := runTool("report", scattered, regrouped, "-o", page)
	require.Equal(t, cli.ExitOK, code, errOut)
	assert.Equal(t, `nccom-rings report: wrote "`+page+`": 512 ranks, 16 nodes, 16 channels -> 512 ranks, 16 nodes, 16 channels; `+
		`crossings per ring: level 1: 0 -> 0 (fewest 0); level 2: 6 -> 2 (fewest 2); level 3: 12 -> 4 (fewest 4); 0 findings`+"\n", out)
	html := readPage(t, page)
	// level, fewest, A, B, change
	assert.Contains(t, html, `<tr><td class="n">2</td><td class="n">2</td><td class="n">6</td><td class="n">2</td><td class="n">-4</td></tr>`)
	assert.Contains(t, html, `<tr><td class="n">3</td><td class="n">4</td><td class="n">12</td><td class="n">4</td><td class="n">-8</td></tr>`)
	assert.Contains(t, html, `<td class="n">128 of 256</td><td class="n">128 of 256</td>`)
	assert.Contains(t, html, `<tr><td>rank views</td><td class="n">512</td>`)
	assert.Contains(t, html, `<p id="prediction">predicted bus bandwidth: not computed (nccom-rings report --simulate predicts it, with the SimGrid engine built)</p>`, "no --simulate: no figure, and the page says how to get one")
	assert.NotContains(t, html, "predicted bus bandwidth (Gbit/s")
	assert.Contains(t, html, `<td class="n">0</td><td class="n">16</td><td class="n">0 / 0</td><td class="n over">6 / 2 +4</td><td class="n over">12 / 4 +8</td>`, "A's channel 0")

	d := compareBlock(t, html)
	require.NotNil(t, d.Score)
	require.Len(t, d.Score.Levels, 3)
	assert.Equal(t, []int{6, 2, 12, 4}, []int{d.Score.Levels[1].A.Most, d.Score.Levels[1].B.Most, d.Score.Levels[2].A.Most, d.Score.Levels[2].B.Most})
	assert.Nil(t, d.PredictedBusBandwidth)
	assert.False(t, d.Same)
	assert.Equal(t, 512, sideBlob(t, html, "a").NRanks)
	assert.Len(t, sideBlob(t, html, "b").Tiers, 2, "levels 2 and 3 have two or more groups")
	assert.Equal(t, scattered, d.A.Dir)

	// Redacted: one token per host across both sides.
	code, _, errOut = runTool("report", "--redact", scattered, regrouped, "-o", page)
	require.Equal(t, cli.ExitOK, code, errOut)
	html = readPage(t, page)
	assert.NotContains(t, html, "trn1-st")
	assert.NotContains(t, html, dumps)
	d = compareBlock(t, html)
	assert.Equal(t, "DIR_A", d.A.Dir)
	a, b := sideBlob(t, html, "a"), sideBlob(t, html, "b")
	assert.Equal(t, a.Host, b.Host, "the same hosts, the same tokens, in node order")
	assert.Equal(t, "host-1", a.Host[0])
}

// One rank's dump differs: the page's table of changes names it, and
// verify's finding in B makes the exit 1 (report's contract: findings).
func TestReportComparesJobsThatDifferInOneRank(t *testing.T) {
	a, _ := planD25(t)
	b, _ := planD25(t)
	rankA, rankB := filepath.Join(a, "rank"), filepath.Join(b, "rank")
	edit(t, rankFile(t, rankB, 5), func(d *ringdump.Dump) { d.Channels[0].Next = 7 })
	page := filepath.Join(t.TempDir(), "cmp.html")
	code, out, errOut := runTool("report", rankA, rankB, "-o", page)
	require.Equal(t, cli.ExitFinding, code, errOut)
	// verify finds rank 5 twice in B: on channel 0, and on channel 8,
	// which repeats channel 0 (D10).
	assert.True(t, strings.HasSuffix(out, "; crossings per ring: level 1: 0 -> 0 (fewest 0); level 2: 8 -> 8 (fewest 2); 2 findings\n"), out)
	html := readPage(t, page)
	assert.Contains(t, html, `<tr><td>rank views</td><td class="n">1</td><td>rank 5&#39;s dump: channel 0&#39;s next 6 -&gt; 7; 1 of 32 ranks&#39; own dumps differ (rank 5)</td></tr>`)
	assert.Contains(t, html, `<tr><td class="n">5</td><td>channel 0&#39;s next 6 -&gt; 7</td></tr>`)
	assert.Contains(t, html, `<span class="ok">every rank agrees on every channel</span></td><td><span class="bad">2 findings</span>`)

	// A side without rings: the page says so, and there is no comparison.
	require.NoError(t, os.Remove(rankFile(t, rankA, 3)))
	code, out, _ = runTool("report", rankA, rankB, "-o", page)
	assert.Equal(t, cli.ExitFinding, code)
	assert.Contains(t, out, `: no rings (rank 3 has no dump (of 32 ranks)) -> 32 ranks, 8 nodes, 16 channels; 3 findings`+"\n", "A's missing rank and B's two")
	html = readPage(t, page)
	assert.Contains(t, html, "No comparison: A has no rings (rank 3 has no dump (of 32 ranks)).")
	d := compareBlock(t, html)
	assert.Nil(t, d.Score)
	assert.NotContains(t, html, `id="a-data"`)
	assert.Contains(t, html, `id="b-data"`)
	assert.Equal(t, "rank 3 has no dump (of 32 ranks)", d.A.Error)

	// Unusable: both directories named, exit 2.
	code, _, errOut = runTool("report", filepath.Join(a, "none"), rankB, "-o", page)
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Contains(t, errOut, "none")
}

// report --simulate: each job's predicted bus bandwidth, from the
// simulate package run in this process. D25's example by hand
// (TestPlanSimulate's figures): 4 NICs a node, 16 channels, so 4 flows a
// NIC at 25 Gbit/s; AllReduce of 256 MiB is 62 steps of 15 us +
// 256 MiB / (16 x 32) / 3.125 GB/s = 11.33 ms; busbw 256 MiB / 11.33 ms x
// 62/32 = 367.2 Gbit/s, in either order at 1:1 (at 2:1 the rank order
// would be 191: the figure is the 1:1 row).
func TestReportSimulate(t *testing.T) {
	needEngine(t)
	dir, _ := planD25(t)
	page := filepath.Join(t.TempDir(), "cmp.html")
	code, _, errOut := runTool("report", "--simulate", filepath.Join(dir, "rank"), filepath.Join(dir, "network"), "-o", page)
	require.Equal(t, cli.ExitOK, code, errOut)
	assert.Empty(t, errOut)
	html := readPage(t, page)
	d := compareBlock(t, html)
	require.Len(t, d.PredictedBusBandwidth, 2)
	assert.InDelta(t, 367.2, d.PredictedBusBandwidth[0], 0.05)
	assert.InDelta(t, 367.2, d.PredictedBusBandwidth[1], 0.05)
	assert.Contains(t, html, `<tr><td>predicted bus bandwidth (Gbit/s, nccl-tests' busbw)</td><td class="n">367.2</td><td class="n">367.2</td></tr>`)
	assert.Contains(t, d.Prediction, "AllReduce of 256 MiB (nccl-tests' size) on each job's rings as built (--algorithm flat), oversubscription 1:1")
	assert.Contains(t, d.Prediction, "NIC 100 Gbit/s, 15 us a hop")
	// simulate's assumptions, every one, beside the figure.
	_, list, _ := strings.Cut(html, `<div id="prediction">`)
	list, _, _ = strings.Cut(list, "</ul>")
	var items []string
	for _, li := range strings.Split(list, "<li>")[1:] {
		items = append(items, stdhtml.UnescapeString(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(li), "</li>"))))
	}
	assert.Equal(t, simulate.Assumptions(simulate.Options{Model: simulate.Model{NICGbps: 100, LatencySeconds: 15e-6}, Algorithms: []string{"flat"}}), items)
}

// Without the engine, report --simulate writes the page, which says the
// figure is not available and why, and exits as it would without the
// flag; --simulate with one job is a usage error.
func TestReportSimulateWithoutTheEngine(t *testing.T) {
	t.Setenv("NCCOM_SIMULATE_ENGINE", "")
	t.Setenv("NCCOMRING_BUILD", t.TempDir())
	_, err := simulate.FindEngine()
	require.ErrorIs(t, err, simulate.ErrNoEngine)
	dir, _ := planD25(t)
	page := filepath.Join(t.TempDir(), "cmp.html")
	code, out, errOut := runTool("report", "--simulate", filepath.Join(dir, "rank"), filepath.Join(dir, "network"), "-o", page)
	assert.Equal(t, cli.ExitOK, code, errOut)
	assert.Contains(t, out, "nccom-rings report: wrote ")
	assert.Equal(t, "nccom-rings report: --simulate: predicted bus bandwidth not available (SimGrid engine not built: apt-get install -y libsimgrid-dev (SimGrid 3.32), then make)\n", errOut)
	html := readPage(t, page)
	assert.Contains(t, html, `<p id="prediction">predicted bus bandwidth: not available (SimGrid engine not built: apt-get install -y libsimgrid-dev (SimGrid 3.32), then make)</p>`)
	d := compareBlock(t, html)
	assert.Nil(t, d.PredictedBusBandwidth)
	require.NotNil(t, d.Score, "the rest of the page as without --simulate")

	code, _, errOut = runTool("report", "--simulate", filepath.Join(dir, "rank"), "-o", page)
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Contains(t, errOut, "--simulate compares two jobs")
}
