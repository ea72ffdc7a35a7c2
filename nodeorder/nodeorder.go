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
}

// hashSlots is the size of NewGroups' table for n nodes: a power of two,
// at least twice n, so that a probe ends after a few slots.
func hashSlots(n int) int {
	s := 2
	for s < 2*n {
		s *= 2
	}
	return s
}

// NewGroups finds the groups of nodes located at locs (D8 order). The
// groups are taken from mem, which holds at least Depth*len(locs) ints
// (MaxLevels*len(locs) always suffices); work holds hashSlots(len(locs))
// ints. Either may be short, and is then allocated. Cost: O(Depth * n):
// each level looks a node's (parent group, name) up in a table of the
// first node that had it, visiting nodes in index order (so no decision
// depends on the table's order).
func NewGroups(locs []Location, mem, work []int32) Groups {
	n := len(locs)
	var g Groups
	for _, l := range locs {
		g.Depth = max(g.Depth, int(l.Levels))
	}
	if len(mem) < g.Depth*n {
		mem = make([]int32, g.Depth*n)
	}
	if len(work) < hashSlots(n) {
		work = make([]int32, hashSlots(n))
	}
	table := work[:hashSlots(n)]
	mask := uint32(len(table) - 1)
	for level := 1; level <= g.Depth; level++ {
		group := mem[(level-1)*n : level*n]
		parent := func(m int32) int32 { // the group one level up
			if level == 1 {
				return 0
			}
			return g.Group[level-2][m]
		}
		name := func(m int32) uint32 { // this level's name; 0 past its end (ended marks it)
			if level > int(locs[m].Levels) {
				return 0
			}
			return locs[m].Hash[level-1]
		}
		ended := func(m int32) bool { return level > int(locs[m].Levels) }
		for i := range table {
			table[i] = -1
		}
		for m := range int32(n) {
			if !locs[m].Found() {
				group[m] = -1
				continue
			}
			p, nm, e := parent(m), name(m), ended(m)
			h := (uint32(p)*0x9E3779B1 ^ nm ^ uint32(boolInt(e))<<31) * 0x85EBCA6B
			for i := h >> 7 & mask; ; i = (i + 1) & mask {
				f := table[i]
				if f < 0 {
					table[i], group[m] = m, m
					break
				}
				if parent(f) == p && name(f) == nm && ended(f) == e {
					group[m] = f
					break
				}
			}
		}
		g.Group[level-1] = group
	}
	return g
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
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

// Sequence writes the node sequence of D25 into seq (len(locs) entries):
// nodes grouped by location prefix, level by level from the top, every
// group contiguous, groups and the nodes inside a group in order of their
// lowest index; nodes without a location last, in index order. It returns
// how many nodes have no location. g is NewGroups(locs); work holds
// 2*len(locs)+2 ints, or is short and then allocated. Cost: O(Depth * n),
// one stable counting sort per level from the deepest up, keyed by the
// group (a node index; n for no location, so those come last).
func Sequence(locs []Location, g Groups, seq, work []int32) (unplaced int) {
	n := len(locs)
	seq = seq[:n]
	if len(work) < 2*n+2 {
		work = make([]int32, 2*n+2)
	}
	count, other := work[:n+2], work[n+2:][:n]
	for m := range seq {
		seq[m] = int32(m)
	}
	for level := g.Depth - 1; level >= 0; level-- {
		group := g.Group[level]
		key := func(m int32) int32 {
			if group[m] < 0 {
				return int32(n)
			}
			return group[m]
		}
		clear(count)
		for _, m := range seq {
			count[key(m)+1]++
		}
		for k := 1; k < len(count); k++ {
			count[k] += count[k-1]
		}
		for _, m := range seq {
			k := key(m)
			other[count[k]] = m
			count[k]++
		}
		copy(seq, other)
	}
	for _, l := range locs {
		if !l.Found() {
			unplaced++
		}
	}
	return unplaced
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
