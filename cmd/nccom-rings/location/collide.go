package location

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/nccomring/libnccomring/internal/quote"
	"github.com/nccomring/libnccomring/nodeorder"
)

// Collision is two different names at one level of the locations whose
// 32-bit hashes are equal (D28). The ranks carry only the hashes
// (nodeorder.Hash), so the library takes the two names for one: nodes
// under them form one group, where the network has two.
type Collision struct {
	Level int       `json:"level"` // 1 is the outermost name
	Hash  uint32    `json:"hash"`
	Names [2]string `json:"names"` // in byte order
}

// String is the one line a tool prints about c: both names, the level and
// the hash.
func (c Collision) String() string {
	return fmt.Sprintf("level %d: the names %s and %s share the hash 0x%08x, so the library takes them for one (D28: names travel as their 32-bit FNV-1a hashes); rename one",
		c.Level, quote.String(c.Names[0]), quote.String(c.Names[1]), c.Hash)
}

// Collisions is every pair of different names at one level of locations
// (nodeorder.Parse's form; a value that does not parse is skipped, as the
// library skips it) that share a hash, by level, then hash, then names: a
// name that collides with two others gives two pairs, with the first of the
// three (in byte order) in each. Cost: a sort of the distinct names.
func Collisions(locations []string) []Collision {
	type named struct {
		level int
		hash  uint32
		name  string
	}
	var all []named
	// Hosts share locations (a million hosts of one file, a few hundred
	// leaves): each distinct location is split once.
	seen := map[string]bool{}
	for _, l := range locations {
		if seen[l] {
			continue
		}
		seen[l] = true
		if _, err := nodeorder.Parse(l); err != nil {
			continue
		}
		for i, name := range strings.Split(l, "/") {
			all = append(all, named{i + 1, nodeorder.Hash(name), name})
		}
	}
	slices.SortFunc(all, func(a, b named) int {
		return cmp.Or(cmp.Compare(a.level, b.level), cmp.Compare(a.hash, b.hash), strings.Compare(a.name, b.name))
	})
	all = slices.Compact(all)
	var out []Collision
	for i := 1; i < len(all); i++ {
		first := i - 1 // the run's first name
		for first > 0 && all[first-1].level == all[i].level && all[first-1].hash == all[i].hash {
			first--
		}
		if a, b := all[first], all[i]; a.level == b.level && a.hash == b.hash {
			out = append(out, Collision{Level: b.level, Hash: b.hash, Names: [2]string{a.name, b.name}})
		}
	}
	return out
}
