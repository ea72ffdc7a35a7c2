// Package report writes one self-contained HTML page about a job's rings
// (nccom-rings report): the ring view (every node on a circle, grouped by
// location level by level, one channel's inter-node edges bundled along
// the location tree), the group view (per level, a matrix of the
// crossings between groups; GroupLevels: the counts come from Go), the
// node table, the full userRanks of every channel as text, the score
// (package score) and verify's findings, marked at their rank. It computes
// none of these: the tool hands it the job, its score and verify's
// findings, and the page only shows them. A page comparing two jobs
// (WriteCompare) shows both, and between them what score.CompareScores
// and score.Diff say of the two.
//
// The views are drawn by page.js with D3 (issue 37): D3 7.x's
// dist/d3.min.js from the pinned npm tarball (d3/d3.pin), which the
// set-up step verifies and writes into d3/ (mk/fetch-d3.py), embedded here
// and inlined in the page with its ISC licence. d3/ holds only the pin and
// a README in the repository, so that go build works without the set-up
// step: such a page says "built without D3" and still shows its tables.
//
// The page needs nothing outside itself (no network, fonts or images; its
// Content-Security-Policy forbids every fetch and runs only its two
// scripts, D3 and page.js, by their hashes) and stays small at 2,048
// nodes x 32 channels: the rings go in as one JSON blob (Data) that the
// page's script draws one channel at a time.
//
// Dumps come from a job and are not trusted: every string taken from them
// (host names, locations, WARN texts) goes through html/template, in the
// page's text or in the JSON blob, where encoding/json writes '<' as \u003c
// so that no string can close the script element; the script only ever
// sets textContent.
package report

import (
	"cmp"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/score"
	"github.com/nccomring/libnccomring/cmd/nccom-rings/verify"
	"github.com/nccomring/libnccomring/internal/quote"
)

// Input is what a page shows.
type Input struct {
	Dir string
	// Job and Score are the job the dumps describe and its score; nil
	// when the dumps could not be made into a job (a missing or failed
	// rank), and JobError says why: the page then shows the findings only.
	Job      *score.Job
	Score    *score.Score
	JobError string
	// LocationsFrom is "dumps" or the locations file given.
	LocationsFrom string
	// Findings are verify's, in its order (the page shows each one's
	// rank, channel, kind, message and hint); Omitted counts those past
	// its bound; Unusable the dump files it could not use.
	Findings []verify.Finding
	Omitted  int
	Unusable int
	// Redact replaces host names, instance ids and location names by
	// tokens (Redactor), for a page attached to a ticket.
	Redact bool
}

//go:embed page.html
var pageText string

//go:embed page.js
var script string

var page = template.Must(template.New("page").Parse(pageText))

// d3Dir is D3 as the set-up step left it: d3.pin and README always,
// d3.min.js and LICENSE after sh mk/setup.sh.
//
//go:embed d3
var d3Dir embed.FS

// d3Script is the D3 the page inlines, its licence notice first (ISC: the
// copyright and permission notice go with every copy), or "" when this
// build has none.
var d3Script = func() string {
	code, err1 := d3Dir.ReadFile("d3/d3.min.js")
	licence, err2 := d3Dir.ReadFile("d3/LICENSE")
	if err1 != nil || err2 != nil || len(code) == 0 {
		return ""
	}
	return "/* D3 (https://d3js.org), from the npm registry's d3 tarball named in\n" +
		" * cmd/nccom-rings/report/d3/d3.pin, under its licence:\n\n" +
		string(licence) + "*/\n" + string(code)
}()

// D3Version is the D3 the page embeds ("" none): the pin's version line,
// shown at the foot of the page.
var D3Version = d3Version()

