package ring

import (
	"fmt"

	"github.com/nccomring/libnccomring/abi"
)

// This file is Postset's failure path (D24, docs/errors.md "Diagnosis").
// Every rank runs Postset on the same gathered fragments, so when the fast
// checks fail, every rank must print the same WARN and that WARN should
// name the rank whose fragment is wrong. diagnose reads only the fragments
// and n, never the calling rank, and costs O(nRanks × n); it runs only after
// a fast check has failed.
//
// A fragment holds most facts twice: a link a→b is a's ringNext and b's
// ringPrev; a node's head and tail on a channel are held by every rank of
// the node. A single wrong field therefore contradicts one or more other
// fields, and every contradiction it causes involves its own rank. The
// diagnosis lists the contradictions of the lowest channel that has any,
// each with the one or two ranks that could explain it, and names the rank
// that explains the most (ties: the lowest rank).

// contradiction is one inconsistency between fragments on one channel.
type contradiction struct {
	subject int32  // the rank whose field the text describes
	other   int32  // a second rank that could explain it, or -1
	detail  string // the text after "rank S, channel c: ", about subject's fields
}

// diagnosis is the shared state of one diagnose call: the fragments, the
// channel count and the nodes of D8 (the first rank of each node, and each
// rank's node), with every node's ranks in rank order.
type diagnosis struct {
	all     []*abi.TopoRanks
	n       int
	nodeOf  []int32 // nodeOf[r]: r's node (by its ringRecv[0], D8)
	heads   []int32 // heads[m]: node m's first rank (its channel-0 head)
	members [][]int32
}

// diagnose returns the canonical error of fragments that failed a fast
// check: first any value out of range (channel by channel, then rank by
// rank: ncclInvalidArgument), then the first channel with a contradiction
// (ncclInternalError). n is the channel count of D23 (every fragment has at
// least n channels). It never returns nil: if the fragments hold no
// contradiction of their own, the stitched rings are checked directly.
func diagnose(all []*abi.TopoRanks, n int) *abi.Error {
	if err := firstRangeError(all, n); err != nil {
		return err
	}
	d := newDiagnosis(all, n)
	for c := range n {
		if list := d.channelContradictions(c); len(list) > 0 {
			return d.verdict(c, list)
		}
	}
	for c := range n {
		if list := d.stitchedContradictions(c); len(list) > 0 {
			return d.verdict(c, list)
		}
	}
	// Not reached: the fast checks and the stitched check test the same
	// conditions. Keep one verdict anyway.
	return abi.Errorf(abi.InternalError, "ncclTopoPostset: the rings are inconsistent but no rank could be named")
}

// firstRangeError is the first value outside its range, channel by channel,
// then rank by rank, then in field order (docs/errors.md P8, P9).
func firstRangeError(all []*abi.TopoRanks, n int) *abi.Error {
	nRanks := int32(len(all))
	for c := range n {
		for r, f := range all {
			fields := [...]struct {
				name  string
				value int32
				lo    int32
			}{{"ringRecv", f.RingRecv[c], 0}, {"ringSend", f.RingSend[c], 0}, {"ringPrev", f.RingPrev[c], -1}, {"ringNext", f.RingNext[c], -1}}
			for _, fd := range fields {
				if fd.value < fd.lo || fd.value >= nRanks {
					return abi.Errorf(abi.InvalidArgument, "ncclTopoPostset: rank %d, channel %d: %s is %d, outside [%d, %d)",
						r, c, fd.name, fd.value, fd.lo, nRanks)
				}
			}
		}
	}
	return nil
}

func newDiagnosis(all []*abi.TopoRanks, n int) *diagnosis {
	nRanks := len(all)
	d := &diagnosis{all: all, n: n, nodeOf: make([]int32, nRanks)}
	byHead := make([]int32, nRanks)
	for i := range byHead {
		byHead[i] = -1
	}
	for r, f := range all {
		h := f.RingRecv[0]
		if byHead[h] < 0 {
			byHead[h] = int32(len(d.heads))
			d.heads = append(d.heads, h)
			d.members = append(d.members, nil)
		}
		m := byHead[h]
		d.nodeOf[r] = m
		d.members[m] = append(d.members[m], int32(r))
	}
	return d
}

