package score

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nccomring/libnccomring/internal/quote"
)

// Change is one kind of difference between two jobs, in one line.
type Change struct {
	// Kind is one of "ranks", "nodes", "placement", "locations",
	// "channel count", "node sequence", "rings", "NIC indices", "rank
	// views".
	Kind string `json:"kind"`
	Text string `json:"text"`
	// Count is how many things of its kind differ: nodes, channels,
	// (NIC indices) channel-rank pairs or (rank views) ranks; 1 for a
	// count that changed.
	Count int `json:"count"`
	// Ranks are, for "rank views", the first MaxRankViews ranks whose
	// own dumps differ and what differs in each.
	Ranks []RankView `json:"ranks,omitempty"`
}

// maxSequenceShown is how many nodes of a sequence a change shows.
const maxSequenceShown = 16

// Diff lists what changed from a to b, one Change per kind, in the order
// of Change.Kind's list; none when they are the same job. Rings and NICs
// are compared only between jobs of one rank count, channel by channel
// over the channels both have, each ring from rank 0 (a ring is a cycle:
// where a dump's userRanks start does not matter); then, when both jobs
// were read from dumps, every rank's own dump (diffViews), so that a job
// one rank saw otherwise is not the same job. a and b pass Check
// (FromDumps checks what it returns). Cost: O(channels * ranks), and
// O(channels * ranks^2) for the views' userRanks.
func Diff(a, b *Job) []Change {
	var out []Change
	add := func(kind string, n int, format string, args ...any) {
		out = append(out, Change{Kind: kind, Count: n, Text: fmt.Sprintf(format, args...)})
	}
	if a.NRanks != b.NRanks {
		add("ranks", 1, "%d ranks -> %d", a.NRanks, b.NRanks)
	}
	if a.NNodes != b.NNodes {
		add("nodes", 1, "%d nodes -> %d", a.NNodes, b.NNodes)
	}
	diffPlacement(a, b, add)
	if a.GraphChannels != b.GraphChannels || len(a.Rings) != len(b.Rings) {
		add("channel count", 1, "%d graph channels (%d after doubling) -> %d (%d); the dumps do not say which rank's graph set it (D27: the smallest of any rank's)",
			a.GraphChannels, len(a.Rings), b.GraphChannels, len(b.Rings))
	}
	channels := min(len(a.Rings), len(b.Rings))
	var differ []int
	first := ""
	for c := range channels {
		sa, sb := a.sequence(c), b.sequence(c)
		if !slices.Equal(sa, sb) {
			if differ = append(differ, c); len(differ) == 1 {
				first = fmt.Sprintf("channel %d: %s -> %s", c, showSequence(sa), showSequence(sb))
			}
		}
	}
	if len(differ) > 0 {
		add("node sequence", len(differ), "%s; %d of %d channels visit the nodes in another order", first, len(differ), channels)
	}
	if a.NRanks != b.NRanks {
		return out // rings and NICs of different jobs do not compare rank by rank
	}
	n := a.NRanks
	nextA, nextB := make([]int, n), make([]int, n)
	differ, first = differ[:0], ""
	for c := range channels {
		a.next(c, nextA)
		b.next(c, nextB)
		for r := range n {
			if nextA[r] != nextB[r] {
				if differ = append(differ, c); len(differ) == 1 {
					first = fmt.Sprintf("channel %d: rank %d's next %d -> %d", c, r, nextA[r], nextB[r])
				}
				break
			}
		}
	}
	if len(differ) > 0 {
		add("rings", len(differ), "%s; %d of %d channels differ", first, len(differ), channels)
	}
	pairs, first := 0, ""
	for c := range channels {
		for r := range n {
			da, db := a.NetDev[c*n+r], b.NetDev[c*n+r]
			if da != db {
				if pairs++; pairs == 1 {
					first = fmt.Sprintf("channel %d: rank %d's NIC index %s -> %s", c, r, showDev(da), showDev(db))
				}
			}
		}
	}
	if pairs > 0 {
		add("NIC indices", pairs, "%s; %d of %d channel-rank pairs differ", first, pairs, channels*n)
	}
	if v := diffViews(a, b); v != nil {
		out = append(out, *v)
	}
	return out
}

// diffPlacement adds the changes of where ranks and hosts are: a rank on
// another node, a node on another host, a node at another location.
func diffPlacement(a, b *Job, add func(kind string, n int, format string, args ...any)) {
	moved, first := 0, ""
	for r := range min(a.NRanks, b.NRanks) {
		if a.Node[r] != b.Node[r] {
			if moved++; moved == 1 {
				first = fmt.Sprintf("rank %d on node %d -> %d", r, a.Node[r], b.Node[r])
			}
		}
	}
	nodes := min(a.NNodes, b.NNodes)
	hosts := 0
	for m := range nodes {
		if a.Host[m] != b.Host[m] {
			if hosts++; hosts == 1 && first == "" {
				first = fmt.Sprintf("node %d on host %s -> %s", m, quote.String(a.Host[m]), quote.String(b.Host[m]))
			}
		}
	}
	if moved+hosts > 0 {
		add("placement", moved+hosts, "%s; %d ranks on another node, %d of %d nodes on another host", first, moved, hosts, nodes)
	}
	located := 0
	for m := range nodes {
		if a.Location[m] != b.Location[m] {
			if located++; located == 1 {
				first = fmt.Sprintf("node %d at %s -> %s", m, showLocation(a.Location[m]), showLocation(b.Location[m]))
			}
		}
	}
	if located > 0 {
		add("locations", located, "%s; %d of %d nodes", first, located, nodes)
	}
}

