// Package nodeorder is D25's inter-node order: where each node sits in the
// network (a location: up to 8 names, outermost first, e.g. spine then
// leaf), and the node sequence that groups nodes by location so that every
// ring crosses each level's group boundaries the fewest times a cycle can.
// Pure Go and deterministic: the same input gives the same bytes on every
// rank, whatever the addresses or GOMAXPROCS; no decision iterates a map.
//
// Limits: MaxLevels names of at most MaxName bytes each, of
// [A-Za-z0-9._:-]; an error quotes the value (internal/quote). Names
// travel as their 32-bit FNV-1a hash, so two names
// whose hashes collide are one group (2^-32 per pair).
package nodeorder

import (
	"fmt"
	"strings"

	"github.com/nccomring/libnccomring/internal/quote"
)

const (
	MaxLevels = 8  // names in a location
	MaxName   = 64 // bytes in a name
)

// Location is where a node (or a rank) sits: Levels names, each as its
// Hash. Levels 0 is no location.
type Location struct {
	Levels int32
	Hash   [MaxLevels]uint32
}

// Found reports whether l is a location at all.
func (l Location) Found() bool { return l.Levels > 0 }

// Hash is the 32-bit FNV-1a hash of name: seed-free, so every rank and
// every tool computes the same value.
func Hash(name string) uint32 {
	h := uint32(2166136261)
	for i := range len(name) {
		h = (h ^ uint32(name[i])) * 16777619
	}
	return h
}

// Parse reads a location: 1 to MaxLevels names separated by '/', each 1 to
// MaxName bytes of [A-Za-z0-9._:-]. The error says which part is wrong and
// quotes the value.
func Parse(value string) (Location, error) {
	var l Location
	names := strings.Split(value, "/")
	if len(names) > MaxLevels {
		return Location{}, fmt.Errorf("%s has %d names; at most %d", quote.String(value), len(names), MaxLevels)
	}
	for i, name := range names {
		if err := checkName(name); err != nil {
			return Location{}, fmt.Errorf("%s: name %d %w", quote.String(value), i+1, err)
		}
		l.Hash[i] = Hash(name)
	}
	l.Levels = int32(len(names))
	return l, nil
}

func checkName(name string) error {
	if len(name) == 0 || len(name) > MaxName {
		return fmt.Errorf("has %d bytes; 1 to %d", len(name), MaxName)
	}
	for i := range len(name) {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-') {
			return fmt.Errorf("has %s at byte %d; only A-Z a-z 0-9 . _ : -", quote.String(name[i:i+1]), i+1)
		}
	}
	return nil
}

// Groups holds, for each level 1..Depth, each node's group at that level:
// the lowest index of a node with the same location prefix (a location
// shorter than the level is a prefix of its own there), or -1 for a node
// without a location. Group[l-1][m] is node m's group at level l.
type Groups struct {
	Depth int
	Group [MaxLevels][]int32
	// Count[l-1] is the number of groups at level l, nodes without a
	// location counting as one.
	Count [MaxLevels]int
}

