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

func renderCompare(t *testing.T, c Compare) (string, CompareData) {
	t.Helper()
	for _, in := range []*Input{&c.A, &c.B} {
		if in.Job != nil && in.Score == nil {
			s, err := score.Compute(in.Job)
			require.NoError(t, err)
			in.Score = s
		}
	}
	var b bytes.Buffer
	require.NoError(t, WriteCompare(&b, c))
	html := b.String()
	_, rest, ok := strings.Cut(html, `<script type="application/json" id="compare">`)
	require.True(t, ok)
	text, _, ok := strings.Cut(rest, "</script>")
	require.True(t, ok)
	var d CompareData
	require.NoError(t, json.Unmarshal([]byte(text), &d))
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
	assert.NotContains(t, html, "<script>", "no script runs on a comparison page yet")
	require.NotNil(t, d.Score)
	assert.Equal(t, [2]int{2, 2}, d.Score.NICMismatches)
	assert.Equal(t, []string{"node sequence", "rings"}, []string{d.Changes[0].Kind, d.Changes[1].Kind})
	assert.Equal(t, "channel 0: 0 1 2 3 -> 0 2 1 3; 1 of 1 channels visit the nodes in another order", d.Changes[0].Text)
	assert.Equal(t, []string{"h0", "h1", "h2", "h3"}, d.B.Data.Host)
	assert.Nil(t, d.PredictedBusBandwidth)
}

// The bus bandwidth hook: a column only when it gives both jobs a figure.
func TestCompareBusBandwidthHook(t *testing.T) {
	a, b := fourNodes(), fourNodes()
	b.Rings = [][]int{{0, 2, 1, 3}}
	predict := func(j *score.Job) (float64, error) {
		if j.Rings[0][1] == 2 {
			return 12.5, nil
		}
		return 25, nil
	}
	c := Compare{A: Input{Dir: "a", Job: a}, B: Input{Dir: "b", Job: b}, PredictBusBandwidth: predict}
	html, d := renderCompare(t, c)
	assert.Contains(t, html, `<tr><td>predicted bus bandwidth (GB/s)</td><td class="n">25</td><td class="n">12.5</td></tr>`)
	assert.Equal(t, []float64{25, 12.5}, d.PredictedBusBandwidth)

	c.PredictBusBandwidth = func(*score.Job) (float64, error) { return 0, errors.New("no model") }
	html, d = renderCompare(t, c)
	assert.NotContains(t, html, "predicted bus bandwidth")
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
	assert.Equal(t, []string{"host-1", "host-5", "host-3", "host-4"}, d.B.Data.Host)
	assert.Equal(t, "DIR_B", d.B.Dir)
}

// A job without rings: its side says why, and nothing is compared.
func TestCompareWithoutRings(t *testing.T) {
	html, d := renderCompare(t, Compare{A: Input{Dir: "a", Job: fourNodes()}, B: Input{Dir: "b", JobError: "rank 3 has no dump (of 4 ranks)"}})
	assert.Contains(t, html, "No comparison: B has no rings (rank 3 has no dump (of 4 ranks)).")
	assert.Nil(t, d.Score)
	assert.Nil(t, d.B.Data)
	assert.NotNil(t, d.A.Data)
}