func d3Version() string {
	if d3Script == "" {
		return ""
	}
	pin, _ := d3Dir.ReadFile("d3/d3.pin")
	for _, line := range strings.Split(string(pin), "\n") {
		if v, ok := strings.CutPrefix(line, "version "); ok {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

// hash is a script's Content-Security-Policy source: only the page's own
// scripts run, even if something else got in.
func hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// csp is the page's Content-Security-Policy: nothing fetched, inline
// styles, and the two scripts by their hashes (page.js alone without D3).
func csp(d3 string) string {
	src := hash(script)
	if d3 != "" {
		src = hash(d3) + " " + src
	}
	return `content="default-src 'none'; style-src 'unsafe-inline'; script-src ` + src + `"`
}

// Write writes in's page to w.
func Write(w io.Writer, in Input) error {
	if err := checkInput(in); err != nil {
		return err
	}
	if in.Redact {
		in = NewRedactor(in.Job).Input(in)
	}
	in = visibleInput(in)
	v, err := view(in)
	if err != nil {
		return err
	}
	return page.Execute(w, v)
}

// visibleInput is in with every character quote.Hidden names (C1
// controls, bidirectional overrides and isolates) written as its \u
// escape in the strings the page shows (quote.Visible): html/template
// and encoding/json pass them as they are, and in a cell or a label a
// U+202E would reverse the text after it (issue 34, F7). The nodes stay
// placed by the locations they had (as Redactor.Input keeps them). in is
// not changed.
func visibleInput(in Input) Input {
	if j := in.Job; j != nil {
		c := *j
		if c.RankLocation == nil {
			if rl, err := j.RankLocations(); err == nil {
				c.RankLocation = rl
			}
		}
		c.Host, c.Location, c.Names = visibleAll(j.Host), visibleAll(j.Location), visibleAll(j.Names)
		in.Job = &c
	}
	in.Dir, in.JobError, in.LocationsFrom = quote.Visible(in.Dir), quote.Visible(in.JobError), quote.Visible(in.LocationsFrom)
	in.Findings = findingsText(in.Findings, quote.Visible)
	return in
}

// findingsText is fs with each finding's Message and Hint passed through
// text: the two strings of a finding the page prints that carry what the
// dumps said (made visible by visibleInput, redacted by Redactor.Input).
// fs is not changed: the caller's report stays as verify made it.
func findingsText(fs []verify.Finding, text func(string) string) []verify.Finding {
	out := make([]verify.Finding, len(fs))
	for i, f := range fs {
		f.Message, f.Hint = text(f.Message), text(f.Hint)
		out[i] = f
	}
	return out
}

func visibleAll(s []string) []string {
	if s == nil {
		return nil
	}
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = quote.Visible(v)
	}
	return out
}

// pageView is what the template reads.
type pageView struct {
	Input
	CSP       template.HTMLAttr
	Script    template.JS
	D3        template.JS // "" without D3
	D3Version string
	Data      *Data
	Nodes     []nodeRow
	Levels    []int // 1..Depth, for the score table's columns
	Edges     int   // inter-node edges over every channel
	Located   int
	NICs      []nicRow
	Marked    int // findings about one rank
	Scored    bool
	ChannelsN int
	// Compare is set on a page that compares two jobs (WriteCompare),
	// which shows it instead of one job.
	Compare *compareView
	// Prefix starts every id of the job's views and of its blob: "" on a
	// one-job page, "a-" or "b-" on a comparison (page.js draws each).
	Prefix string
	// Scripts says the page runs D3 and page.js: it has rings to draw.
	Scripts bool
}

type nodeRow struct {
	Node     int
	Host     string
	Location string
	Ranks    string // "0-3"
	NICs     string // "0: 16, 1: 16": NIC index: channels with inter-node edges
	Marked   bool   // some rank of it has a finding
}

type nicRow struct {
	Nodes  string // "0-3 5"
	Shares string // "NIC index 0: 2 channels, ..."
}

func view(in Input) (*pageView, error) {
	// A script element ends at the first "</script": D3's code has none,
	// and one that did would cut the page (each page writer's, through
	// here).
	if strings.Contains(strings.ToLower(d3Script), "</script") {
		return nil, fmt.Errorf("report: the embedded D3 holds \"</script\": not inlined")
	}
	v := &pageView{Input: in, Script: template.JS(script), D3: template.JS(d3Script), D3Version: D3Version,
		CSP: template.HTMLAttr(csp(d3Script))}
	marked := map[int]bool{}
	for _, f := range in.Findings {
		if f.Rank >= 0 {
			v.Marked++
			marked[f.Rank] = true
		}
	}
	j := in.Job
	if j == nil {
		return v, nil
	}
	v.Scored, v.Scripts = true, true
	v.ChannelsN = len(j.Rings)
	d, err := NewData(j, in.Findings)
	if err != nil {
		return nil, err
	}
	v.Data = d
	if d.Tiers, err = GroupLevels(j, in.Score); err != nil {
		return nil, err
	}
	for l := 1; l <= in.Score.Depth; l++ {
		v.Levels = append(v.Levels, l)
	}
	for _, c := range in.Score.Channels {
		v.Edges += c.InterNodeEdges
	}
	members := make([][]int, j.NNodes)
	for r, m := range j.Node {
		members[m] = append(members[m], r)
	}
	for m := range j.NNodes {
		row := nodeRow{Node: m, Host: j.Host[m], Location: j.Location[m], Ranks: score.Spans(members[m])}
		if m < len(in.Score.NICs) {
			var shares []string
			for _, s := range in.Score.NICs[m] {
				shares = append(shares, fmt.Sprintf("%d: %d", s.Dev, s.Channels))
			}
			row.NICs = strings.Join(shares, ", ")
		}
		for _, r := range members[m] {
			row.Marked = row.Marked || marked[r]
		}
		v.Nodes = append(v.Nodes, row)
	}
	v.NICs = nicRows(in.Score.NICs)
	return v, nil
}

// nicRows is the channels each NIC index carries, one row per set of
// nodes alike (score.GroupNICShares).
func nicRows(nics [][]score.NICShare) []nicRow {
	var rows []nicRow
	for _, g := range score.GroupNICShares(nics) {
		rows = append(rows, nicRow{Nodes: score.Spans(g.Nodes), Shares: g.Shares})
	}
	return rows
}

// Data is the JSON blob the page's script draws from (the element
// <script type="application/json" id="data">): every view reads only it.
// page.js draws each blob whose id is PREFIX+"data" into the elements
// whose ids start with PREFIX (its head comment lists them), so the page
// of two jobs holds two blobs, "a-data" and "b-data", and two sets of
// views, drawn by the same code.
type Data struct {
	NRanks int `json:"nRanks"`
	// Node[r] is rank r's node; Host and Location are per node.
	Node     []int    `json:"node"`
	Host     []string `json:"host"`
	Location []string `json:"loc"`
	// Levels[l] is location level l+1 (1 the outermost), every level of
	// the job's locations, each node's group in it: the tree the ring view
	// groups the nodes by. Order is the nodes around the circle (Order).
	Levels []Level `json:"levels"`
	Order  []int   `json:"order"`
	// Rings[c] is channel c's ring (the job's, rank order from its first
	// rank); Edges[c] its inter-node edges, EdgeInts ints each: from node,
	// to node, from rank, to rank, the sender's NIC index, the receiver's
	// (-1 unknown), and the outermost location level whose group differs
	// at the two ends (0: none, the edge stays in one group).
	Rings [][]int `json:"rings"`
	Edges [][]int `json:"edges"`
	// Marks are the findings about one rank, three ints each: the rank,
	// the channel (-1 all) and the finding's index in the page's list.
	Marks []int `json:"marks"`
	// Tiers are the rings between groups, one per location level with 2
	// or more groups, outermost first (GroupLevels); set by the page from
	// the score, nil in a bare NewData.
	Tiers []GroupLevel `json:"tiers"`
}

// Level is one location level's groups: Names[g] is group g's location
// prefix ("" for the nodes without a location), numbered in the order of
// the groups' lowest nodes; Group[m] is node m's group.
type Level struct {
	Names []string `json:"names"`
	Group []int    `json:"group"`
}

// GroupLevel is every channel's ring at one location level, group by
// group: what the page's group picture draws. The counts come from Go so
// that the script only draws; they add up to the score's crossings, which
// GroupLevels checks.
type GroupLevel struct {
	Level int `json:"level"` // 1 is the outermost name
	// Names[g] is group g's location prefix ("" for the nodes without a
	// location); Nodes[g] how many nodes it holds.
	Names []string `json:"names"`
	Nodes []int    `json:"nodes"`
	// Pairs[c] is channel c's inter-node edges between groups, PairInts
	// ints per ordered pair of groups the ring crosses between: from
	// group, to group, edges, and 1 when the from group is left more than
	// once (else 0); sorted by from, then to. A ring with the fewest
	// crossings leaves each group once, so the level's excess is the sum
	// over groups of their leavings less one: the pairs marked 1 are where
	// it lies.
	Pairs [][]int `json:"pairs"`
	// Crossings[c] and Minimum[c] are the score's for channel c at Level.
	Crossings []int `json:"crossings"`
	Minimum   []int `json:"minimum"`
}

// EdgeInts is the ints of one edge in Data.Edges.
const EdgeInts = 7

// NewData is j's blob: its location tree (Levels, Order), rings,
// inter-node edges and the marks of findings.
func NewData(j *score.Job, findings []verify.Finding) (*Data, error) {
	arr, err := j.Arrange() // the library's groups (D28)
	if err != nil {
		return nil, err
	}
	groups := arr.Groups
	d := &Data{NRanks: j.NRanks, Node: j.Node, Host: j.Host, Location: j.Location, Rings: j.Rings, Marks: []int{}, Levels: []Level{}}
	for l := range groups.Depth {
		names, _, index := levelGroups(j, groups.Group[l], l+1)
		d.Levels = append(d.Levels, Level{Names: names, Group: index})
	}
	d.Order = Order(j.NNodes, d.Levels, j.Node, firstRing(j))
	for c, ring := range j.Rings {
		edges := []int{}
		n := len(ring)
		for i, r := range ring {
			next := ring[(i+1)%n]
			a, b := j.Node[r], j.Node[next]
			if a == b {
				continue
			}
			level := 0
			for l := range groups.Depth {
				if groups.Group[l][a] != groups.Group[l][b] {
					level = l + 1
					break
				}
			}
			edges = append(edges, a, b, r, next, j.NetDev[c*j.NRanks+r], j.NetDev[c*j.NRanks+next], level)
		}
		d.Edges = append(d.Edges, edges)
	}
	for i, f := range findings {
		if f.Rank >= 0 && f.Rank < j.NRanks {
			d.Marks = append(d.Marks, f.Rank, f.Channel, i)
		}
	}
	return d, nil
}

func firstRing(j *score.Job) []int {
	if len(j.Rings) == 0 {
		return nil
	}
	return j.Rings[0]
}

// Order is the nodes as the ring view places them around its circle:
// grouped level by level (levels[l].Group), and within each group in the
// order ring (the job's first channel) visits them; groups in the order
// the ring first enters them. A ring with the fewest crossings then goes
// round the circle from neighbour to neighbour, and an extra crossing is a
// chord across it. Nodes the ring does not visit (none in a job that
// passes Check) go last, by index. node[r] is rank r's node.
func Order(nNodes int, levels []Level, node, ring []int) []int {
	const unvisited = int(^uint(0) >> 1)
	pos := make([]int, nNodes) // where the ring first visits each node
	for m := range pos {
		pos[m] = unvisited
	}
	for i, r := range ring {
		pos[node[r]] = min(pos[node[r]], i)
	}
	// first[l][g]: the ring's first visit to group g of level l.
	first := make([][]int, len(levels))
	for l, lv := range levels {
		first[l] = make([]int, len(lv.Names))
		for g := range first[l] {
			first[l][g] = unvisited
		}
		for m, g := range lv.Group {
			first[l][g] = min(first[l][g], pos[m])
		}
	}
	order := make([]int, nNodes)
	for m := range order {
		order[m] = m
	}
	slices.SortStableFunc(order, func(a, b int) int {
		for l, lv := range levels {
			ga, gb := lv.Group[a], lv.Group[b]
			if ga != gb {
				// Two groups the ring never enters: by their number.
				return cmp.Or(cmp.Compare(first[l][ga], first[l][gb]), cmp.Compare(ga, gb))
			}
		}
		return cmp.Compare(pos[a], pos[b])
	})
	return order
}

// levelGroups is one level's groups (group: nodeorder.Groups.Group at it,
// -1 no location): their names (the level's prefix of the first node's
// location, "" for the nodes without one), how many nodes each holds,
// and each node's group, numbered in the order of the groups' lowest
// nodes.
func levelGroups(j *score.Job, group []int32, level int) (names []string, nodes, index []int) {
	index = make([]int, j.NNodes)
	at := map[int32]int{}
	for m := range j.NNodes {
		g, ok := at[group[m]]
		if !ok {
			g = len(names)
			at[group[m]] = g
			name := ""
			if group[m] >= 0 {
				name = prefix(j.Location[m], level)
			}
			names = append(names, name)
			nodes = append(nodes, 0)
		}
		index[m] = g
		nodes[g]++
	}
	return names, nodes, index
}

// PairInts is the ints of one pair in GroupLevel.Pairs.
const PairInts = 4

// GroupLevels is j's rings at each location level with 2 or more groups,
// outermost first, with s's crossings (s is j's score). A group is the
// nodes whose locations share the level's prefix (nodeorder.Groups), the
// nodes without a location one more group, as the score counts them.
// Cost: O(Depth * (NNodes + len(Rings) * NRanks)), the pairs kept in a map
// because a level may have thousands of groups but a ring crosses few of
// the pairs.
func GroupLevels(j *score.Job, s *score.Score) ([]GroupLevel, error) {
	arr, err := j.Arrange() // the library's groups (D28)
	if err != nil {
		return nil, err
	}
	groups := arr.Groups
	if s.Depth != groups.Depth || len(s.Channels) != len(j.Rings) {
		return nil, fmt.Errorf("report: the score is not the job's")
	}
	tiers := []GroupLevel{}
	for l := range groups.Depth {
		gl := GroupLevel{Level: l + 1}
		var index []int // node m's group in this level's Names
		gl.Names, gl.Nodes, index = levelGroups(j, groups.Group[l], l+1)
		if len(gl.Names) < 2 {
			continue
		}
		n := len(gl.Names)
		for c, ring := range j.Rings {
			count := map[int]int{}
			leaves := map[int]int{} // per from group
			total := 0
			for i, r := range ring {
				a, b := index[j.Node[r]], index[j.Node[ring[(i+1)%len(ring)]]]
				if a != b {
					count[a*n+b]++
					leaves[a]++
					total++
				}
			}
			lv := s.Channels[c].Levels[l]
			if total != lv.Crossings {
				return nil, fmt.Errorf("report: channel %d level %d: %d edges between groups, the score says %d", c, l+1, total, lv.Crossings)
			}
			keys := make([]int, 0, len(count))
			for k := range count {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			pairs := make([]int, 0, PairInts*len(keys))
			for _, k := range keys {
				over := 0
				if leaves[k/n] > 1 {
					over = 1
				}
				pairs = append(pairs, k/n, k%n, count[k], over)
			}
			gl.Pairs = append(gl.Pairs, pairs)
			gl.Crossings = append(gl.Crossings, lv.Crossings)
			gl.Minimum = append(gl.Minimum, lv.Minimum)
		}
		tiers = append(tiers, gl)
	}
	return tiers, nil
}

// prefix is location's first levels names ("s0/a/b", 2: "s0/a"); the
// whole location when it has fewer.
func prefix(location string, levels int) string {
	names := strings.SplitN(location, "/", levels+1)
	return strings.Join(names[:min(levels, len(names))], "/")
}
