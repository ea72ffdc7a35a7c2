package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/score"
)

// jsonBlock is the JSON of html's <script type="application/json"
// id=ID> read into out; false when the page has no such block.
func jsonBlock(t *testing.T, html, id string, out any) bool {
	t.Helper()
	_, rest, ok := strings.Cut(html, `<script type="application/json" id="`+id+`">`)
	if !ok {
		return false
	}
	text, _, ok := strings.Cut(rest, "</script>")
	require.True(t, ok)
	require.NoError(t, json.Unmarshal([]byte(text), out))
	return true
}

// sideData is side's ("a" or "b") blob on a comparison page, nil when
// it has none.
func sideData(t *testing.T, html, side string) *Data {
	t.Helper()
	var d Data
	if !jsonBlock(t, html, side+"-data", &d) {
		return nil
	}
	return &d
}

func renderCompare(t *testing.T, c Compare) (string, CompareData) {
	t.Helper()
	scoreInput(t, &c.A)
	scoreInput(t, &c.B)
	var b bytes.Buffer
	require.NoError(t, WriteCompare(&b, c))
	html := b.String()
	var d CompareData
	require.True(t, jsonBlock(t, html, "compare", &d))
	return html, d
}

// fourNodes in rank order against its ring 0 2 1 3. Level 1's groups are
// s0, s1 and no location: A crosses 1 -> 2, 2 -> 3 and 3 -> 0, the 3 it
// must; B every edge, 4. Level 2 (a, b, c, none): every edge of both, 4.
// NIC indices (rank r uses r, rank 3 none): 0 -> 1 and 1 -> 2 mismatch in
// A, 0 -> 2 and 2 -> 1 in B, the edges to and from rank 3 unknown.
func TestCompareOfTwoRings(t *testing.T) {
	a, b := fourNodes(), fourNodes()
	b.Rings = [][]int{{0, 2, 1, 3}}
	html, d := renderCompare(t, Compare{A: Input{Dir: "a", Job: a, LocationsFrom: "dumps"}, B: Input{Dir: "b", Job: b, LocationsFrom: "dumps"}})
	assert.Contains(t, html, `<tr><td class="n">1</td><td class="n">3</td><td class="n">3</td><td class="n over">4</td><td class="n">&#43;1</td></tr>`)
	assert.Contains(t, html, `<tr><td class="n">2</td><td class="n">4</td><td class="n">4</td><td class="n">4</td><td class="n">0</td></tr>`)
	assert.Contains(t, html, `<td class="n">2 of 4</td><td class="n">2 of 4</td>`)
	assert.Contains(t, html, "<title>nccom-rings report: a -&gt; b</title>")
	assert.Equal(t, 1, strings.Count(html, "<script>"+script+"</script>"), "page.js, once, draws both jobs")
	require.NotNil(t, d.Score)
	assert.Equal(t, [2]int{2, 2}, d.Score.NICMismatches)
	assert.Equal(t, []string{"node sequence", "rings"}, []string{d.Changes[0].Kind, d.Changes[1].Kind})
	assert.Equal(t, "channel 0: 0 1 2 3 -> 0 2 1 3; 1 of 1 channels visit the nodes in another order", d.Changes[0].Text)
	assert.Equal(t, []string{"h0", "h1", "h2", "h3"}, sideData(t, html, "b").Host)
	assert.Equal(t, [][]int{{0, 2, 1, 3}}, sideData(t, html, "b").Rings)
	assert.Equal(t, [][]int{{0, 1, 2, 3}}, sideData(t, html, "a").Rings)
	assert.Nil(t, d.PredictedBusBandwidth)
	assert.NotContains(t, html, "predicted bus bandwidth", "no hook, no note: nothing said")
}

// The bus bandwidth hook: a row only when it gives both jobs a figure,
// with what the figure is and the model's assumptions beside it; else the
// page says why there is none.
func TestCompareBusBandwidthHook(t *testing.T) {
	a, b := fourNodes(), fourNodes()
	b.Rings = [][]int{{0, 2, 1, 3}}
	predict := func(j *score.Job) (float64, error) {
		if j.Rings[0][1] == 2 {
			return 12.54, nil
		}
		return 25, nil
	}
	c := Compare{A: Input{Dir: "a", Job: a}, B: Input{Dir: "b", Job: b}, PredictBusBandwidth: predict,
		Predicted: "AllReduce of 256 MiB", Assumptions: []string{"NIC rate <100>", "spray"}}
	html, d := renderCompare(t, c)
	assert.Contains(t, html, `<tr><td>predicted bus bandwidth (Gbit/s, nccl-tests' busbw)</td><td class="n">25.0</td><td class="n">12.5</td></tr>`)
	assert.Contains(t, html, `<p>Predicted bus bandwidth: AllReduce of 256 MiB. A model`)
	assert.Contains(t, html, "<li>NIC rate &lt;100&gt;</li>\n<li>spray</li>")
	assert.Equal(t, []float64{25, 12.54}, d.PredictedBusBandwidth)
	assert.Equal(t, "AllReduce of 256 MiB", d.Prediction)

	c.PredictBusBandwidth = func(j *score.Job) (float64, error) {
		if j == b {
			return 0, errors.New("no model")
		}
		return 1, nil
	}
	html, d = renderCompare(t, c)
	assert.NotContains(t, html, "predicted bus bandwidth (Gbit/s")
	assert.NotContains(t, html, "NIC rate")
	assert.Contains(t, html, `<p id="prediction">predicted bus bandwidth: not available (B: no model)</p>`)
	assert.Nil(t, d.PredictedBusBandwidth)

	c.PredictBusBandwidth = nil
	c.NoPrediction = "not available (SimGrid engine not built: make)"
	html, d = renderCompare(t, c)
	assert.Contains(t, html, `<p id="prediction">predicted bus bandwidth: not available (SimGrid engine not built: make)</p>`)
	assert.Equal(t, c.NoPrediction, d.Prediction)
	assert.Nil(t, d.PredictedBusBandwidth)
}