// verdict names the rank that the most contradictions of channel c involve
// (ties: the lowest rank) with the first contradiction about it.
func (d *diagnosis) verdict(c int, list []contradiction) *abi.Error {
	votes := make(map[int32]int, 2*len(list))
	culprit, best := int32(-1), 0
	for _, x := range list {
		for _, r := range [2]int32{x.subject, x.other} {
			if r < 0 {
				continue
			}
			votes[r]++
			if v := votes[r]; v > best || (v == best && r < culprit) {
				culprit, best = r, v
			}
		}
	}
	// A rank's vote count only grows, so the loop above can leave a rank
	// that was overtaken by an equal count of a lower rank: settle ties now.
	for r, v := range votes {
		if v == best && r < culprit {
			culprit = r
		}
	}
	chosen := -1
	for i, x := range list {
		if x.subject == culprit {
			chosen = i
			break
		}
	}
	detail := ""
	if chosen >= 0 {
		detail = list[chosen].detail
	} else {
		for _, x := range list {
			if x.other == culprit {
				detail = fmt.Sprintf("rank %d's %s", x.subject, x.detail)
				break
			}
		}
	}
	return abi.Errorf(abi.InternalError, "ncclTopoPostset: rank %d, channel %d: %s", culprit, c, detail)
}

// agreed is the value a node's ranks hold for a channel's head (or tail):
// the value held by the most of them; among values tied for most, those
// that are ranks of the node whose own ringPrev (ringNext for the tail) is
// -1, if any; then the node's first rank's value if it is among them, else
// the smallest. count is how many ranks hold it.
func (d *diagnosis) agreed(m int, field func(*abi.TopoRanks) int32, end func(*abi.TopoRanks) int32) (value int32, count int) {
	ranks := d.members[m]
	first := field(d.all[ranks[0]])
	same := true
	for _, r := range ranks[1:] {
		same = same && field(d.all[r]) == first
	}
	if same {
		return first, len(ranks)
	}
	counts := make(map[int32]int)
	for _, r := range ranks {
		counts[field(d.all[r])]++
	}
	for _, k := range counts {
		count = max(count, k)
	}
	var tied, marked []int32
	for v, k := range counts {
		if k == count {
			tied = append(tied, v)
			if d.nodeOf[v] == int32(m) && end(d.all[v]) == -1 {
				marked = append(marked, v)
			}
		}
	}
	if len(marked) > 0 {
		tied = marked
	}
	head := d.heads[m]
	value = tied[0]
	for _, v := range tied {
		value = min(value, v)
	}
	if d.nodeOf[head] == int32(m) {
		for _, v := range tied {
			if v == field(d.all[head]) {
				value = v
			}
		}
	}
	return value, count
}

func ringRecvOf(c int) func(*abi.TopoRanks) int32 {
	return func(f *abi.TopoRanks) int32 { return f.RingRecv[c] }
}
func ringSendOf(c int) func(*abi.TopoRanks) int32 {
	return func(f *abi.TopoRanks) int32 { return f.RingSend[c] }
}
func ringPrevOf(c int) func(*abi.TopoRanks) int32 {
	return func(f *abi.TopoRanks) int32 { return f.RingPrev[c] }
}
func ringNextOf(c int) func(*abi.TopoRanks) int32 {
	return func(f *abi.TopoRanks) int32 { return f.RingNext[c] }
}

