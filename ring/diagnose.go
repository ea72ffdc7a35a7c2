package ring

import (
	"fmt"
	"strings"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/nodeorder"
)

// This file is Postset's failure path (D24, docs/errors.md "Diagnosis").
// Every rank runs Postset on the same gathered fragments, so when the fast
// checks fail, every rank must print the same WARN and that WARN should
// name the rank whose fragment is wrong. diagnose reads only the fragments
// and n, never the calling rank, and costs O(nRanks × n) time and O(nRanks)
// memory from the call's Allocator; it runs only after a fast check failed.
//
// A fragment holds most facts twice: a link a→b is a's ringNext and b's
// ringPrev; a node's head and tail on a channel are held by every rank of
// the node. A single wrong field therefore contradicts one or more other
// fields, and every contradiction it causes involves its own rank. The
// diagnosis enumerates the contradictions of the lowest channel that has
// any, each with the one or two ranks that could explain it, and names the
// rank that explains the most (ties: the lowest rank). It enumerates twice,
// first to count votes, then to find the chosen rank's first contradiction,
// and formats only that one.

// kind is a kind of contradiction; its text is in details.
type kind uint8

const (
	headDiffers        kind = iota // v: value, node, agreed head, held, ranks
	tailDiffers                    // v: value, node, agreed tail, held, ranks
	makesOwnNode                   // v: head, its node, own node
	headOfOtherNode                // v: head, its node, own node
	headElsewhere                  // v: node, its ringRecv[0], its node
	tailOfOtherNode                // v: tail, its node, own node
	tailElsewhere                  // v: node, its ringRecv[0], its node
	nextIsEnd                      // v: node, tail
	nextInOtherNode                // v: next, its node, own node
	nextIsHead                     // v: next
	nextNotBack                    // v: next, next's ringPrev, node
	prevIsEnd                      // v: node, head
	prevInOtherNode                // v: prev, its node, own node
	prevIsTail                     // v: prev
	prevNotBack                    // v: prev, prev's ringNext
	offSegment                     // v: node, head, tail
	stitchedNextBroken             // v: next, next's prev (-1: next is -1)
	stitchedPrevBroken             // v: prev, prev's next (-1: prev is -1)
	offRing                        // v: ranks reached, nRanks
)

// contradiction is one inconsistency between fragments on one channel:
// subject is the rank whose field it describes, other a second rank that
// could equally explain it (or -1).
type contradiction struct {
	subject, other int32
	kind           kind
	v              [5]int32
}

// diagnosis is the working state of one diagnose call: the fragments, the
// channel count, the nodes of D8 and one channel's fields as flat tables,
// all in memory from the call's Allocator.
type diagnosis struct {
	all   []*abi.TopoRanks
	n     int
	nodes nodeFinder // D8, as Postset finds them
	// stitchHeads are the nodes' first ranks in the order Postset stitched
	// them: D8's, or D25's location order.
	stitchHeads []int32
	nodeOf      []int32 // nodeOf[r]: r's node (by its ringRecv[0], D8)
	order       []int32 // ranks grouped by node, in rank order within a node
	start       []int32 // node m's ranks are order[start[m]:start[m+1]]
	// Every rank's fields on the channel an enumeration last loaded
	// (load); stitchedContradictions stitches next and prev (through
	// pairs, stitch's table).
	recv, send, next, prev []int32
	pairs                  []uint64
	counts                 []int32 // scratch of agreed, zero between uses
	marks                  []int32 // scratch of offSegment and unreached, zero between uses
	votes                  []int32
}

