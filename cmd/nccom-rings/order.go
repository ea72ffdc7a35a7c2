package main

import (
	"fmt"
	"slices"

	"github.com/nccomring/libnccomring/internal/quote"
	"github.com/nccomring/libnccomring/ringdump"
)

// checkOrder checks the inter-node order (D25) of a job whose rings every
// rank agrees on (byRank: one successful, well-formed dump per rank), when
// some dump records it: every rank's Postset reached the same decision,
// every rank asked the same policy, the rings visit the nodes in the
// sequence decided, and every rank's location is its node's.
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
	at, held := plurality(len(orders), func(i, j int) bool { return sameDecision(orders[i], orders[j]) })
	ref := orders[at]
	for r, o := range orders {
		if !sameDecision(o, ref) {
			rep.addf(kindDecision, r, -1, at, "rank %d: its Postset decided %s, but %d of %d ranks decided %s",
				r, describe(o), held, len(orders), describe(ref))
		}
	}
	if rep.count() > 0 {
		return
	}
	at, held = plurality(len(orders), func(i, j int) bool { return orders[i].Asked == orders[j].Asked })
	for r, o := range orders {
		if o.Asked != orders[at].Asked {
			rep.addf(kindAsked, r, -1, at, "rank %d asked NCCOM_RING_NODE_ORDER=%s, but %d of %d ranks asked %s",
				r, o.Asked, held, len(orders), orders[at].Asked)
		}
	}
	if ref.Network {
		checkSequence(rep, byRank, ref.Sequence)
	}
	checkLocations(rep, byRank, orders)
}

// sameDecision: a and b are the same decision of Postset (not what each
// rank asked).
func sameDecision(a, b ringdump.Order) bool {
	return a.Network == b.Network && a.Note == b.Note && slices.Equal(a.Sequence, b.Sequence)
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
			rep.addf(kindSequence, 0, c, -1, "channel %d: the ring visits the nodes %v, not in the sequence %v every rank decided",
				c, visited, seq)
			return
		}
	}
}

// checkLocations reports the ranks whose NCCOM_RING_LOCATION is not their
// node's (the one most of its ranks set, ties to its first rank's): the
// node is placed by the majority, so such a rank is wrong or its node is.
func checkLocations(rep *Report, byRank []*ringdump.Dump, orders []ringdump.Order) {
	nodes := byRank[0].NNodes
	members := make([][]int, nodes)
	for r, d := range byRank {
		members[d.Node] = append(members[d.Node], r)
	}
	for m, ranks := range members {
		best, count := orders[ranks[0]].Location, 0
		for _, r := range ranks {
			n := 0
			for _, s := range ranks {
				if orders[s].Location == orders[r].Location {
					n++
				}
			}
			if n > count {
				best, count = orders[r].Location, n
			}
		}
		for _, r := range ranks {
			if l := orders[r].Location; l != best {
				rep.addf(kindLocation, r, -1, ranks[0], "rank %d: NCCOM_RING_LOCATION is %s, but most ranks of its node %d say %s",
					r, quote.String(l), m, quote.String(best))
			}
		}
	}
}