// channelContradictions lists channel c's contradictions, node by node in
// node order, in the order of docs/errors.md "Diagnosis": heads, tails,
// the head's and tail's node, then each rank's ringNext and ringPrev, then
// ranks off their node's segment.
func (d *diagnosis) channelContradictions(c int) []contradiction {
	var list []contradiction
	recv, send, prev, next := ringRecvOf(c), ringSendOf(c), ringPrevOf(c), ringNextOf(c)
	for m, ranks := range d.members {
		before := len(list)
		node := int32(m)
		head, heldHead := d.agreed(m, recv, prev)
		tail, heldTail := d.agreed(m, send, next)
		for _, s := range ranks {
			if v := recv(d.all[s]); v != head {
				list = append(list, contradiction{s, -1, fmt.Sprintf("ringRecv (head) is %d but node %d's head is %d (held by %d of its %d ranks)", v, m, head, heldHead, len(ranks))})
			}
		}
		for _, s := range ranks {
			if v := send(d.all[s]); v != tail {
				list = append(list, contradiction{s, -1, fmt.Sprintf("ringSend (tail) is %d but node %d's tail is %d (held by %d of its %d ranks)", v, m, tail, heldTail, len(ranks))})
			}
		}
		for _, end := range [...]struct {
			rank int32
			role string
			name string
		}{{head, "head", "ringRecv (head)"}, {tail, "tail", "ringSend (tail)"}} {
			home := d.nodeOf[end.rank]
			if home == node {
				continue
			}
			if len(ranks) == 1 && ranks[0] != end.rank {
				s := ranks[0]
				text := fmt.Sprintf("%s is %d, a rank of node %d, not of its own node %d", end.name, end.rank, home, m)
				if c == 0 && end.role == "head" {
					text = fmt.Sprintf("ringRecv[0] is %d, a rank of node %d: it makes node %d on its own", end.rank, home, m)
				}
				list = append(list, contradiction{s, end.rank, text})
				continue
			}
			list = append(list, contradiction{end.rank, -1, fmt.Sprintf("node %d's ranks have it as their %s, but its ringRecv[0] is %d, which puts it in node %d",
				m, end.role, d.all[end.rank].RingRecv[0], home)})
		}
		for _, s := range ranks {
			f := d.all[s]
			if s != tail {
				if x := d.linkContradiction(c, s, node, next(f), prev, "ringNext", "ringPrev", head, tail, "tail", "head"); x != nil {
					list = append(list, *x)
				}
			}
			if s != head {
				if x := d.linkContradiction(c, s, node, prev(f), next, "ringPrev", "ringNext", tail, head, "head", "tail"); x != nil {
					list = append(list, *x)
				}
			}
		}
		if len(list) == before {
			if s := d.offSegment(ranks, head, tail, next); s >= 0 {
				list = append(list, contradiction{s, -1, fmt.Sprintf("not on node %d's segment from head %d to tail %d", m, head, tail)})
			}
		}
	}
	return list
}

// linkContradiction checks rank s's link field (ringNext, or ringPrev with
// the roles mirrored) on channel c: value b must be a rank of s's node, not
// the node's far end (head for ringNext, tail for ringPrev), and b's
// opposite field must point back at s. -1 is allowed only at s's own end,
// which the caller has already excluded.
func (d *diagnosis) linkContradiction(c int, s, node, b int32, back func(*abi.TopoRanks) int32, field, backField string, farEnd, ownEnd int32, ownRole, farRole string) *contradiction {
	switch {
	case b == -1:
		return &contradiction{s, -1, fmt.Sprintf("%s is -1 but node %d's %s is %d", field, node, ownRole, ownEnd)}
	case d.nodeOf[b] != node:
		return &contradiction{s, b, fmt.Sprintf("%s is %d, a rank of node %d, not of its own node %d", field, b, d.nodeOf[b], node)}
	case b == farEnd:
		return &contradiction{s, -1, fmt.Sprintf("%s is %d, its node's %s", field, b, farRole)}
	case back(d.all[b]) != s:
		text := fmt.Sprintf("%s is %d but rank %d's %s is %d", field, b, b, backField, back(d.all[b]))
		if lost := d.unreached(c, s, node, b, field); lost >= 0 {
			text += fmt.Sprintf("; rank %d is reached by nobody", lost)
		}
		return &contradiction{s, b, text}
	}
	return nil
}

// unreached completes a ringNext contradiction (s's ringNext is b, but b
// does not point back): the rank of s's node that names s as its ringPrev,
// is not b, and is no rank's ringNext, if there is one. For ringPrev
// contradictions it returns -1.
func (d *diagnosis) unreached(c int, s, node, b int32, field string) int32 {
	if field != "ringNext" {
		return -1
	}
	for _, o := range d.members[node] {
		if o == b || d.all[o].RingPrev[c] != s {
			continue
		}
		reached := false
		for _, a := range d.members[node] {
			reached = reached || d.all[a].RingNext[c] == o
		}
		if !reached {
			return o
		}
	}
	return -1
}

