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
	// "channel count", "node sequence", "rings", "NIC indices".
	Kind string `json:"kind"`
	Text string `json:"text"`
	// Count is how many things of its kind differ: nodes, channels or
	// (NIC indices) channel-rank pairs; 1 for a count that changed.
	Count int `json:"count"`
}

// maxSequenceShown is how many nodes of a sequence a change shows.
const maxSequenceShown = 16

// Diff lists what changed from a to b, one Change per kind, in the order
// of Change.Kind's list; none when they are the same job. Rings and NICs
// are compared only between jobs of one rank count, channel by channel
// over the channels both have, each ring from rank 0 (a ring is a cycle:
// where a dump's userRanks start does not matter). a and b pass Check
// (FromDumps checks what it returns). Cost: O(channels * ranks).
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
