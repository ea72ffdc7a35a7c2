package score

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nccomring/libnccomring/internal/quote"
	"github.com/nccomring/libnccomring/ringdump"
)

// RankView is what differs in one rank's own dump from one job to
// another: one item per field, its first difference ("channel 0's next 6
// -> 7").
type RankView struct {
	Rank int      `json:"rank"`
	What []string `json:"what"`
}

// MaxRankViews bounds the ranks a "rank views" Change lists; its Count is
// whole.
const MaxRankViews = 20

// maxRanksNamed bounds the spans of ranks a "rank views" Change's text
// names.
const maxRanksNamed = 8

// diffViews compares every rank's own dump in a and b (their Views, of
// one rank count): a job is the same only when every rank saw it alike,
// not only the lowest rank, whose rings the job keeps. The process id
// and the library version are not compared: two runs of one job differ
// in them by nature; nor the host, which Diff's placement compares node
// by node (a job planned again on other hosts differs there once, not
// once per rank). Cost: O(ranks * channels * ranks) for the
// userRanks, as reading the dumps was.
func diffViews(a, b *Job) *Change {
	if a.Views == nil || b.Views == nil || len(a.Views) != len(b.Views) {
		return nil
	}
	var differ []int
	var shown []RankView
	for r := range a.Views {
		what := ViewDifference(a.Views[r], b.Views[r])
		if len(what) == 0 {
			continue
		}
		differ = append(differ, r)
		if len(shown) < MaxRankViews {
			shown = append(shown, RankView{Rank: r, What: what})
		}
	}
	if len(differ) == 0 {
		return nil
	}
	first := shown[0]
	return &Change{Kind: "rank views", Count: len(differ), Ranks: shown,
		Text: fmt.Sprintf("rank %d's dump: %s; %d of %d ranks' own dumps differ (%s %s)",
			first.Rank, strings.Join(first.What, ", "), len(differ), len(a.Views), plural(len(differ), "rank", "ranks"), someSpans(differ))}
}

// someSpans is Spans(v) cut after maxRanksNamed spans.
func someSpans(v []int) string {
	parts := strings.Split(Spans(v), " ")
	if len(parts) <= maxRanksNamed {
		return strings.Join(parts, " ")
	}
	return strings.Join(parts[:maxRanksNamed], " ") + " ..."
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// ViewDifference lists what differs between two dumps of one rank, one
// item per field, in the dump's order; none when the rank saw both jobs
// alike. Both are successful dumps (FromDumps refuses others).
func ViewDifference(a, b *ringdump.Dump) []string {
	var what []string
	add := func(format string, args ...any) { what = append(what, fmt.Sprintf(format, args...)) }
	wa, wb := a.Wiring, b.Wiring
	if wa.NNodes != wb.NNodes {
		add("nNodes %d -> %d", wa.NNodes, wb.NNodes)
	}
	if wa.Node != wb.Node {
		add("node %d -> %d", wa.Node, wb.Node)
	}
	if i, ok := firstDifference(wa.NodesFirstRank, wb.NodesFirstRank); ok {
		add("nodesFirstRank%s", showAt(wa.NodesFirstRank, wb.NodesFirstRank, i))
	}
	if wa.GraphChannels != wb.GraphChannels {
		add("graphChannels %d -> %d", wa.GraphChannels, wb.GraphChannels)
	}
	if wa.NChannels != wb.NChannels || len(wa.Channels) != len(wb.Channels) {
		add("channels %d -> %d", len(wa.Channels), len(wb.Channels))
	}
	// Each field of the channels once, at the first channel it differs on.
	var prev, next, users string
	for c := range min(len(wa.Channels), len(wb.Channels)) {
		ca, cb := wa.Channels[c], wb.Channels[c]
		if prev == "" && ca.Prev != cb.Prev {
			prev = fmt.Sprintf("channel %d's prev %d -> %d", c, ca.Prev, cb.Prev)
		}
		if next == "" && ca.Next != cb.Next {
			next = fmt.Sprintf("channel %d's next %d -> %d", c, ca.Next, cb.Next)
		}
		if i, ok := firstDifference(ca.UserRanks, cb.UserRanks); users == "" && ok {
			users = fmt.Sprintf("channel %d's userRanks%s", c, showAt(ca.UserRanks, cb.UserRanks, i))
		}
	}
	for _, s := range []string{prev, next, users} {
		if s != "" {
			what = append(what, s)
		}
	}
	if s := orderDifference(wa.Order, wb.Order); s != "" {
		what = append(what, s)
	}
	if s := netDevDifference(a.NetDevs, b.NetDevs); s != "" {
		what = append(what, s)
	}
	return what
}

// firstDifference is the first index at which a and b differ, their
// shorter length when one is the other's prefix; ok is false when they
// are equal.
func firstDifference(a, b []int) (int, bool) {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i, true
		}
	}
	return min(len(a), len(b)), len(a) != len(b)
}

