// Package report writes one self-contained HTML page about a job's rings
// (nccom-rings report): a picture of the rings at node level, one channel
// at a time, nodes grouped by location, and above it one between the
// location groups of a level (GroupLevels: the counts come from Go); the full userRanks of every
// channel as text; the score (package score); and verify's findings,
// marked at their rank. It computes none of these: the tool hands it the
// job, its score and verify's findings, and the page only shows them. A
// page comparing two jobs (WriteCompare) shows both, and between them
// what score.CompareScores and score.Diff say of the two.
//
// The page needs nothing outside itself (no network, fonts or images; its
// Content-Security-Policy forbids every fetch) and stays small at 2,048
// nodes x 32 channels: the rings go in as one JSON blob that the page's
// script draws one channel at a time, not as one SVG element per rank per
// channel up front.
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
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/score"
	"github.com/nccomring/libnccomring/cmd/nccom-rings/verify"
	"github.com/nccomring/libnccomring/internal/quote"
	"github.com/nccomring/libnccomring/nodeorder"
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

// scriptHash is the page's Content-Security-Policy source for its one
// script: only that script runs, even if something else got in.
var scriptHash = func() string {
	sum := sha256.Sum256([]byte(script))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}()

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
}

type nodeRow struct {
	Node     int
	Host     string
	Location string
	Ranks    string // "0-3"
	Marked   bool   // some rank of it has a finding
}

type nicRow struct {
	Nodes  string // "0-3 5"
	Shares string // "NIC index 0: 2 channels, ..."
}

