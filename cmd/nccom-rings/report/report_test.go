package report

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/score"
	"github.com/nccomring/libnccomring/cmd/nccom-rings/verify"
)

// fourNodes is 4 ranks, one per node, on one channel in rank order: nodes
// 0 and 1 under s0 (leaves a and b), node 2 under s1, node 3 without a
// location; rank r uses NIC index r on the channel, rank 3 none.
func fourNodes(hosts ...string) *score.Job {
	if hosts == nil {
		hosts = []string{"h0", "h1", "h2", "h3"}
	}
	return &score.Job{
		NRanks: 4, NNodes: 4, Node: []int{0, 1, 2, 3},
		Host:     hosts,
		Location: []string{"s0/a", "s0/b", "s1/c", ""},
		Rings:    [][]int{{0, 1, 2, 3}}, GraphChannels: 1,
		NetDev: []int{0, 1, 2, -1},
	}
}

func render(t *testing.T, in Input) string {
	t.Helper()
	if in.Job != nil && in.Score == nil {
		s, err := score.Compute(in.Job)
		require.NoError(t, err)
		in.Score = s
	}
	var b bytes.Buffer
	require.NoError(t, Write(&b, in))
	return b.String()
}

// blob is the page's JSON data.
func blob(t *testing.T, html string) Data {
	t.Helper()
	_, rest, ok := strings.Cut(html, `<script type="application/json" id="data">`)
	require.True(t, ok)
	text, _, ok := strings.Cut(rest, "</script>")
	require.True(t, ok)
	var d Data
	require.NoError(t, json.Unmarshal([]byte(text), &d))
	return d
}

func TestLayoutByHand(t *testing.T) {
	// Boxes "a" (nodes 1, 2: 2 columns), "b" (node 0), then the nodes
	// without a location (node 3). Box a: 2*16+2*6 = 44 wide, 14+16+12 =
	// 42 high, at (12, 12); its nodes' centres at x 12+6+8 and +16, y
	// 12+14+6+8. Box b at x 12+44+12 = 68, 28 wide; the last at 108.
	x, y, boxes, w, h := Layout([]string{"b", "a", "a", ""})
	assert.Equal(t, []int{82, 26, 42, 122}, x)
	assert.Equal(t, []int{40, 40, 40, 40}, y)
	assert.Equal(t, []Box{{"a", 12, 12, 44, 42}, {"b", 68, 12, 28, 42}, {"", 108, 12, 28, 42}}, boxes)
	assert.Equal(t, 148, w)
	assert.Equal(t, 66, h)
}

func TestLayoutWrapsAndWidensForNames(t *testing.T) {
	// 100 boxes of one node named "g00".."g99": each max(28, 6*3+8) = 28
	// wide; 40 per row (12 + 40*40 = 1612 > 1200 so fewer): a row holds
	// boxes while x+28 <= 1200, x = 12+40k: k = 0..29, 30 a row.
	var locs []string
	for i := range 100 {
		locs = append(locs, "g"+string(rune('0'+i/10))+string(rune('0'+i%10)))
	}
	_, y, boxes, w, h := Layout(locs)
	assert.Equal(t, Box{"g29", 12 + 29*40, 12, 28, 42}, boxes[29])
	assert.Equal(t, Box{"g30", 12, 12 + 42 + 12, 28, 42}, boxes[30])
	assert.Equal(t, 12+30*40, w)
	assert.Equal(t, 12+4*54, h) // 4 rows of 42+12
	assert.Equal(t, 12+3*54+14+6+8, y[99])

	_, _, boxes, _, _ = Layout([]string{"spine0/leafA"})
	assert.Equal(t, 6*12+8, boxes[0].W)
}

func TestNaturalOrder(t *testing.T) {
	names := []string{"s0/leaf10", "s0/leaf9", "s1/leaf1", "s0/leaf01", "s0/leaf1", "s0/leaf", "s10/a", "s2/a"}
	slices.SortFunc(names, naturalCompare)
	assert.Equal(t, []string{"s0/leaf", "s0/leaf01", "s0/leaf1", "s0/leaf9", "s0/leaf10", "s1/leaf1", "s2/a", "s10/a"}, names)
}