// diagnose returns the canonical error of fragments that failed a fast
// check: first any value out of range (channel by channel, then rank by
// rank: ncclInvalidArgument), then the first channel with a contradiction
// (ncclInternalError). n is the channel count of D23 (every fragment has at
// least n channels). Its working memory comes from mem; when that runs out
// the error is ncclSystemError.
func diagnose(all []*abi.TopoRanks, n int, stitchHeads []int32, mem *scratch) *abi.Error {
	if err := firstRangeError(all, n); err != nil {
		return err
	}
	d, err := newDiagnosis(all, n, stitchHeads, mem)
	if err != nil {
		return err
	}
	for c := range n {
		if culprit, found := d.vote(c, d.channelContradictions); found {
			return d.verdict(c, culprit, d.channelContradictions)
		}
	}
	for c := range n {
		if culprit, found := d.vote(c, d.stitchedContradictions); found {
			return d.verdict(c, culprit, d.stitchedContradictions)
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

// newDiagnosis finds the nodes (D8, nodeFinder) and groups the ranks by
// node (nodeorder.GroupRanks, the counting sort Arrange groups them by).
// Every value is in range (firstRangeError passed).
func newDiagnosis(all []*abi.TopoRanks, n int, stitchHeads []int32, mem *scratch) (*diagnosis, *abi.Error) {
	nRanks := len(all)
	block := mem.ints(14*nRanks + 1)
	if block == nil {
		return nil, mem.err("ncclTopoPostset", nRanks, n)
	}
	clear(block)
	take := func(k int) []int32 { s := block[:k:k]; block = block[k:]; return s }
	d := &diagnosis{all: all, n: n, pairs: pairsOf(take(2 * nRanks))} // first: the block's alignment
	d.nodes = newNodeFinder(take(nRanks), take(nRanks))
	d.nodeOf, d.order, d.start = take(nRanks), take(nRanks), take(nRanks+1)
	d.recv, d.send, d.next, d.prev = take(nRanks), take(nRanks), take(nRanks), take(nRanks)
	d.counts, d.marks, d.votes = take(nRanks), take(nRanks), take(nRanks)
	for r, f := range all {
		d.nodeOf[r], _ = d.nodes.node(f.RingRecv[0])
	}
	d.start = d.start[:len(d.nodes.heads)+1]
	nodeorder.GroupRanks(d.nodeOf, d.order, d.start)
	d.stitchHeads = stitchHeads
	if stitchHeads == nil {
		d.stitchHeads = d.nodes.heads
	}
	return d, nil
}

// load fills the channel tables with every rank's fields on channel c.
func (d *diagnosis) load(c int) {
	for r, f := range d.all {
		d.recv[r], d.send[r], d.next[r], d.prev[r] = f.RingRecv[c], f.RingSend[c], f.RingNext[c], f.RingPrev[c]
	}
}

func (d *diagnosis) members(m int) []int32 { return d.order[d.start[m]:d.start[m+1]] }

// vote enumerates channel c's contradictions and counts, for each rank, the
// contradictions that name it. It reports whether there was any, and the
// rank with most votes (ties: the lowest). Votes only grow, so comparing
// each rank as it gains one finds that rank. Only the deciding channel
// ever votes, so the counts are never cleared.
func (d *diagnosis) vote(c int, enumerate func(int, func(contradiction) bool)) (culprit int32, found bool) {
	best := int32(0)
	enumerate(c, func(x contradiction) bool {
		found = true
		for _, r := range [2]int32{x.subject, x.other} {
			if r < 0 {
				continue
			}
			d.votes[r]++
			if v := d.votes[r]; v > best || (v == best && r < culprit) {
				culprit, best = r, v
			}
		}
		return true
	})
	return culprit, found
}

// verdict is the WARN naming culprit with the first contradiction whose
// subject it is, or else the first that names it as the other rank.
func (d *diagnosis) verdict(c int, culprit int32, enumerate func(int, func(contradiction) bool)) *abi.Error {
	var chosen *contradiction
	enumerate(c, func(x contradiction) bool {
		if x.subject == culprit {
			chosen = &x
		}
		return chosen == nil
	})
	text := ""
	if chosen != nil {
		text = d.detail(*chosen)
	} else {
		enumerate(c, func(x contradiction) bool {
			if x.other == culprit {
				text = fmt.Sprintf("rank %d's %s", x.subject, d.detail(x))
				return false
			}
			return true
		})
	}
	return abi.Errorf(abi.InternalError, "ncclTopoPostset: rank %d, channel %d: %s", culprit, c, text)
}

// details are the contradictions' texts (docs/errors.md "Diagnosis"),
// each formatted from the contradiction's values v[0..4] by index.
var details = [...]string{
	headDiffers:        "ringRecv (head) is %[1]d but node %[2]d's head is %[3]d (held by %[4]d of its %[5]d ranks)",
	tailDiffers:        "ringSend (tail) is %[1]d but node %[2]d's tail is %[3]d (held by %[4]d of its %[5]d ranks)",
	makesOwnNode:       "ringRecv[0] is %[1]d, a rank of node %[2]d: it makes node %[3]d on its own",
	headOfOtherNode:    "ringRecv (head) is %[1]d, a rank of node %[2]d, not of its own node %[3]d",
	headElsewhere:      "node %[1]d's ranks have it as their head, but its ringRecv[0] is %[2]d, which puts it in node %[3]d",
	tailOfOtherNode:    "ringSend (tail) is %[1]d, a rank of node %[2]d, not of its own node %[3]d",
	tailElsewhere:      "node %[1]d's ranks have it as their tail, but its ringRecv[0] is %[2]d, which puts it in node %[3]d",
	nextIsEnd:          "ringNext is -1 but node %[1]d's tail is %[2]d",
	nextInOtherNode:    "ringNext is %[1]d, a rank of node %[2]d, not of its own node %[3]d",
	nextIsHead:         "ringNext is %[1]d, its node's head",
	nextNotBack:        "ringNext is %[1]d but rank %[1]d's ringPrev is %[2]d",
	prevIsEnd:          "ringPrev is -1 but node %[1]d's head is %[2]d",
	prevInOtherNode:    "ringPrev is %[1]d, a rank of node %[2]d, not of its own node %[3]d",
	prevIsTail:         "ringPrev is %[1]d, its node's tail",
	prevNotBack:        "ringPrev is %[1]d but rank %[1]d's ringNext is %[2]d",
	offSegment:         "not on node %[1]d's segment from head %[2]d to tail %[3]d",
	stitchedNextBroken: "after the stitch its next is %[1]d but rank %[1]d's prev is %[2]d",
	stitchedPrevBroken: "after the stitch its prev is %[1]d but rank %[1]d's next is %[2]d",
	offRing:            "not on the ring through rank 0 (%[1]d of %[2]d ranks reached)",
}

// detail is a contradiction's text: its kind's, with two additions. A
// stitched link of -1 has no rank to point back; a ringNext that does not
// point back names the rank it leaves unreached, if there is one.
func (d *diagnosis) detail(x contradiction) string {
	v := x.v
	text := fmt.Sprintf(details[x.kind], v[0], v[1], v[2], v[3], v[4])
	switch {
	case (x.kind == stitchedNextBroken || x.kind == stitchedPrevBroken) && v[0] < 0:
		text = text[:strings.Index(text, " but ")]
	case x.kind == nextNotBack:
		if lost := d.unreached(x.subject, v[0], int(v[2])); lost >= 0 {
			text += fmt.Sprintf("; rank %d is reached by nobody", lost)
		}
	}
	return text
}

// agreed is the value a node's ranks hold for a channel's head (field
// recv, end prev) or tail (send, next): the value held by the most of
// them; among values tied for most, those that are ranks of the node whose
// own end field is -1, if any; then the node's first rank's value if it is
// among them, else the smallest. count is how many ranks hold it.
func (d *diagnosis) agreed(m int, field, end []int32) (value int32, count int32) {
	ranks := d.members(m)
	first := field[ranks[0]]
	same := true
	for _, r := range ranks[1:] {
		same = same && field[r] == first
	}
	if same {
		return first, int32(len(ranks))
	}
	for _, r := range ranks {
		d.counts[field[r]]++
		count = max(count, d.counts[field[r]])
	}
	head := d.nodes.heads[m]
	keyIn := d.nodeOf[head] == int32(m)
	keyValue := field[head]
	const none = int32(1<<31 - 1)
	minMarked, minTied := none, none
	keyMarked, keyTied := false, false
	for _, r := range ranks {
		v := field[r]
		if d.counts[v] != count {
			continue
		}
		d.counts[v] = -1 // each tied value once
		isKey := keyIn && v == keyValue
		if d.nodeOf[v] == int32(m) && end[v] == -1 {
			minMarked = min(minMarked, v)
			keyMarked = keyMarked || isKey
		}
		minTied = min(minTied, v)
		keyTied = keyTied || isKey
	}
	for _, r := range ranks {
		d.counts[field[r]] = 0
	}
	switch {
	case minMarked != none && keyMarked, minMarked == none && keyTied:
		return keyValue, count
	case minMarked != none:
		return minMarked, count
	}
	return minTied, count
}

// channelContradictions enumerates channel c's contradictions, node by node
// in node order, in the order of docs/errors.md "Diagnosis": heads, tails,
// the head's and tail's node, then each rank's ringNext and ringPrev, then
// ranks off their node's segment. visit returns false to stop.
func (d *diagnosis) channelContradictions(c int, visit func(contradiction) bool) {
	d.load(c)
	emitted := 0
	emit := func(x contradiction) bool { emitted++; return visit(x) }
	for m := range d.nodes.heads {
		ranks := d.members(m)
		node, size := int32(m), int32(len(ranks))
		before := emitted
		head, heldHead := d.agreed(m, d.recv, d.prev)
		tail, heldTail := d.agreed(m, d.send, d.next)
		for _, s := range ranks {
			if v := d.recv[s]; v != head && !emit(contradiction{s, -1, headDiffers, [5]int32{v, node, head, heldHead, size}}) {
				return
			}
		}
		for _, s := range ranks {
			if v := d.send[s]; v != tail && !emit(contradiction{s, -1, tailDiffers, [5]int32{v, node, tail, heldTail, size}}) {
				return
			}
		}
		if home := d.nodeOf[head]; home != node {
			x := contradiction{head, -1, headElsewhere, [5]int32{node, d.all[head].RingRecv[0], home}}
			if s := ranks[0]; size == 1 && s != head {
				x = contradiction{s, head, headOfOtherNode, [5]int32{head, home, node}}
				if c == 0 {
					x.kind = makesOwnNode
				}
			}
			if !emit(x) {
				return
			}
		}
		if home := d.nodeOf[tail]; home != node {
			x := contradiction{tail, -1, tailElsewhere, [5]int32{node, d.all[tail].RingRecv[0], home}}
			if s := ranks[0]; size == 1 && s != tail {
				x = contradiction{s, tail, tailOfOtherNode, [5]int32{tail, home, node}}
			}
			if !emit(x) {
				return
			}
		}
		for _, s := range ranks {
			if s != tail {
				if x, ok := d.linkContradiction(s, node, tail, head, d.next, d.prev, &nextKinds); ok && !emit(x) {
					return
				}
			}
			if s != head {
				if x, ok := d.linkContradiction(s, node, head, tail, d.prev, d.next, &prevKinds); ok && !emit(x) {
					return
				}
			}
		}
		if emitted == before {
			if s := d.offSegment(ranks, node, head, tail); s >= 0 && !visit(contradiction{s, -1, offSegment, [5]int32{node, head, tail}}) {
				return
			}
		}
	}
}

// The two directions of a channel's links, for linkContradiction: next
// leads from the head to the tail, prev from the tail to the head.
var (
	nextKinds = [4]kind{nextIsEnd, nextInOtherNode, nextIsHead, nextNotBack}
	prevKinds = [4]kind{prevIsEnd, prevInOtherNode, prevIsTail, prevNotBack}
)

// linkContradiction checks rank s's link b = forth[s] one way (s is not the
// end of its node's segment that way, toward): b must be a rank of its
// node other than the end it comes from (from), whose link the other way
// (back) is s. kinds names each failure that way (nextKinds, prevKinds).
func (d *diagnosis) linkContradiction(s, node, toward, from int32, forth, back []int32, kinds *[4]kind) (contradiction, bool) {
	switch b := forth[s]; {
	case b == -1:
		return contradiction{s, -1, kinds[0], [5]int32{node, toward}}, true
	case d.nodeOf[b] != node:
		return contradiction{s, b, kinds[1], [5]int32{b, d.nodeOf[b], node}}, true
	case b == from:
		return contradiction{s, -1, kinds[2], [5]int32{b}}, true
	case back[b] != s:
		return contradiction{s, b, kinds[3], [5]int32{b, back[b], node}}, true
	}
	return contradiction{}, false
}

// unreached completes a ringNext contradiction (s's ringNext is b, but b
// does not point back): the lowest rank of s's node that names s as its
// ringPrev, is not b, and is no rank's ringNext, or -1. It reads the
// channel channelContradictions loaded.
func (d *diagnosis) unreached(s, b int32, node int) int32 {
	ranks := d.members(node)
	mark := func(to int32) {
		for _, a := range ranks {
			if v := d.next[a]; v >= 0 {
				d.marks[v] = to
			}
		}
	}
	mark(1)
	lost := int32(-1)
	for _, o := range ranks {
		if o != b && d.prev[o] == s && d.marks[o] == 0 {
			lost = o
			break
		}
	}
	mark(0)
	return lost
}

// offSegment returns the lowest rank of node m, whose links are all
// mutual, that the walk from head along ringNext does not reach by tail, or
// -1. The walk stays inside the node, so clearing the node's marks clears
// every mark it set.
func (d *diagnosis) offSegment(ranks []int32, node, head, tail int32) int32 {
	follow(d.next, head, len(ranks), func(_ int, v int32) bool {
		if d.nodeOf[v] != node || d.marks[v] != 0 {
			return false
		}
		d.marks[v] = 1
		return v != tail
	})
	off := int32(-1)
	for _, s := range ranks {
		if d.marks[s] == 0 && off < 0 {
			off = s
		}
		d.marks[s] = 0
	}
	return off
}

// stitchedContradictions checks channel c after D9's stitch (stitch.go),
// for fragments whose own fields contradict nothing: each rank's stitched
// prev and next must point at each other, and the ring through rank 0 must
// reach every rank. It yields at most one contradiction.
func (d *diagnosis) stitchedContradictions(c int, visit func(contradiction) bool) {
	d.load(c)
	for r := range d.pairs {
		d.pairs[r] = pair(d.next[r], d.prev[r])
	}
	stitch(d.all, d.stitchHeads, c, c+1, d.pairs)
	for r, p := range d.pairs {
		d.next[r], d.prev[r] = nextOf(p), prevOf(p)
	}
	nRanks := int32(len(d.all))
	directions := [2]struct {
		forth, back []int32
		broken      kind
	}{{d.next, d.prev, stitchedNextBroken}, {d.prev, d.next, stitchedPrevBroken}}
	for s := range nRanks {
		for _, way := range directions {
			if b := way.forth[s]; b < 0 || way.back[b] != s {
				back := int32(-1)
				if b >= 0 {
					back = way.back[b]
				}
				visit(contradiction{s, -1, way.broken, [5]int32{b, back}})
				return
			}
		}
	}
	// Every link is mutual: next is a permutation. Is it one cycle?
	reached, _ := follow(d.next, 0, int(nRanks), func(_ int, v int32) bool {
		if d.marks[v] != 0 {
			return false
		}
		d.marks[v] = 1
		return true
	})
	off := int32(-1)
	for s := range nRanks {
		if d.marks[s] == 0 && off < 0 {
			off = s
		}
		d.marks[s] = 0
	}
	if off >= 0 {
		visit(contradiction{off, -1, offRing, [5]int32{int32(reached), nRanks}})
	}
}

// maxWalkRanks is how many ranks a failing ring's INFO line shows.
const maxWalkRanks = 64

// walkLines are rank 0's INFO lines for the channels whose stitched ring is
// not one cycle with mutual prev links (docs/errors.md "Walks on rank 0"):
// the walk from rank 0 along the stitched next, as ncclBuildRings prints a
// ring before it checks it, nRanks steps or until a next is -1, cut after
// maxWalkRanks ranks with the count of the rest. Out of memory, none.
func walkLines(all []*abi.TopoRanks, n int, stitchHeads []int32, mem *scratch) []string {
	d, err := newDiagnosis(all, n, stitchHeads, mem)
	if err != nil {
		return nil
	}
	var lines []string
	for c := range n {
		broken := false
		d.stitchedContradictions(c, func(contradiction) bool { broken = true; return false })
		if broken { // d.next is channel c's, stitched
			lines = append(lines, d.walkLine(c))
		}
	}
	return lines
}

func (d *diagnosis) walkLine(c int) string {
	nRanks := len(d.all)
	// The prefix and " %3d" per rank of ChannelLine (D17).
	line := []byte(ChannelLine(c, d.n, nil))
	shown, after := follow(d.next, 0, nRanks, func(step int, v int32) bool {
		if step == maxWalkRanks {
			return false
		}
		line = appendPadded(append(line, ' '), int(v), 3, ' ')
		return true
	})
	switch {
	case shown < nRanks && after >= 0:
		line = fmt.Appendf(line, " ... (%d more)", nRanks-shown)
	case after < 0:
		line = fmt.Appendf(line, " (next is %d)", after)
	}
	return string(line)
}
