package verify

import (
	"fmt"
	"slices"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/score"
	"github.com/nccomring/libnccomring/internal/quote"
	"github.com/nccomring/libnccomring/nodeorder"
	"github.com/nccomring/libnccomring/ringdump"
)

// checkOrder checks the inter-node order (D25) of a job whose rings every
// rank agrees on (byRank: one successful, well-formed dump per rank), when
// some dump records it: every rank's Postset reached the same decision,
// every rank asked the same policy, the rings visit the nodes in the
// sequence decided, that sequence is the one the ranks' locations give
// by the library's own rule (nodeorder.Arrange, D28), and every rank's
// location is its node's.
func checkOrder(rep *Report, byRank []*ringdump.Dump) {
	orders := make([]ringdump.Order, len(byRank))
	any := false
	for r, d := range byRank {
		if d.Order != nil {
			orders[r], any = *d.Order, true
		} else {
			orders[r].Asked = "rank"
		}
	}
	if !any {
		return
	}
	// The reference is what most ranks decided (ties: the lowest rank's),
	// so that one rank that decided otherwise is the one named.
	at, held := plurality(len(orders), func(i int) decisionKey { return decisionOf(orders[i]) })
	ref := orders[at]
	for r, o := range orders {
		if !sameDecision(o, ref) {
			rep.addf(KindDecision, r, -1, at, "rank %d: its Postset decided %s, but %d of %d ranks decided %s",
				r, describe(o), held, len(orders), describe(ref))
		}
	}
	if rep.Count() > 0 {
		return
	}
	at, held = plurality(len(orders), func(i int) string { return orders[i].Asked })
	for r, o := range orders {
		if o.Asked != orders[at].Asked {
			rep.addf(KindAsked, r, -1, at, "rank %d asked NCCOM_RING_NODE_ORDER=%s, but %d of %d ranks asked %s",
				r, o.Asked, held, len(orders), orders[at].Asked)
		}
	}
	if ref.Network {
		checkSequence(rep, byRank, ref.Sequence)
	}
	arr, ok := arrange(byRank)
	if !ok {
		return
	}
	if ref.Network && !slices.Equal(ref.Sequence, ringdump.Ints(arr.Sequence)) {
		rep.addf(KindSequence, -1, -1, -1, "every rank decided the network order %v, but the locations their records carry give %v (D28's placement, which the library and the tools share)",
			ref.Sequence, arr.Sequence)
	}
	checkLocations(rep, byRank, arr)
}

// sameDecision: a and b are the same decision of Postset (not what each
// rank asked).
func sameDecision(a, b ringdump.Order) bool {
	return a.Network == b.Network && a.Note == b.Note && slices.Equal(a.Sequence, b.Sequence)
}

// decisionKey is what sameDecision compares, as one map key.
type decisionKey struct {
	network  bool
	note     string
	sequence string // intsKey
}

func decisionOf(o ringdump.Order) decisionKey {
	return decisionKey{o.Network, o.Note, intsKey(o.Sequence)}
}

// describe is a decision in a few words, its strings quoted.
func describe(o ringdump.Order) string {
	s := "rank order"
	if o.Network {
		s = fmt.Sprintf("the network order %v", o.Sequence)
	}
	if o.Note != "" {
		s += " (" + quote.String(o.Note) + ")"
	}
	return s
}

// checkSequence checks that every graph channel's ring, from rank 0,
// visits the nodes in the sequence every rank decided, up to where it
// starts.
func checkSequence(rep *Report, byRank []*ringdump.Dump, seq []int) {
	for c := range byRank[0].GraphChannels {
		var visited []int
		for i, r := range byRank[0].Channels[c].UserRanks {
			if m := byRank[r].Node; i == 0 || m != visited[len(visited)-1] {
				visited = append(visited, m)
			}
		}
		if len(visited) > 1 && visited[0] == visited[len(visited)-1] {
			visited = visited[:len(visited)-1] // rank 0 starts inside its node's run
		}
		at := slices.Index(seq, visited[0])
		if at < 0 || len(visited) != len(seq) || !slices.Equal(visited, append(slices.Clone(seq[at:]), seq[:at]...)) {
			rep.addf(KindSequence, 0, c, -1, "channel %d: the ring visits the nodes %v, not in the sequence %v every rank decided",
				c, visited, seq)
			return
		}
	}
}

// arrange places and orders the nodes of a job whose ranks agree (byRank:
// one checked dump per rank) by the one rule the library follows
// (nodeorder.Arrange, D28), from the locations the ranks' records carried
// and the heads every rank agrees on; ok is false when a head is not a
// rank of its node (a dump that no Postset wrote: nothing to place by).
func arrange(byRank []*ringdump.Dump) (arr nodeorder.Arrangement, ok bool) {
	heads := byRank[0].NodesFirstRank
	if len(heads) != byRank[0].NNodes {
		return arr, false
	}
	for m, h := range heads {
		if h < 0 || h >= len(byRank) || byRank[h].Node != m {
			return arr, false
		}
	}
	j := &score.Job{NRanks: len(byRank), NNodes: len(heads), Node: make([]int, len(byRank)), Heads: heads,
		RankLocation: make([]nodeorder.Location, len(byRank))}
	for r, d := range byRank {
		j.Node[r], j.RankLocation[r] = d.Node, d.Order.Place()
	}
	arr, err := j.Arrange() // the one arrangement score takes too
	return arr, err == nil
}

// checkLocations reports the ranks whose location (the hashes their
// records carried, D28) is not their node's: the node is placed by the
// value most of its ranks carry, so such a rank is wrong or its node is.
func checkLocations(rep *Report, byRank []*ringdump.Dump, arr nodeorder.Arrangement) {
	names := score.NamesOf(byRank)
	show := func(l nodeorder.Location) string {
		if !l.Found() {
			return "no location"
		}
		return "the location " + quote.String(names.Show(l))
	}
	heads := byRank[0].NodesFirstRank
	for r, d := range byRank {
		m := d.Node
		if l := d.Order.Place(); l != arr.Node[m] {
			rep.addf(KindLocation, r, -1, heads[m], "rank %d: its record carries %s, but its node %d is placed at %s (the value most of its ranks carry; D28)",
				r, show(l), m, show(arr.Node[m]))
		}
	}
}