// showAt is "[i] x -> y" for the first difference of a and b at i, or
// their lengths when one ends there.
func showAt(a, b []int, i int) string {
	if i < len(a) && i < len(b) {
		return fmt.Sprintf("[%d] %d -> %d", i, a[i], b[i])
	}
	return fmt.Sprintf(": %d entries -> %d", len(a), len(b))
}

// orderDifference is the first field of the node order (D25) that
// differs, "" none.
func orderDifference(a, b *ringdump.Order) string {
	switch {
	case a == nil && b == nil:
		return ""
	case a == nil || b == nil:
		return fmt.Sprintf("order %s -> %s", showOrder(a), showOrder(b))
	case a.Asked != b.Asked:
		return fmt.Sprintf("order asked %s -> %s", a.Asked, b.Asked)
	case a.Place() != b.Place() || a.Location != b.Location || a.NameUnknown != b.NameUnknown:
		return fmt.Sprintf("order location %s -> %s", showPlace(a), showPlace(b))
	case a.Network != b.Network:
		return fmt.Sprintf("order applied %t -> %t", a.Network, b.Network)
	case !slices.Equal(a.Sequence, b.Sequence):
		return fmt.Sprintf("order sequence %s -> %s", showSequence(a.Sequence), showSequence(b.Sequence))
	case a.Note != b.Note:
		return fmt.Sprintf("order note %s -> %s", quote.String(a.Note), quote.String(b.Note))
	case a.FromRecord != b.FromRecord:
		return fmt.Sprintf("order from the record %t -> %t", a.FromRecord, b.FromRecord)
	}
	return ""
}

func showOrder(o *ringdump.Order) string {
	if o == nil {
		return "none"
	}
	return "asked " + o.Asked
}

// showPlace is a rank's location as its dump gives it: the names when
// written, else the hashes (D28).
func showPlace(o *ringdump.Order) string {
	switch {
	case o.Location != "":
		return quote.String(o.Location)
	case o.Place().Found():
		return HashText(o.Place())
	}
	return "none"
}

// netDevDifference is the first channel whose NIC index differs, ""
// none; a channel the rank was not asked about is "none".
func netDevDifference(a, b []ringdump.NetDev) string {
	da, db := devsByChannel(a), devsByChannel(b)
	channels := make([]int, 0, len(da)+len(db))
	for c := range da {
		channels = append(channels, c)
	}
	for c := range db {
		if _, ok := da[c]; !ok {
			channels = append(channels, c)
		}
	}
	slices.Sort(channels)
	for _, c := range channels {
		x, okA := da[c]
		y, okB := db[c]
		if !okA {
			x = -1
		}
		if !okB {
			y = -1
		}
		if x != y {
			return fmt.Sprintf("channel %d's NIC index %s -> %s", c, showDev(x), showDev(y))
		}
	}
	return ""
}

// devsByChannel is each channel's answer: the dump lists them in the
// order they were asked, which two runs need not share.
func devsByChannel(devs []ringdump.NetDev) map[int]int {
	m := make(map[int]int, len(devs))
	for _, d := range devs {
		m[d.Channel] = d.Dev
	}
	return m
}
