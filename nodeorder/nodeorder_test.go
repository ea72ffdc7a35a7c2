package nodeorder_test

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/nodeorder"
)

// locations parses one location per node ("" is none).
func locations(t *testing.T, values ...string) []nodeorder.Location {
	t.Helper()
	locs := make([]nodeorder.Location, len(values))
	for m, v := range values {
		if v == "" {
			continue
		}
		l, err := nodeorder.Parse(v)
		require.NoError(t, err, v)
		locs[m] = l
	}
	return locs
}

// sequence runs the package's order over locs.
func sequence(locs []nodeorder.Location) ([]int32, nodeorder.Groups, int) {
	a := nodeorder.ArrangeNodes(locs, nil)
	return a.Sequence, a.Groups, a.Unplaced
}

func TestHandComputedSequences(t *testing.T) {
	for _, tc := range []struct {
		name      string
		locs      []string
		seq       []int32
		unplaced  int
		crossings []int // per level
		groups    []int
	}{
		{"D25's example: 8 nodes alternating between two leaves", []string{"spine0/leafA", "spine0/leafB", "spine0/leafA", "spine0/leafB", "spine0/leafA", "spine0/leafB", "spine0/leafA", "spine0/leafB"},
			[]int32{0, 2, 4, 6, 1, 3, 5, 7}, 0, []int{0, 2}, []int{1, 2}},
		{"already grouped: D8's order", []string{"s0/l0", "s0/l0", "s0/l1", "s1/l0", "s1/l0", "s1/l2"},
			[]int32{0, 1, 2, 3, 4, 5}, 0, []int{2, 4}, []int{2, 4}},
		{"a leaf of the same name under two spines is two groups", []string{"s0/l1", "s1/l1", "s0/l1", "s1/l1"},
			[]int32{0, 2, 1, 3}, 0, []int{2, 2}, []int{2, 2}},
		{"a shorter path is a group of its own below its depth", []string{"s0/l1", "s0", "s0/l2", "s0/l1", "s0"},
			[]int32{0, 3, 1, 4, 2}, 0, []int{0, 3}, []int{1, 3}},
		{"groups in order of their lowest node", []string{"b/x", "a/y", "b/z", "a/y", "b/x"},
			[]int32{0, 4, 2, 1, 3}, 0, []int{2, 3}, []int{2, 3}},
		{"nodes without a location last, in D8 order", []string{"a", "", "b", "", "a"},
			[]int32{0, 4, 2, 1, 3}, 2, []int{3}, []int{3}},
		{"one node", []string{"x/y/z"}, []int32{0}, 0, []int{0, 0, 0}, []int{1, 1, 1}},
		{"three levels", []string{"r0/s1/l1", "r0/s0/l0", "r1/s0/l0", "r0/s1/l2", "r0/s0/l0", "r0/s1/l1"},
			[]int32{0, 5, 3, 1, 4, 2}, 0, []int{2, 3, 4}, []int{2, 3, 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seq, g, unplaced := sequence(locations(t, tc.locs...))
			assert.Equal(t, tc.seq, seq)
			assert.Equal(t, tc.unplaced, unplaced)
			crossings, groups := nodeorder.Crossings(g, seq)
			assert.Equal(t, tc.crossings, crossings[:g.Depth], "crossings per level")
			assert.Equal(t, tc.groups, groups[:g.Depth], "groups per level")
		})
	}
}

func TestParse(t *testing.T) {
	l, err := nodeorder.Parse("spine0/leaf-A.1:x_y")
	require.NoError(t, err)
	assert.EqualValues(t, 2, l.Levels)
	assert.Equal(t, nodeorder.Hash("spine0"), l.Hash[0])
	assert.Equal(t, nodeorder.Hash("leaf-A.1:x_y"), l.Hash[1])
	// FNV-1a of "a" and of "" (its offset basis), as published.
	assert.Equal(t, uint32(0xe40c292c), nodeorder.Hash("a"))
	assert.Equal(t, uint32(0x811c9dc5), nodeorder.Hash(""))
	eight := strings.Repeat("n/", 7) + "n"
	_, err = nodeorder.Parse(eight)
	assert.NoError(t, err)
	_, err = nodeorder.Parse(strings.Repeat("x", 64))
	assert.NoError(t, err)
	for value, want := range map[string]string{
		eight + "/n":            `has 9 names; at most 8`,
		"":                      `"": name 1 has 0 bytes; 1 to 64`,
		"a//b":                  `"a//b": name 2 has 0 bytes; 1 to 64`,
		"a/":                    `"a/": name 2 has 0 bytes; 1 to 64`,
		strings.Repeat("x", 65): `name 1 has 65 bytes; 1 to 64`,
		"spine 0":               `"spine 0": name 1 has " " at byte 6; only A-Z a-z 0-9 . _ : -`,
		"a/b\nNCCL WARN forged": `"a/b\nNCCL WARN forged": name 2 has "\n" at byte 2; only A-Z a-z 0-9 . _ : -`,
		"caf\xc3\xa9":           `"caf\xc3\xa9": name 1 has "\xc3" at byte 4; only A-Z a-z 0-9 . _ : -`,
	} {
		_, err := nodeorder.Parse(value)
		require.Error(t, err, "%q", value)
		assert.Contains(t, err.Error(), want, "%q", value)
	}
}