func TestEdgesByHand(t *testing.T) {
	d, err := NewData(fourNodes(), []verify.Finding{{Rank: 2, Channel: 0}, {Rank: -1, Channel: -1}, {Rank: 3, Channel: -1}})
	require.NoError(t, err)
	// 0 -> 1: s0 on both, a and b at level 2; 1 -> 2: s0 and s1; 2 -> 3
	// and 3 -> 0: node 3 has no location, which differs at level 1.
	assert.Equal(t, [][]int{{
		0, 1, 0, 1, 0, 1, 2,
		1, 2, 1, 2, 1, 2, 1,
		2, 3, 2, 3, 2, -1, 1,
		3, 0, 3, 0, -1, 0, 1,
	}}, d.Edges)
	assert.Equal(t, []int{2, 0, 0, 3, -1, 2}, d.Marks)

	// Two ranks a node: the edges inside a node are not drawn.
	j := &score.Job{NRanks: 4, NNodes: 2, Node: []int{0, 0, 1, 1}, Host: []string{"x", "y"}, Location: []string{"", ""},
		Rings: [][]int{{0, 1, 2, 3}, {0, 2, 3, 1}}, NetDev: []int{0, 0, 1, 1, 2, 2, 3, 3}}
	d, err = NewData(j, nil)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1, 1, 2, 0, 1, 0, 1, 0, 3, 0, 1, 0, 0}, d.Edges[0])
	assert.Equal(t, []int{0, 1, 0, 2, 2, 3, 0, 1, 0, 3, 1, 3, 2, 0}, d.Edges[1])
}

// D28: the picture's boxes are the library's placement. Two leaf names
// whose FNV-1a hashes collide (0xf738b38c both) are one leaf to it, so one
// box, named by the first; a third leaf is a box of its own. The names a
// page shows per node stay each host's own.
func TestBoxesAreTheLibrarysPlacement(t *testing.T) {
	j := &score.Job{NRanks: 3, NNodes: 3, Node: []int{0, 1, 2}, Host: []string{"x", "y", "z"},
		Location: []string{"s/leaf13298", "s/leaf302080", "s/other"},
		Rings:    [][]int{{0, 1, 2}}, NetDev: []int{0, 0, 0}}
	d, err := NewData(j, nil)
	require.NoError(t, err)
	var names []string
	for _, b := range d.Groups {
		names = append(names, b.Name)
	}
	assert.Equal(t, []string{"s/leaf13298", "s/other"}, names)
	assert.Equal(t, j.Location, d.Location)
	assert.Equal(t, Cell, d.X[1]-d.X[0], "nodes 0 and 1 side by side in one box")
}

func TestHostileStringsAreText(t *testing.T) {
	evil := `<script>alert(1)</script>`
	j := fourNodes(evil, "h1", `"><img src=x onerror=alert(2)>`, "h3")
	html := render(t, Input{Dir: "/tmp/</title><script>alert(3)</script>", Job: j, LocationsFrom: "dumps",
		Findings: []verify.Finding{{Kind: "failed", Rank: 0, Channel: -1, Message: "rank 0: WARN </script><script>alert(4)</script>", Hint: "h"}}})
	assert.NotContains(t, html, "<script>alert")
	assert.NotContains(t, html, "<img")
	assert.Contains(t, html, "<td>&lt;script&gt;alert(1)&lt;/script&gt;</td>")
	assert.Contains(t, html, "rank 0: WARN &lt;/script&gt;&lt;script&gt;alert(4)&lt;/script&gt;")
	assert.Contains(t, html, "<title>nccom-rings report: /tmp/&lt;/title&gt;&lt;script&gt;alert(3)&lt;/script&gt;</title>")
	// In the JSON, '<' is \u003c: no string closes the script element,
	// and the blob still gives the host back as it was.
	assert.Contains(t, html, `\u003cscript\u003ealert(1)\u003c/script\u003e`)
	assert.Equal(t, 2, strings.Count(html, "</script>"), "the blob's and the script's")
	assert.Equal(t, evil, blob(t, html).Host[0])
}

// external is any reference a browser would fetch from elsewhere.
var external = regexp.MustCompile(`(?i)(?:\b(?:src|href|action|poster|srcset)\s*=\s*["']?\s*(?:[a-z][a-z0-9+.-]*:|//))|@import|url\(\s*["']?\s*(?:[a-z][a-z0-9+.-]*:|//)`)

