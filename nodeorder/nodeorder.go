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
func arrangeInts(n int) int { return MaxLevels*n + hashSlots(n) + 4*n + 1 }

// arrange finds the groups of nodes located at locs (D8 order) and D25's
// sequence of them, into seq (len(locs) ints), level by level from the
// top. Before level l, seq holds the nodes grouped by their prefixes above
// l, each group contiguous and in index order inside, and nodes without a
// location last. Level l looks each located node's (group above, name at
// l) up in a table, in seq's order, so a group is met first at its lowest
// index and groups are numbered in the order they are to take; a stable
// counting sort by that number then groups seq at level l too. A
// location shorter than l is a group of its own there ("ended"). The
// groups' ids are their lowest node indices; -1 for a node without a
// location. mem holds arrangeInts(len(locs)) ints. Cost: O(Depth * n); no
// decision depends on the table's order.
func arrange(locs []Location, seq, mem []int32) (g Groups, unplaced int) {
	n := len(locs)
	for _, l := range locs {
		g.Depth = max(g.Depth, int(l.Levels))
	}
	take := func(k int) []int32 { s := mem[:k:k]; mem = mem[k:]; return s }
	groups, table := take(MaxLevels*n), take(hashSlots(n))
	bucket, first, other, count := take(n), take(n), take(n), take(n+1)
	located := 0
	for m := range n { // located nodes in index order, then the others
		if locs[m].Found() {
			seq[located] = int32(m)
			located++
		}
	}
	unplaced = n - located
	for m, k := 0, located; m < n; m++ {
		if !locs[m].Found() {
			seq[k] = int32(m)
			k++
		}
	}
	for level := 1; level <= g.Depth; level++ {
		group := groups[(level-1)*n : level*n]
		var above []int32
		if level > 1 {
			above = g.Group[level-2]
		}
		// key is a located node's (group above, name here, ended here).
		key := func(m int32) (parent int32, name uint32, ended bool) {
			if above != nil {
				parent = above[m]
			}
			if level > int(locs[m].Levels) {
				return parent, 0, true
			}
			return parent, locs[m].Hash[level-1], false
		}
		// The table grows with the groups found (from 64 slots, at most
		// half full), so a level of few groups probes a table that stays
		// in the first-level cache.
		hash := func(m int32) uint32 {
			p, nm, e := key(m)
			return (uint32(p)*0x9E3779B1 ^ nm ^ uint32(boolInt(e))<<31) * 0x85EBCA6B >> 7
		}
		slots := min(64, len(table))
		clearTable := func() {
			for i := range table[:slots] {
				table[i] = -1
			}
		}
		clearTable()
		buckets := int32(0)
		for i, m := range seq[:located] {
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
			p, nm, e := key(m)
			mask := uint32(slots - 1)
			for j := hash(m) & mask; ; j = (j + 1) & mask {
				b := table[j]
				if b < 0 {
					table[j], first[buckets] = buckets, m
					b = buckets
					buckets++
				} else if p2, nm2, e2 := key(first[b]); p2 != p || nm2 != nm || e2 != e {
					continue
				}
				bucket[i], group[m] = b, first[b]
				break
			}
		}
		g.Count[level-1] = int(buckets) + min(unplaced, 1)
		clear(count[:buckets+1])
		for _, b := range bucket[:located] {
			count[b+1]++
		}
		for b := int32(1); b <= buckets; b++ {
			count[b] += count[b-1]
		}
		for i, m := range seq[:located] {
			other[count[bucket[i]]] = m
			count[bucket[i]]++
		}
		copy(seq, other[:located])
		for _, m := range seq[located:] {
			group[m] = -1
		}
		g.Group[level-1] = group
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