// model is an independent reading of D25's order: split the nodes (in D8
// order) by their name at this level, a node whose location has ended
// forming a group of its own, groups in order of first appearance; recurse
// into each group; nodes without a location after all.
func model(names [][]string) []int32 {
	var located, none []int32
	for m, n := range names {
		if len(n) == 0 {
			none = append(none, int32(m))
		} else {
			located = append(located, int32(m))
		}
	}
	var order func(nodes []int32, level int) []int32
	order = func(nodes []int32, level int) []int32 {
		var keys []string
		var members [][]int32
		for _, m := range nodes {
			key := "\x00ended"
			if level < len(names[m]) {
				key = names[m][level]
			}
			i := slices.Index(keys, key)
			if i < 0 {
				keys, members = append(keys, key), append(members, nil)
				i = len(keys) - 1
			}
			members[i] = append(members[i], m)
		}
		var out []int32
		for i, group := range members {
			if keys[i] == "\x00ended" || len(group) == 1 {
				out = append(out, group...)
			} else {
				out = append(out, order(group, level+1)...)
			}
		}
		return out
	}
	return append(order(located, 0), none...)
}

// randomTree places n nodes at the leaves (and some inner points) of a
// random tree of up to 8 levels with unequal depths, in a random order,
// some nodes without a location.
func randomTree(rng *rand.Rand, n int) [][]string {
	depth := 1 + rng.IntN(nodeorder.MaxLevels)
	fan := 1 + rng.IntN(4)
	names := make([][]string, n)
	for m := range names {
		if rng.IntN(20) == 0 {
			continue // no location
		}
		d := depth
		if rng.IntN(3) == 0 {
			d = 1 + rng.IntN(depth)
		}
		for level := range d {
			names[m] = append(names[m], fmt.Sprintf("l%dn%d", level, rng.IntN(fan)))
		}
	}
	return names
}

func TestSequenceMatchesModelOnRandomTrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 2026))
	for trial := range 400 {
		n := 1 + rng.IntN(64)
		if trial%20 == 0 {
			n = 1 + rng.IntN(2048)
		}
		names := randomTree(rng, n)
		locs := make([]nodeorder.Location, n)
		for m, path := range names {
			if len(path) > 0 {
				l, err := nodeorder.Parse(strings.Join(path, "/"))
				require.NoError(t, err)
				locs[m] = l
			}
		}
		seq, g, unplaced := sequence(locs)
		want := model(names)
		require.Equal(t, want, seq, "trial %d: %v", trial, names)

		// Every level's crossings are the fewest a cycle can have: as many
		// as groups at that level (when two or more), counting the nodes
		// without a location, which come last, as one group.
		crossings, groups := nodeorder.Crossings(g, seq)
		for level := range g.Depth {
			wantCrossings := groups[level]
			if groups[level] == 1 {
				wantCrossings = 0
			}
			require.Equal(t, wantCrossings, crossings[level], "trial %d level %d: %v", trial, level+1, names)
			require.Equal(t, groups[level], g.Count[level], "trial %d level %d: the groups arrange counted", trial, level+1)
		}
		// An order that is already grouped comes back unchanged: renumber
		// the nodes in sequence order and order them again.
		regrouped := make([]nodeorder.Location, n)
		for i, m := range seq {
			regrouped[i] = locs[m]
		}
		again, _, unplacedAgain := sequence(regrouped)
		for i, m := range again {
			require.EqualValues(t, i, m, "trial %d: a grouped order was reordered: %v", trial, again)
		}
		require.Equal(t, unplaced, unplacedAgain)
	}
}

// Every byte value as a one-byte name: exactly the 66 characters
// docs/environment.md lists are accepted, the range ends included ('A' and 'Z', 'a' and
// 'z', '0' and '9'), and their neighbours ('@', '[', '`', '{', ';', ...)
// refused. '/' separates names, so it is the one byte not tried.
func TestParseAcceptsExactlyTheNameCharacters(t *testing.T) {
	const allowed = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:-"
	for b := range 256 {
		if b == '/' {
			continue
		}
		name := string([]byte{byte(b)})
		l, err := nodeorder.Parse(name)
		if strings.IndexByte(allowed, byte(b)) >= 0 {
			require.NoError(t, err, "byte %#x", b)
			assert.Equal(t, nodeorder.Location{Levels: 1, Hash: [8]uint32{nodeorder.Hash(name)}}, l)
		} else {
			require.Error(t, err, "byte %#x", b)
			assert.Contains(t, err.Error(), "at byte 1; only A-Z a-z 0-9 . _ : -", "byte %#x", b)
		}
	}
}

// A location that has ended at a level is a group of its own there, apart
// from every name, even one whose hash is 0, 1 or 0xffffffff (names travel
// as their 32-bit hash; the mark for "ended" must be no hash at all). The
// names below were found by a meet-in-the-middle search; the standard
// library's FNV-1a confirms their hashes. Node 2 ("s0") ends at level 2
// and must not join node 0's group whatever node 0's name there hashes
// to: the sequence keeps D8's order and level 2 has three groups.
func TestAnEndedLocationIsNoName(t *testing.T) {
	for _, tc := range []struct {
		name string
		hash uint32
	}{{"BR42qf", 0}, {"5G17qk", 1}, {"-rdXSf", 0xffffffff}} {
		h := fnv.New32a()
		h.Write([]byte(tc.name))
		require.Equal(t, tc.hash, h.Sum32(), tc.name)
		require.Equal(t, tc.hash, nodeorder.Hash(tc.name), tc.name)

		locs := locations(t, "s0/"+tc.name, "s0/x", "s0")
		seq, g, unplaced := sequence(locs)
		assert.Equal(t, []int32{0, 1, 2}, seq, tc.name)
		assert.Zero(t, unplaced)
		assert.Equal(t, []int32{0, 1, 2}, g.Group[1], "level 2: each node a group of its own")
		crossings, groups := nodeorder.Crossings(g, seq)
		assert.Equal(t, [8]int{0, 3}, crossings)
		assert.Equal(t, [8]int{1, 3}, groups)
	}
}