func TestPageReferencesNothingOutsideItself(t *testing.T) {
	assert.True(t, external.MatchString(`<img src="https://x">`), "the pattern itself")
	assert.True(t, external.MatchString(`a { background: url(//x/y) }`))
	assert.True(t, external.MatchString(`@import "a.css";`))
	assert.False(t, external.MatchString(`marker-end: url(#arrow-l1)`))

	for _, in := range []Input{
		{Dir: "d", Job: fourNodes(), LocationsFrom: "dumps"},
		{Dir: "d", JobError: "rank 1 has no dump", Findings: []verify.Finding{{Kind: "missing", Rank: -1, Channel: -1, Message: "m", Hint: "h"}}},
	} {
		html := render(t, in)
		assert.Empty(t, external.FindAllString(html, -1))
		assert.NotContains(t, html, "<link")
		assert.NotContains(t, html, "<img")
		assert.NotContains(t, html, "<iframe")
		assert.NotContains(t, html, "<script src")
	}
}

func TestOnlyThePagesScriptMayRun(t *testing.T) {
	html := render(t, Input{Dir: "d", Job: fourNodes(), LocationsFrom: "dumps"})
	_, rest, ok := strings.Cut(html, "<script>")
	require.True(t, ok)
	code, _, ok := strings.Cut(rest, "</script>")
	require.True(t, ok)
	sum := sha256.Sum256([]byte(code))
	assert.Contains(t, html, `content="default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-`+base64.StdEncoding.EncodeToString(sum[:])+`'"`)
	assert.NotContains(t, code, "innerHTML")
	assert.NotContains(t, code, "insertAdjacentHTML")
	assert.NotContains(t, code, "document.write")
}

func TestPageShowsScoreFindingsAndRanks(t *testing.T) {
	html := render(t, Input{Dir: "d", Job: fourNodes(), LocationsFrom: "dumps",
		Findings: []verify.Finding{{Kind: "next", Rank: 2, Channel: 0, Message: "rank 2: channel 0 next is 0", Hint: "this rank first"}}})
	// Level 1: 3 of the 4 edges cross (s0, s1, none: 3 groups); level 2:
	// all 4 (a, b, c, none: 4 groups). NIC indices: 0->1, 1->2 differ,
	// 2->3 and 3->0 unknown.
	assert.Contains(t, html, `<td class="n">0</td><td class="n">4</td><td class="n">3 / 3 (3)</td><td class="n">4 / 4 (4)</td><td class="n">2</td><td class="n">2</td>`)
	assert.Contains(t, html, `<tr class="finding" id="finding-0" data-rank="2" data-channel="0"><td class="n">2</td><td class="n">0</td><td>next</td><td>rank 2: channel 0 next is 0<br><span class="hint">check: this rank first</span></td></tr>`)
	assert.Contains(t, html, `<tr class="marked"><td class="n">2</td><td>h2</td><td>s1/c</td><td>2</td></tr>`)
	assert.Contains(t, html, `<details data-channel="0"><summary>channel 0: 4 ranks</summary>`)
	assert.Equal(t, [][]int{{0, 1, 2, 3}}, blob(t, html).Rings)
}

func TestPageWithoutRings(t *testing.T) {
	html := render(t, Input{Dir: "d", JobError: "rank 1 has no dump (of 4 ranks)", Unusable: 1,
		Findings: []verify.Finding{{Kind: "unusable", Rank: 1, Channel: -1, Message: "rank 1: cut", Hint: "copy it again"}}})
	assert.Contains(t, html, `<p id="summary" class="bad">No rings to show: rank 1 has no dump (of 4 ranks)</p>`)
	assert.Contains(t, html, "1 finding; 1 input unusable")
	assert.NotContains(t, html, "<script")
}

