package plan_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/plan"
)

// Rings (Postset on rank 0 only, for simulate) gives the job Run gives
// (Postset on every rank): the same nodes, rings, NICs, hosts and
// locations, in both orders, on D25's example.
func TestRingsIsRun(t *testing.T) {
	for _, network := range []bool{false, true} {
		full, err := plan.Run(d25(), network, nil)
		require.NoError(t, err)
		fast, err := plan.Rings(d25(), network)
		require.NoError(t, err)
		assert.Equal(t, full.Job, fast.Job, "network=%v", network)
		assert.Equal(t, full.NChannels, fast.NChannels)
		assert.Equal(t, full.Order, fast.Order)
	}
}

// Rings takes up to 65,536 ranks, Run 4,096.
func TestRingsLimit(t *testing.T) {
	cl := plan.Cluster{RanksPerNode: 256}
	for range 257 { // 65,792 ranks
		cl.Hosts = append(cl.Hosts, "h")
		cl.Locations = append(cl.Locations, "")
	}
	_, err := plan.Rings(cl, false)
	assert.ErrorContains(t, err, "more than the 65536 a plan runs")
}
