package report

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"os/exec"
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

// scoreInput sets in's Score to its job's when the test gave none.
func scoreInput(t *testing.T, in *Input) {
	t.Helper()
	if in.Job != nil && in.Score == nil {
		s, err := score.Compute(in.Job)
		require.NoError(t, err)
		in.Score = s
	}
}

func render(t *testing.T, in Input) string {
	t.Helper()
	scoreInput(t, &in)
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

// D28: the ring view's groups are the library's placement. Two leaf
// names whose FNV-1a hashes collide (0xf738b38c both) are one leaf to it,
// so one group, named by the first; a third leaf is a group of its own.
// The names a page shows per node stay each host's own.
func TestGroupsAreTheLibrarysPlacement(t *testing.T) {
	j := &score.Job{NRanks: 3, NNodes: 3, Node: []int{0, 1, 2}, Host: []string{"x", "y", "z"},
		Location: []string{"s/leaf13298", "s/leaf302080", "s/other"},
		Rings:    [][]int{{0, 1, 2}}, NetDev: []int{0, 0, 0}}
	d, err := NewData(j, nil)
	require.NoError(t, err)
	assert.Equal(t, []Level{{Names: []string{"s"}, Group: []int{0, 0, 0}}, {Names: []string{"s/leaf13298", "s/other"}, Group: []int{0, 0, 1}}}, d.Levels)
	assert.Equal(t, j.Location, d.Location)
	assert.Equal(t, []int{0, 1, 2}, d.Order)
}

// The ring view's order, by hand: fourNodes' locations (s0/a, s0/b, s1/c,
// none) and a ring that visits the nodes 2 0 3 1. Level 1's groups are
// entered s1 (at 0), s0 (at 1), none (at 2); within s0, a (node 0, at 1)
// before b (node 1, at 3). So: 2, then 0 and 1, then 3.
func TestOrderByHand(t *testing.T) {
	j := fourNodes()
	j.Rings = [][]int{{2, 0, 3, 1}}
	d, err := NewData(j, nil)
	require.NoError(t, err)
	assert.Equal(t, []Level{
		{Names: []string{"s0", "s1", ""}, Group: []int{0, 0, 1, 2}},
		{Names: []string{"s0/a", "s0/b", "s1/c", ""}, Group: []int{0, 1, 2, 3}},
	}, d.Levels)
	assert.Equal(t, []int{2, 0, 1, 3}, d.Order)

	// Two ranks a node, one level of two groups (even nodes in g0, odd in
	// g1), the ring visiting nodes 3 3 0 0 2 2 1 1: g1 is entered first
	// (node 3 at 0), then g0 (node 0 at 2); within g1 node 3 then node 1,
	// within g0 node 0 then node 2.
	levels := []Level{{Names: []string{"g0", "g1"}, Group: []int{0, 1, 0, 1}}}
	node := []int{0, 0, 1, 1, 2, 2, 3, 3}
	assert.Equal(t, []int{3, 1, 0, 2}, Order(4, levels, node, []int{6, 7, 0, 1, 4, 5, 2, 3}))
	// No ring: the groups and nodes by number.
	assert.Equal(t, []int{0, 2, 1, 3}, Order(4, levels, node, nil))
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
	assert.Equal(t, 1+len(scripts(t, html)), strings.Count(html, "</script>"), "the blob's and the scripts'")
	assert.Len(t, scripts(t, html), map[bool]int{true: 1, false: 2}[d3Script == ""])
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

// scripts is the code of each of html's script elements that runs (not
// the JSON blob).
func scripts(t *testing.T, html string) []string {
	t.Helper()
	var out []string
	for rest := html; ; {
		_, after, ok := strings.Cut(rest, "<script>")
		if !ok {
			return out
		}
		code, tail, ok := strings.Cut(after, "</script>")
		require.True(t, ok)
		out = append(out, code)
		rest = tail
	}
}

func TestOnlyThePagesScriptsMayRun(t *testing.T) {
	html := render(t, Input{Dir: "d", Job: fourNodes(), LocationsFrom: "dumps"})
	code := scripts(t, html)
	want := []string{script}
	if d3Script != "" {
		want = []string{d3Script, script}
	}
	require.Equal(t, want, code, "D3 (when this build has it), then page.js, as they are")
	var hashes []string
	for _, c := range code {
		sum := sha256.Sum256([]byte(c))
		hashes = append(hashes, "'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'")
	}
	assert.Contains(t, html, `content="default-src 'none'; style-src 'unsafe-inline'; script-src `+strings.Join(hashes, " ")+`"`)
	assert.NotContains(t, script, "innerHTML")
	assert.NotContains(t, script, "insertAdjacentHTML")
	assert.NotContains(t, script, "document.write")
	assert.NotContains(t, script, ".html(", "D3's selection.html parses markup")
}

// A build without the set-up step has no D3: its page runs page.js alone,
// says so where the rings would be, and still holds the tables.
func TestPageWithoutD3(t *testing.T) {
	saved := d3Script
	d3Script = ""
	defer func() { d3Script = saved }()
	html := render(t, Input{Dir: "d", Job: fourNodes(), LocationsFrom: "dumps"})
	assert.Equal(t, []string{script}, scripts(t, html))
	assert.Contains(t, html, `<p id="nod3" class="nod3 bad">This page was built without D3: run <code>sh mk/setup.sh</code>`)
	assert.Contains(t, html, `<tr id="node-2" data-node="2"><td class="n">2</td><td>h2</td><td>s1/c</td><td>2</td><td>2: 1</td></tr>`)
	assert.Contains(t, html, "Built without D3.")
	sum := sha256.Sum256([]byte(script))
	assert.Contains(t, html, `script-src 'sha256-`+base64.StdEncoding.EncodeToString(sum[:])+`'"`)
}

// With D3 (after sh mk/setup.sh), its licence notice opens the script
// that holds it, and the foot of the page names the version.
func TestPageWithD3CarriesItsLicence(t *testing.T) {
	if d3Script == "" {
		t.Skip("built without D3 (sh mk/setup.sh fetches it): nothing to check here")
	}
	html := render(t, Input{Dir: "d", Job: fourNodes(), LocationsFrom: "dumps"})
	code := scripts(t, html)[0]
	assert.True(t, strings.HasPrefix(code, "/* D3 (https://d3js.org)"))
	assert.Contains(t, code[:1000], "Copyright 2010-2023 Mike Bostock")
	assert.Contains(t, code[:1000], "Permission to use, copy, modify, and/or distribute this software")
	assert.Contains(t, html, "Drawn with D3 7.9.0 (https://d3js.org), ISC licence")
	assert.NotContains(t, html, `id="nod3"`)
}

// The repository holds no copy of D3 (issue 37): no tracked file carries
// its banner or its bundle's opening. Outside a git checkout (a release
// tarball) there is nothing to ask.
func TestNoCopyOfD3IsTracked(t *testing.T) {
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not in a git checkout (%v): nothing tracked to check", err)
	}
	out, err := exec.Command("git", "-C", strings.TrimSpace(string(top)), "grep", "-l", "-I", "-F",
		"-e", "https://d3js.org v"+"7", "-e", `"object"==typeof exports&&"undefined"!=typeof module?n(exports)`+`:"function"==typeof define`).Output()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 {
		return // git grep: no match
	}
	require.NoError(t, err)
	t.Errorf("tracked files hold D3's code (it comes from the set-up step, never the repository):\n%s", out)
}

func TestPageShowsScoreFindingsAndRanks(t *testing.T) {
	html := render(t, Input{Dir: "d", Job: fourNodes(), LocationsFrom: "dumps",
		Findings: []verify.Finding{{Kind: "next", Rank: 2, Channel: 0, Message: "rank 2: channel 0 next is 0", Hint: "this rank first"}}})
	// Level 1: 3 of the 4 edges cross (s0, s1, none: 3 groups); level 2:
	// all 4 (a, b, c, none: 4 groups). NIC indices: 0->1, 1->2 differ,
	// 2->3 and 3->0 unknown.
	assert.Contains(t, html, `<td class="n">0</td><td class="n">4</td><td class="n">3 / 3 (3)</td><td class="n">4 / 4 (4)</td><td class="n">2</td><td class="n">2</td>`)
	assert.Contains(t, html, `<tr class="finding" id="finding-0" data-rank="2" data-channel="0"><td class="n">2</td><td class="n">0</td><td>next</td><td>rank 2: channel 0 next is 0<br><span class="hint">check: this rank first</span></td></tr>`)
	assert.Contains(t, html, `<tr id="node-2" data-node="2" class="marked"><td class="n">2</td><td>h2</td><td>s1/c</td><td>2</td><td>2: 1</td></tr>`)
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
	assert.Contains(t, html, "no crossings between groups")
	assert.Empty(t, blob(t, html).Tiers)
}
