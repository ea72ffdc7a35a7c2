package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