// hashSlots is the size of arrange's table for n nodes: a power of two,
// at least twice n, so that a probe ends after a few slots.
func hashSlots(n int) int {
	s := 2
	for s < 2*n {
		s *= 2
	}
	return s
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// arrangeInts is how many int32s arrange takes for n nodes.
func arrangeInts(n int) int { return MaxLevels*n + hashSlots(n) + 6*n + 1 }

// Compact is n nodes' locations as arrange reads them, in arrays a pass
// streams (a Location is 36 bytes, of which a pass reads 4): Levels[m],
// node m's level count (0: no location), and Names[(l-1)*Stride + m], its
// name at level l <= Levels[m] (other entries are not read); Stride >= n.
type Compact struct {
	Levels, Names []int32
	Stride        int
}

// CompactInts is how many int32s NewCompact takes for n nodes.
func CompactInts(n int) int { return (1 + MaxLevels) * n }

// NewCompact lays out the locations of up to n nodes in mem
// (CompactInts(n) ints), for the caller to fill with Set; Nodes gives the
// Compact of the first k.
func NewCompact(n int, mem []int32) Compact {
	return Compact{Levels: mem[:n:n], Names: mem[n : (1+MaxLevels)*n : (1+MaxLevels)*n], Stride: n}
}

// Nodes is c for its first k nodes.
func (c Compact) Nodes(k int) Compact {
	c.Levels = c.Levels[:k]
	return c
}

// Set makes node m's location the one of levels names (at most MaxLevels
// are read), hash[k] the (k+1)th.
func (c Compact) Set(m int, levels int32, hash *[MaxLevels]uint32) {
	c.Levels[m] = levels
	for k := range min(int(levels), MaxLevels) {
		c.Names[k*c.Stride+m] = int32(hash[k])
	}
}

// arrange finds the groups of n nodes located as c says (D8 order) and
// D25's sequence of them, into seq (n ints). A group at level l is the
// nodes with one group above (the whole job above level 1) and one name
// at l (a location shorter than l is a group of its own there, "ended");
// its id is its lowest node index, -1 for a node without a location.
// Groups take the order of the group above them, then of their lowest
// index. Each level is one pass over the nodes in index order: a node's
// group is looked up in a table of the groups met so far (so a group is
// met first at its lowest index, and numbered in the order of those), and
// then the level's groups are put in order by a stable counting sort on
// their parents' places. The sequence is then the nodes in the order of
// their deepest group's place, in index order inside one (a counting
// sort), those without a location last. mem holds arrangeInts(n) ints. Cost: O(Depth * n), every pass over the nodes in index order; no
// decision depends on the table's order.
func arrange(c Compact, seq, mem []int32) (g Groups, unplaced int) {
	n := len(c.Levels)
	take := func(k int) []int32 { s := mem[:k:k]; mem = mem[k:]; return s }
	groups, table := take(MaxLevels*n), take(hashSlots(n))
	levels, names := c.Levels, c.Names
	for _, l := range levels {
		g.Depth = max(g.Depth, int(l))
		if l == 0 {
			unplaced++
		}
	}
	// place[m]: the place of node m's group at the level done last, among
	// that level's groups (0 for every node before level 1). bucket[m]:
	// its group's number at this level, in the order groups are met. For
	// each group number: first (its lowest node), parent (the place of
	// the group above), order (its place).
	place, bucket, first, parent, order, count := take(n), take(n), take(n), take(n), take(n), take(n+1)
	clear(place)
	places := int32(1) // places at the level done last
	for level := 1; level <= g.Depth; level++ {
		group := groups[(level-1)*n : level*n]
		here := names[(level-1)*c.Stride:][:n]
		name := func(m int32) (uint32, bool) { // this level's name, or ended
			if level > int(levels[m]) {
				return 0, true
			}
			return uint32(here[m]), false
		}
		hash := func(m int32) uint32 {
			nm, e := name(m)
			return (uint32(place[m])*0x9E3779B1 ^ nm ^ uint32(boolInt(e))<<31) * 0x85EBCA6B >> 7
		}
		// The table grows with the groups found (from 64 slots, at most
		// half full), so a level of few groups probes a table that stays
		// in the first-level cache.
		slots := min(64, len(table))
		clearTable := func() {
			for i := range table[:slots] {
				table[i] = -1
			}
		}
		clearTable()
		buckets := int32(0)
		for m := range int32(n) {
			if levels[m] == 0 {
				group[m] = -1
				continue
			}
			if 2*int(buckets+1) > slots && slots < len(table) { // grow, then place every group again
				slots *= 2
				clearTable()
				for b := range buckets {
					j := hash(first[b]) & uint32(slots-1)
					for table[j] >= 0 {
						j = (j + 1) & uint32(slots-1)
					}
					table[j] = b
				}
			}
			nm, e := name(m)
			mask := uint32(slots - 1)
			for j := hash(m) & mask; ; j = (j + 1) & mask {
				b := table[j]
				if b < 0 {
					table[j], first[buckets], parent[buckets] = buckets, m, place[m]
					b = buckets
					buckets++
				} else if f := first[b]; place[f] != place[m] {
					continue
				} else if nm2, e2 := name(f); nm2 != nm || e2 != e {
					continue
				}
				bucket[m], group[m] = b, first[b]
				break
			}
		}
		// The groups' places: by their parents' places, then by number
		// (their lowest index), a stable counting sort.
		clear(count[:places+1])
		for _, p := range parent[:buckets] {
			count[p+1]++
		}
		for p := int32(1); p <= places; p++ {
			count[p] += count[p-1]
		}
		for b, p := range parent[:buckets] {
			order[b] = count[p]
			count[p]++
		}
		for m := range int32(n) {
			if levels[m] > 0 {
				place[m] = order[bucket[m]]
			}
		}
		places = buckets
		g.Count[level-1] = int(buckets) + min(unplaced, 1)
		g.Group[level-1] = group
	}
	// The sequence: located nodes by their deepest place, in index order
	// inside one; then the others, in index order.
	clear(count[:places+1])
	for m := range int32(n) {
		if levels[m] > 0 {
			count[place[m]+1]++
		}
	}
	for p := int32(1); p <= places; p++ {
		count[p] += count[p-1]
	}
	tail := int(count[places])
	for m := range int32(n) {
		if levels[m] > 0 {
			seq[count[place[m]]] = m
			count[place[m]]++
		} else {
			seq[tail] = m
			tail++
		}
	}
	return g, unplaced
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Crossings counts, for each level 1..g.Depth, the edges of the cyclic node
// sequence seq (the wrap-around edge included) whose two nodes are in
// different groups at that level, and the number of groups at that level
// (nodes without a location are one group of their own). A sequence D25
// ordered has as many crossings as groups wherever there are two or more.
func Crossings(g Groups, seq []int32) (crossings, groups [MaxLevels]int) {
	n := len(seq)
	for level := range g.Depth {
		group := g.Group[level]
		none := false
		for i, m := range seq {
			if group[m] == m || (group[m] < 0 && !none) {
				groups[level]++
				none = none || group[m] < 0
			}
			if n > 1 && group[m] != group[seq[(i+1)%n]] {
				crossings[level]++
			}
		}
	}
	return crossings, groups
}