func TestRedaction(t *testing.T) {
	j := &score.Job{
		NRanks: 3, NNodes: 3, Node: []int{0, 1, 2},
		Host:     []string{"trn001.ec2.internal", "i-0123456789abcdef0", "trn003"},
		Location: []string{"nn-aaa/nn-bbb", "nn-aaa/nn-ccc", ""},
		Rings:    [][]int{{0, 1, 2}}, NetDev: []int{0, 0, 0},
	}
	in := Input{Dir: "/tmp/jobdir", Job: j, LocationsFrom: "/home/me/locations", Redact: true,
		Findings: []verify.Finding{{Kind: "failed", Rank: 1, Channel: -1,
			Message: `rank 1: "/tmp/jobdir/rank-000001.trn001_ec2_internal.77.json": WARN trn001 at nn-ccc, peer i-0fedcba9876543210.`,
			Hint:    "see trn003"}}}
	html := render(t, in)
	for _, secret := range []string{"trn00", "ec2.internal", "nn-aaa", "nn-bbb", "nn-ccc", "i-0123456789abcdef0", "i-0fedcba9876543210", "jobdir", "/home/me"} {
		assert.NotContains(t, html, secret)
	}
	d := blob(t, html)
	assert.Equal(t, []string{"host-1", "instance-1", "host-2"}, d.Host)
	assert.Equal(t, []string{"loc-1/loc-2", "loc-1/loc-3", ""}, d.Location)
	assert.Contains(t, html, `rank 1: &#34;DIR/rank-000001.host-1.77.json&#34;: WARN host-1 at loc-3, peer instance-2.`)
	assert.Contains(t, html, "check: see host-2")
	assert.Contains(t, html, "locations from a locations file")
	// The same input gives the same page; the job is not changed.
	assert.Equal(t, html, render(t, in))
	assert.Equal(t, "trn001.ec2.internal", j.Host[0])
}

// d25Rings is D25's example, one rank per node: 8 nodes under spine0,
// alternating leafA (even nodes) and leafB (odd); channel 0 in rank order
// (0 1 2 ... 7), channel 1 in network order (the leafA nodes, then the
// leafB ones: 0 2 4 6 1 3 5 7).
func d25Rings() *score.Job {
	j := &score.Job{NRanks: 8, NNodes: 8, Node: []int{0, 1, 2, 3, 4, 5, 6, 7},
		Rings:         [][]int{{0, 1, 2, 3, 4, 5, 6, 7}, {0, 2, 4, 6, 1, 3, 5, 7}},
		GraphChannels: 2, NetDev: slices.Repeat([]int{0}, 16)}
	for m := range 8 {
		j.Host = append(j.Host, "trn00"+string(rune('1'+m)))
		j.Location = append(j.Location, []string{"spine0/leafA", "spine0/leafB"}[m%2])
	}
	return j
}

// groupLevels is GroupLevels of j and its score.
func groupLevels(t *testing.T, j *score.Job) []GroupLevel {
	t.Helper()
	s, err := score.Compute(j)
	require.NoError(t, err)
	tiers, err := GroupLevels(j, s)
	require.NoError(t, err)
	return tiers
}

func TestGroupLevelsD25(t *testing.T) {
	j := d25Rings()
	tiers := groupLevels(t, j)
	// Level 1 is one group (spine0), so only level 2 is there: leafA
	// (node 0's group, so first) and leafB, 4 nodes each. Rank order
	// crosses at every edge, 4 each way; network order once each way,
	// the fewest (2 groups: 2 crossings).
	require.Len(t, tiers, 1)
	lv := tiers[0]
	assert.Equal(t, 2, lv.Level)
	assert.Equal(t, []string{"spine0/leafA", "spine0/leafB"}, lv.Names)
	assert.Equal(t, []int{4, 4}, lv.Nodes)
	// Rank order leaves each leaf 4 times: both pairs over.
	assert.Equal(t, [][]int{{0, 1, 4, 1, 1, 0, 4, 1}, {0, 1, 1, 0, 1, 0, 1, 0}}, lv.Pairs)
	assert.Equal(t, []int{8, 2}, lv.Crossings)
	assert.Equal(t, []int{2, 2}, lv.Minimum)

	// The page carries them.
	html := render(t, Input{Dir: "d", Job: j, LocationsFrom: "dumps"})
	assert.Contains(t, html, `<select id="level"><option value="0">2 (2 groups)</option></select>`)
	d := blob(t, html)
	require.Len(t, d.Tiers, 1)
	assert.Equal(t, lv.Pairs, d.Tiers[0].Pairs)
}

