package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/ringdump"
)

// docs/security.md, Wiring dumps: at most ringdump.MaxNetDevs (64)
// GetNetDev answers are kept for a rank, so a host that asks for ever
// more channels cannot grow the dump it keeps. A channel asked again
// replaces its answer and takes no new entry.
func TestADumpRecordsAtMost64NetDevs(t *testing.T) {
	require.Equal(t, 64, ringdump.MaxNetDevs)
	r := &rankDump{}
	for c := range ringdump.MaxNetDevs {
		require.True(t, r.setNetDev(c, c), "channel %d", c)
	}
	assert.False(t, r.setNetDev(ringdump.MaxNetDevs, 0), "a 65th channel was recorded")
	assert.False(t, r.setNetDev(1000, 0), "another channel was recorded")
	assert.Len(t, r.netDevs, ringdump.MaxNetDevs)
	assert.True(t, r.setNetDev(5, 7), "an answer for a channel already held")
	assert.Len(t, r.netDevs, ringdump.MaxNetDevs)
	assert.Equal(t, ringdump.NetDev{Channel: 5, Dev: 7}, r.netDevs[5])
}