// offSegment returns the lowest rank of a node whose links are all mutual
// that the walk from head along ringNext does not reach before tail, or -1.
func (d *diagnosis) offSegment(ranks []int32, head, tail int32, next func(*abi.TopoRanks) int32) int32 {
	reached := make(map[int32]bool, len(ranks))
	for cur, steps := head, 0; steps < len(ranks) && cur >= 0 && !reached[cur]; steps++ {
		reached[cur] = true
		if cur == tail {
			break
		}
		cur = next(d.all[cur])
	}
	for _, s := range ranks {
		if !reached[s] {
			return s
		}
	}
	return -1
}

// stitchedContradictions checks channel c after D9's stitch, for fragments
// whose own fields contradict nothing: each rank's stitched prev and next
// must point at each other, and the ring through rank 0 must reach every
// rank.
func (d *diagnosis) stitchedContradictions(c int) []contradiction {
	nRanks := len(d.all)
	next, prev := make([]int32, nRanks), make([]int32, nRanks)
	for r, f := range d.all {
		next[r], prev[r] = f.RingNext[c], f.RingPrev[c]
	}
	nNodes := len(d.heads)
	for m, h := range d.heads {
		node, following := d.all[h], d.all[d.heads[(m+1)%nNodes]]
		next[node.RingSend[c]] = following.RingRecv[c]
	}
	for m, h := range d.heads {
		node, previous := d.all[h], d.all[d.heads[(m+nNodes-1)%nNodes]]
		prev[node.RingRecv[c]] = previous.RingSend[c]
	}
	for s := range int32(nRanks) {
		if b := next[s]; b < 0 || prev[b] != s {
			return []contradiction{{s, -1, fmt.Sprintf("after the stitch its next is %d%s", b, backText(b, "prev", prev))}}
		}
		if a := prev[s]; a < 0 || next[a] != s {
			return []contradiction{{s, -1, fmt.Sprintf("after the stitch its prev is %d%s", a, backText(a, "next", next))}}
		}
	}
	onRing := make([]bool, nRanks)
	reached := 0
	for cur := int32(0); !onRing[cur]; cur = next[cur] {
		onRing[cur] = true
		reached++
	}
	for s, ok := range onRing {
		if !ok {
			return []contradiction{{int32(s), -1, fmt.Sprintf("not on the ring through rank 0 (%d of %d ranks reached)", reached, nRanks)}}
		}
	}
	return nil
}

func backText(b int32, name string, table []int32) string {
	if b < 0 {
		return ""
	}
	return fmt.Sprintf(" but rank %d's %s is %d", b, name, table[b])
}

// walkLines are rank 0's INFO lines for the channels whose stitched ring is
// not one cycle with mutual prev links (docs/errors.md "Diagnosis"): the
// walk from rank 0 along the stitched next, as ncclBuildRings prints a ring
// before it checks it, nRanks steps or until a next is out of range, cut
// after maxWalkRanks ranks with the count of the rest.
func walkLines(all []*abi.TopoRanks, n int) []string {
	d := newDiagnosis(all, n)
	var lines []string
	for c := range n {
		if list := d.stitchedContradictions(c); len(list) == 0 {
			continue
		}
		lines = append(lines, d.walkLine(c))
	}
	return lines
}

// maxWalkRanks is how many ranks a failing ring's INFO line shows.
const maxWalkRanks = 64

func (d *diagnosis) walkLine(c int) string {
	nRanks := len(d.all)
	next := make([]int32, nRanks)
	for r, f := range d.all {
		next[r] = f.RingNext[c]
	}
	nNodes := len(d.heads)
	for m, h := range d.heads {
		next[d.all[h].RingSend[c]] = d.all[d.heads[(m+1)%nNodes]].RingRecv[c]
	}
	// The prefix and " %3d" per rank of ChannelLine (D17).
	line := []byte(ChannelLine(c, d.n, nil))
	cur := int32(0)
	for step := range nRanks {
		if step == maxWalkRanks {
			line = fmt.Appendf(line, " ... (%d more)", nRanks-step)
			break
		}
		line = appendPadded(append(line, ' '), int(cur), 3, ' ')
		if cur = next[cur]; cur < 0 {
			line = fmt.Appendf(line, " (next is %d)", cur)
			break
		}
	}
	return string(line)
}