func TestGroupLevelsFourNodes(t *testing.T) {
	// fourNodes: level 1 has s0 (nodes 0, 1), s1 (node 2) and the node
	// without a location; level 2 has a, b, c and it. The ring 0 1 2 3
	// crosses 1->2, 2->3, 3->0 at level 1 and every edge at level 2.
	j := fourNodes()
	tiers := groupLevels(t, j)
	require.Len(t, tiers, 2)
	assert.Equal(t, []string{"s0", "s1", ""}, tiers[0].Names)
	assert.Equal(t, []int{2, 1, 1}, tiers[0].Nodes)
	assert.Equal(t, [][]int{{0, 1, 1, 0, 1, 2, 1, 0, 2, 0, 1, 0}}, tiers[0].Pairs)
	assert.Equal(t, []string{"s0/a", "s0/b", "s1/c", ""}, tiers[1].Names)
	assert.Equal(t, [][]int{{0, 1, 1, 0, 1, 2, 1, 0, 2, 3, 1, 0, 3, 0, 1, 0}}, tiers[1].Pairs)
	assert.Equal(t, []int{4}, tiers[1].Crossings)

	// The ring 0 2 1 3 leaves s0 twice at level 1 (0->2 into s1, 1->3 to
	// the node without a location) and s1, the unlocated group once
	// each: 4 crossings, 3 the fewest, s0's two pairs over.
	j.Rings = [][]int{{0, 2, 1, 3}}
	tiers = groupLevels(t, j)
	assert.Equal(t, [][]int{{0, 1, 1, 1, 0, 2, 1, 1, 1, 0, 1, 0, 2, 0, 1, 0}}, tiers[0].Pairs)
	assert.Equal(t, []int{4}, tiers[0].Crossings)
	assert.Equal(t, []int{3}, tiers[0].Minimum)
}

func TestGroupLevelsOneGroup(t *testing.T) {
	// Every node in s0/a: no level has 2 groups, so no group picture and
	// no tiers, and the page says so.
	j := fourNodes()
	j.Location = []string{"s0/a", "s0/a", "s0/a", "s0/a"}
	html := render(t, Input{Dir: "d", Job: j, LocationsFrom: "dumps"})
	assert.NotContains(t, html, `id="groups"`)
	assert.Contains(t, html, "no picture between groups")
	assert.Empty(t, blob(t, html).Tiers)
}

// A small job's picture is drawn up to 3 times larger; its text is sized
// in the picture's own units so that it still shows at 10 pixels, not 30,
// and the NIC indices do not crowd the nodes they label.
func TestPictureTextShowsAtTenPixels(t *testing.T) {
	html := render(t, Input{Dir: "d", Job: fourNodes(), LocationsFrom: "dumps"})
	d := blob(t, html)
	assert.Contains(t, html, fmt.Sprintf(`<svg id="picture" xmlns="http://www.w3.org/2000/svg" font-size="3.33" width="%d" height="%d" viewBox="0 0 %d %d"`,
		3*d.Width, 3*d.Height, d.Width, d.Height), "four nodes are drawn 3 times larger")
	assert.Contains(t, html, `<svg id="groups" xmlns="http://www.w3.org/2000/svg" font-size="10"`)
	for scale, want := range map[float64]string{1: "10.00", 1.5: "6.67", 2.5: "4.00", 3: "3.33"} {
		assert.Equal(t, want, (&Data{Scale: scale}).TextSize(), scale)
	}
	assert.True(t, d.NodeLabels, "four nodes drawn 3 times larger have room for their indices")

	// 400 one-rank nodes, each in a location of its own: boxes wrapping at
	// MaxWidth, drawn at their own size, without room for an index in a
	// node's square.
	n := 400
	j := &score.Job{NRanks: n, NNodes: n, GraphChannels: 1, Rings: [][]int{make([]int, n)}, NetDev: make([]int, n)}
	for r := range n {
		j.Node, j.Host, j.Location = append(j.Node, r), append(j.Host, fmt.Sprintf("h%d", r)), append(j.Location, fmt.Sprintf("s/a%d", r))
		j.Rings[0][r] = r
	}
	big, err := NewData(j, nil)
	require.NoError(t, err)
	assert.Equal(t, 1.0, big.Scale)
	assert.False(t, big.NodeLabels)
}