// sequence is the nodes channel c's ring visits from rank 0's node.
func (j *Job) sequence(c int) []int {
	ring := j.Rings[c]
	at := slices.Index(ring, 0)
	var seq []int
	for i := range ring {
		m := j.Node[ring[(at+i)%len(ring)]]
		if len(seq) == 0 || seq[len(seq)-1] != m {
			seq = append(seq, m)
		}
	}
	if len(seq) > 1 && seq[0] == seq[len(seq)-1] {
		seq = seq[:len(seq)-1]
	}
	return seq
}

// next fills next[r] with rank r's next on channel c.
func (j *Job) next(c int, next []int) {
	ring := j.Rings[c]
	for i, r := range ring {
		next[r] = ring[(i+1)%len(ring)]
	}
}

func showSequence(seq []int) string {
	s := strings.Trim(fmt.Sprint(seq[:min(len(seq), maxSequenceShown)]), "[]")
	if len(seq) > maxSequenceShown {
		s += fmt.Sprintf(" ... (%d nodes)", len(seq))
	}
	return s
}

func showDev(d int) string {
	if d < 0 {
		return "none"
	}
	return fmt.Sprint(d)
}

func showLocation(l string) string {
	if l == "" {
		return "none"
	}
	return quote.String(l)
}

// Crossings is one job's crossings of one location level: its groups,
// the fewest a ring can cross them (Level.Minimum), and each channel's
// crossings (Level.Crossings, as Compute counts them).
type Crossings struct {
	Groups int `json:"groups"`
	Fewest int `json:"fewest"`
	// PerChannel[c] is channel c's crossings; Least and Most their range.
	PerChannel []int `json:"perChannel"`
	Least      int   `json:"least"`
	Most       int   `json:"most"`
}

// LevelChange is one location level's crossings in two jobs; A or B is
// nil when that job's locations have fewer levels.
type LevelChange struct {
	Level int        `json:"level"`
	A     *Crossings `json:"a"`
	B     *Crossings `json:"b"`
}

// ScoreChange is how the score changed from one job to another: the
// crossings of each location level and the NIC-index mismatches.
type ScoreChange struct {
	Levels []LevelChange `json:"levels"`
	// NICMismatches and InterNodeEdges are each job's, over every
	// channel: [a, b].
	NICMismatches  [2]int `json:"nicMismatches"`
	InterNodeEdges [2]int `json:"interNodeEdges"`
}

// CompareScores is the change from a's score to b's: no second count of
// crossings, only Compute's, side by side.
func CompareScores(a, b *Score) ScoreChange {
	ch := ScoreChange{Levels: []LevelChange{}}
	for l := range max(a.Depth, b.Depth) {
		ch.Levels = append(ch.Levels, LevelChange{Level: l + 1, A: crossingsAt(a, l), B: crossingsAt(b, l)})
	}
	for i, s := range []*Score{a, b} {
		ch.NICMismatches[i] = s.NICMismatches()
		for _, c := range s.Channels {
			ch.InterNodeEdges[i] += c.InterNodeEdges
		}
	}
	return ch
}

// crossingsAt is level l+1 of s, nil when s has fewer levels.
func crossingsAt(s *Score, l int) *Crossings {
	if l >= s.Depth || len(s.Channels) == 0 {
		return nil
	}
	first := s.Channels[0].Levels[l]
	x := &Crossings{Groups: first.Groups, Fewest: first.Minimum, Least: first.Crossings, Most: first.Crossings}
	for _, c := range s.Channels {
		n := c.Levels[l].Crossings
		x.PerChannel = append(x.PerChannel, n)
		x.Least, x.Most = min(x.Least, n), max(x.Most, n)
	}
	return x
}

// Text is ch in two lines: the crossings per ring of each level, a ->
// b, and the NIC-index mismatches.
func (ch ScoreChange) Text() []string {
	var b strings.Builder
	b.WriteString("crossings per ring: ")
	if len(ch.Levels) == 0 {
		b.WriteString("no node has a location in either job")
	}
	for i, l := range ch.Levels {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "level %d: %s -> %s", l.Level, l.A.PerRing(), l.B.PerRing())
		if f := l.Fewest(); f != "" {
			fmt.Fprintf(&b, " (fewest %s)", f)
		}
	}
	nic := fmt.Sprintf("NIC-index mismatches: %d of %d inter-node edges -> %d of %d",
		ch.NICMismatches[0], ch.InterNodeEdges[0], ch.NICMismatches[1], ch.InterNodeEdges[1])
	return []string{b.String(), nic}
}

// Fewest is the fewest crossings a ring can make of l in both jobs: "2"
// when alike, else "2 -> 3"; "" when either job lacks the level.
func (l LevelChange) Fewest() string {
	switch {
	case l.A == nil || l.B == nil:
		return ""
	case l.A.Fewest == l.B.Fewest:
		return fmt.Sprint(l.A.Fewest)
	}
	return fmt.Sprintf("%d -> %d", l.A.Fewest, l.B.Fewest)
}

// PerRing is a level's crossings per ring: one number when every channel
// crosses alike, else their range ("4-6"); "none" for a level the job
// lacks (x nil).
func (x *Crossings) PerRing() string {
	switch {
	case x == nil:
		return "none"
	case x.Least == x.Most:
		return fmt.Sprint(x.Least)
	}
	return fmt.Sprintf("%d-%d", x.Least, x.Most)
}