func view(in Input) (*pageView, error) {
	v := &pageView{Input: in, Script: template.JS(script),
		CSP: template.HTMLAttr(`content="default-src 'none'; style-src 'unsafe-inline'; script-src ` + scriptHash + `"`)}
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
	v.Scored = true
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

// Data is the JSON blob the page's script draws from.
type Data struct {
	NRanks int `json:"nRanks"`
	// Node[r] is rank r's node; Host, Location, X and Y are per node (X,
	// Y: its centre in the picture).
	Node     []int    `json:"node"`
	Host     []string `json:"host"`
	Location []string `json:"loc"`
	X        []int    `json:"x"`
	Y        []int    `json:"y"`
	Groups   []Box    `json:"groups"`
	Width    int      `json:"w"`
	Height   int      `json:"h"`
	// NodeLabels says the picture is drawn large enough to write each
	// node's index inside its square: a 10-unit square shown at Scale*10
	// pixels holds 4 digits of 10-pixel text (about 24 pixels) from Scale
	// 2.5 on.
	NodeLabels bool `json:"nodeLabels"`
	// Scale is how much larger than Width the picture is shown: a few
	// nodes are drawn up to 3 times larger, up to MaxWidth.
	Scale float64 `json:"-"`
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

// Box is one group of nodes in the picture: the nodes with one location
// (Name; "" none), a box at X, Y of W x H pixels.
type Box struct {
	Name string `json:"name"`
	X    int    `json:"x"`
	Y    int    `json:"y"`
	W    int    `json:"w"`
	H    int    `json:"h"`
}

// The picture's geometry, in pixels.
const (
	Cell     = 16   // one node
	Pad      = 6    // inside a group's box
	Label    = 14   // a group's name, above its nodes
	Gap      = 12   // between boxes
	MaxWidth = 1200 // boxes wrap to a new row past it
	MaxLabel = 240  // the widest a box grows for its name
)

// NewData is j's blob: its layout (Layout), rings, inter-node edges and
// the marks of findings.
func NewData(j *score.Job, findings []verify.Finding) (*Data, error) {
	arr, err := j.Arrange() // the library's groups (D28)
	if err != nil {
		return nil, err
	}
	groups := arr.Groups
	d := &Data{NRanks: j.NRanks, Node: j.Node, Host: j.Host, Location: j.Location, Rings: j.Rings, Marks: []int{}}
	// A box per location as the library places nodes: two names it takes
	// for one (hashes that collide) share the first one's box.
	first := map[nodeorder.Location]string{}
	boxOf := make([]string, j.NNodes)
	for m, l := range arr.Node {
		if _, ok := first[l]; !ok {
			first[l] = j.Location[m]
		}
		boxOf[m] = first[l]
	}
	d.X, d.Y, d.Groups, d.Width, d.Height = Layout(boxOf)
	d.Scale = min(3, max(1, float64(MaxWidth)/float64(d.Width)))
	d.NodeLabels = d.Scale >= 2.5
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
		group := groups.Group[l]
		// index[m] is node m's group in this level's Names, numbered in
		// the order of the groups' lowest nodes.
		index := make([]int, j.NNodes)
		at := map[int32]int{}
		gl := GroupLevel{Level: l + 1}
		for m := range j.NNodes {
			g, ok := at[group[m]]
			if !ok {
				g = len(gl.Names)
				at[group[m]] = g
				name := ""
				if group[m] >= 0 {
					name = prefix(j.Location[m], l+1)
				}
				gl.Names = append(gl.Names, name)
				gl.Nodes = append(gl.Nodes, 0)
			}
			index[m] = g
			gl.Nodes[g]++
		}
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

// Layout places every node (locations[m]: node m's location, "" none): one
// box per distinct location, sorted by name (naturalCompare: leaf2 before
// leaf10) so that siblings sit side by
// side, the nodes without one last; in each box its nodes in index order
// on a near-square grid of Cell pixels; the boxes left to right, wrapping
// before MaxWidth. It returns each node's centre, the boxes and the size
// of the whole picture.
func Layout(locations []string) (x, y []int, boxes []Box, width, height int) {
	members := map[string][]int{}
	for m, l := range locations {
		members[l] = append(members[l], m)
	}
	names := make([]string, 0, len(members))
	for l := range members {
		names = append(names, l)
	}
	slices.SortFunc(names, func(a, b string) int {
		if (a == "") != (b == "") {
			if a == "" {
				return 1
			}
			return -1
		}
		return naturalCompare(a, b)
	})
	x, y = make([]int, len(locations)), make([]int, len(locations))
	cx, cy, rowHeight := Gap, Gap, 0
	for _, name := range names {
		nodes := members[name]
		cols := int(math.Ceil(math.Sqrt(float64(len(nodes)))))
		rows := (len(nodes) + cols - 1) / cols
		// Wide enough for its name (about 6 pixels a character), up to
		// MaxLabel.
		w := max(cols*Cell+2*Pad, min(6*len(name)+8, MaxLabel))
		b := Box{Name: name, W: w, H: Label + rows*Cell + 2*Pad}
		if cx > Gap && cx+b.W > MaxWidth {
			cx, cy, rowHeight = Gap, cy+rowHeight+Gap, 0
		}
		b.X, b.Y = cx, cy
		for i, m := range nodes {
			x[m] = b.X + Pad + (i%cols)*Cell + Cell/2
			y[m] = b.Y + Label + Pad + (i/cols)*Cell + Cell/2
		}
		boxes = append(boxes, b)
		cx += b.W + Gap
		rowHeight = max(rowHeight, b.H)
		width = max(width, cx)
	}
	return x, y, boxes, width, cy + rowHeight + Gap
}

// ShownWidth and ShownHeight are the picture's size on the page.
func (d *Data) ShownWidth() int  { return int(float64(d.Width) * d.Scale) }
func (d *Data) ShownHeight() int { return int(float64(d.Height) * d.Scale) }

// TextSize is the picture's font size in its own units, so that its text
// shows at 10 pixels whatever Scale enlarges: a small job's NIC indices and
// box names then stay small beside the nodes they label.
func (d *Data) TextSize() string { return strconv.FormatFloat(10/d.Scale, 'f', 2, 64) }

// naturalCompare orders names as a person reads them: runs of digits by
// their value (leaf2 before leaf10), the rest byte by byte; names that
// compare equal so (leaf01, leaf1) by their bytes.
func naturalCompare(a, b string) int {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if isDigit(a[i]) && isDigit(b[j]) {
			ei, ej := digits(a, i), digits(b, j)
			x, y := strings.TrimLeft(a[i:ei], "0"), strings.TrimLeft(b[j:ej], "0")
			if c := cmp.Compare(len(x), len(y)); c != 0 {
				return c
			}
			if c := cmp.Compare(x, y); c != 0 {
				return c
			}
			i, j = ei, ej
			continue
		}
		if c := cmp.Compare(a[i], b[j]); c != 0 {
			return c
		}
		i, j = i+1, j+1
	}
	if c := cmp.Compare(len(a)-i, len(b)-j); c != 0 {
		return c
	}
	return cmp.Compare(a, b)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// digits is the end of the run of digits at s[i].
func digits(s string, i int) int {
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}
