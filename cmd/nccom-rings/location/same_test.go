package location_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/location"
	"github.com/nccomring/libnccomring/nodeorder"
)

// The two fixtures describe one cluster of 8 hosts under 2 leaves under
// one spine: EC2 names it by instance ids and three layers of network
// nodes, Slurm by node names and two levels of switches. The names differ;
// the node sequence D25 makes from them must not.
func TestEC2AndSlurmGiveTheSameNodeSequence(t *testing.T) {
	read := func(path string, parse func(string, []byte) (*location.Topology, error)) *location.Topology {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		topo, err := parse(path, data)
		require.NoError(t, err)
		return topo
	}
	ec2 := read("testdata/ec2-8.json", location.ParseEC2)
	slurm := read("testdata/topology-8.conf", location.ParseSlurm)

	// The launcher's rank order, hosts interleaved across the leaves.
	order := []int{3, 8, 1, 6, 5, 2, 7, 4}
	sequence := func(topo *location.Topology, name func(int) string) ([]int32, [nodeorder.MaxLevels]int, [nodeorder.MaxLevels]int) {
		locs := make([]nodeorder.Location, len(order))
		for m, k := range order {
			h, ok := topo.Lookup(name(k))
			require.True(t, ok, name(k))
			l, err := nodeorder.Parse(h.Location)
			require.NoError(t, err)
			locs[m] = l
		}
		a := nodeorder.ArrangeNodes(locs, nil)
		require.Zero(t, a.Unplaced)
		crossings, groups := nodeorder.Crossings(a.Groups, a.Sequence)
		return a.Sequence, crossings, groups
	}
	ec2Seq, ec2Cross, ec2Groups := sequence(ec2, func(k int) string { return fmt.Sprintf("i-0a1b2c3d4e5f6%04d", k) })
	slurmSeq, slurmCross, slurmGroups := sequence(slurm, func(k int) string { return fmt.Sprintf("trn%03d", k) })

	// Worked out by hand: nodes 0 2 4 6 hold hosts 3 1 5 7 (leaf 1), nodes
	// 1 3 5 7 hosts 8 6 2 4 (leaf 2); the leaf first seen comes first.
	assert.Equal(t, []int32{0, 2, 4, 6, 1, 3, 5, 7}, ec2Seq)
	assert.Equal(t, ec2Seq, slurmSeq)
	// The leaf level is EC2's third layer and Slurm's second: two groups,
	// crossed twice; every level above is one group, never crossed.
	assert.Equal(t, [nodeorder.MaxLevels]int{1, 1, 2}, ec2Groups)
	assert.Equal(t, [nodeorder.MaxLevels]int{0, 0, 2}, ec2Cross)
	assert.Equal(t, [nodeorder.MaxLevels]int{1, 2}, slurmGroups)
	assert.Equal(t, [nodeorder.MaxLevels]int{0, 2}, slurmCross)
}