// The texts of the changes come from the dumps: escaped, made visible
// and redacted as the rest of the page.
func TestCompareChangesAreTextAndRedacted(t *testing.T) {
	a, b := fourNodes(), fourNodes("h0", "<b>x\u202e</b>", "h2", "h3")
	html, d := renderCompare(t, Compare{A: Input{Dir: "a", Job: a}, B: Input{Dir: "b", Job: b}})
	assert.NotContains(t, html, "<b>x")
	assert.NotContains(t, html, "\u202e")
	require.Len(t, d.Changes, 1)
	assert.Equal(t, "placement", d.Changes[0].Kind)
	assert.Contains(t, d.Changes[0].Text, `node 1 on host "h1" -> `)

	html, d = renderCompare(t, Compare{A: Input{Dir: "/x/a", Job: a, Redact: true}, B: Input{Dir: "/x/b", Job: b, Redact: true}})
	assert.NotContains(t, html, `"h1"`)
	assert.NotContains(t, html, "x\\xe2", "the hostile name is a token too")
	assert.NotContains(t, html, "/x/")
	// A's hosts are host-1..4; B's node 1 is a fifth host.
	assert.Equal(t, `node 1 on host "host-2" -> "host-5"; 0 ranks on another node, 1 of 4 nodes on another host`, d.Changes[0].Text)
	assert.Equal(t, []string{"host-1", "host-5", "host-3", "host-4"}, sideData(t, html, "b").Host)
	assert.Equal(t, "DIR_B", d.B.Dir)
}

// A job without rings: its side says why, and nothing is compared.
func TestCompareWithoutRings(t *testing.T) {
	html, d := renderCompare(t, Compare{A: Input{Dir: "a", Job: fourNodes()}, B: Input{Dir: "b", JobError: "rank 3 has no dump (of 4 ranks)"}})
	assert.Contains(t, html, "No comparison: B has no rings (rank 3 has no dump (of 4 ranks)).")
	assert.Nil(t, d.Score)
	assert.Nil(t, sideData(t, html, "b"))
	assert.NotNil(t, sideData(t, html, "a"))
	assert.Equal(t, "rank 3 has no dump (of 4 ranks)", d.B.Error)
	assert.Contains(t, html, `<svg id="a-ring" class="ring"`)
	assert.NotContains(t, html, `id="b-ring"`)
}

// The page of two jobs draws both with the one-job page's scripts (D3
// and page.js, once each) under the same Content-Security-Policy: each
// job's views and blob have the ids page.js reads, prefixed "a-" and
// "b-", and no id is left unprefixed for page.js to draw into twice.
func TestCompareDrawsBothJobsWithTheOnePageScript(t *testing.T) {
	a, b := fourNodes(), fourNodes()
	b.Rings = [][]int{{0, 2, 1, 3}}
	html, _ := renderCompare(t, Compare{A: Input{Dir: "a", Job: a}, B: Input{Dir: "b", Job: b}})
	one := render(t, Input{Dir: "a", Job: a})
	assert.Equal(t, scripts(t, one), scripts(t, html))
	csp := func(page string) string {
		_, rest, _ := strings.Cut(page, `http-equiv="Content-Security-Policy" `)
		attr, _, _ := strings.Cut(rest, ">")
		return attr
	}
	assert.Equal(t, csp(one), csp(html))
	assert.Contains(t, csp(html), "default-src 'none'")
	for _, p := range []string{"a-", "b-"} {
		for _, id := range []string{"ring", "groups", "channel", "level", "find", "fit", "find-note", "channel-note", "group-note", "node-table", "node-2", "status"} {
			assert.Equal(t, 1, strings.Count(html, ` id="`+p+id+`"`), p+id)
		}
		assert.Equal(t, 1, strings.Count(html, `<script type="application/json" id="`+p+`data">`), p+"data")
	}
	for _, id := range []string{"ring", "groups", "channel", "find", "fit", "node-table", "node-2", "status", "data"} {
		assert.NotContains(t, html, ` id="`+id+`"`)
	}
	assert.Contains(t, html, `<div class="sides">`)

	saved := d3Script
	d3Script = ""
	defer func() { d3Script = saved }()
	html, _ = renderCompare(t, Compare{A: Input{Dir: "a", Job: a}, B: Input{Dir: "b", Job: b}})
	assert.Equal(t, []string{script}, scripts(t, html))
	assert.Contains(t, html, `<p id="a-nod3" class="nod3 bad">This page was built without D3`)
	assert.Contains(t, html, `<p id="b-nod3" class="nod3 bad">`)
}
