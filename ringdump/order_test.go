package ringdump_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/nodeorder"
	"github.com/nccomring/libnccomring/ringdump"
)

// fnv1a is the 32-bit FNV-1a hash written out here, so that the dump's
// hashes are checked against an independent computation.
func fnv1a(s string) uint32 {
	h := uint32(0x811c9dc5)
	for _, c := range []byte(s) {
		h ^= uint32(c)
		h *= 0x01000193
	}
	return h
}

func TestOrderOf(t *testing.T) {
	sa := nodeorder.Location{Levels: 2}
	sa.Hash[0], sa.Hash[1] = fnv1a("s"), fnv1a("a")
	hashes := []uint32{fnv1a("s"), fnv1a("a")}

	// Nothing asked, no location: no order in the dump.
	assert.Nil(t, ringdump.OrderOf(ringdump.Own{Valid: true}, false, false, "", nil))
	// The environment alone says nothing: the record has no location.
	assert.Nil(t, ringdump.OrderOf(ringdump.Own{Valid: true, Env: "s/a"}, false, false, "", nil))
	// A location in the record, its name in the environment.
	assert.Equal(t, &ringdump.Order{Asked: "rank", Location: "s/a", LocationHashes: hashes, FromRecord: true},
		ringdump.OrderOf(ringdump.Own{Valid: true, Location: sa, Env: "s/a"}, false, false, "", nil))
	// The environment holds another location (one process, several
	// ranks), an invalid one, or none: the record's hashes, name unknown.
	for _, env := range []string{"s/b", "s/a/x", "bad name", ""} {
		assert.Equal(t, &ringdump.Order{Asked: "rank", LocationHashes: hashes, NameUnknown: true, FromRecord: true},
			ringdump.OrderOf(ringdump.Own{Valid: true, Location: sa, Env: env}, false, false, "", nil), env)
	}
	// Another rank asked; this one did not, so Postset fell back.
	assert.Equal(t, &ringdump.Order{Asked: "rank", Note: "fell back", FromRecord: true},
		ringdump.OrderOf(ringdump.Own{Valid: true}, true, false, "fell back", []int32{}))
	assert.Equal(t, &ringdump.Order{Asked: "network", Location: "s/a", LocationHashes: hashes, FromRecord: true, Network: true, Sequence: []int{0, 2, 1}},
		ringdump.OrderOf(ringdump.Own{Valid: true, Network: true, Location: sa, Env: "s/a"}, true, true, "", []int32{0, 2, 1}))
	// A rank without a valid record carries nothing, whatever its fields.
	assert.Equal(t, &ringdump.Order{Asked: "rank", Note: "n"},
		ringdump.OrderOf(ringdump.Own{Network: true, Location: sa, Env: "s/a"}, true, false, "n", nil))
	assert.Equal(t, []int{-1, 7}, ringdump.Ints([]int32{-1, 7}))
}

func TestPlaceReadsTheRecordsHashes(t *testing.T) {
	var want nodeorder.Location
	want.Levels, want.Hash[0], want.Hash[1] = 2, fnv1a("s"), fnv1a("a")
	// The hashes decide, whatever the name says.
	o := &ringdump.Order{FromRecord: true, Location: "t/b", LocationHashes: []uint32{fnv1a("s"), fnv1a("a")}}
	assert.Equal(t, want, o.Place())
	// A dump written before D28: its name, parsed.
	assert.Equal(t, want, (&ringdump.Order{Location: "s/a"}).Place())
	assert.Equal(t, nodeorder.Location{}, (&ringdump.Order{Location: "bad name"}).Place())
	assert.Equal(t, nodeorder.Location{}, (*ringdump.Order)(nil).Place())
	// More hashes than a location holds: its first MaxLevels.
	long := &ringdump.Order{FromRecord: true, LocationHashes: make([]uint32, nodeorder.MaxLevels+3)}
	assert.Equal(t, int32(nodeorder.MaxLevels), long.Place().Levels)

	// A round trip through the file keeps every field.
	d := &ringdump.Dump{Rank: 0, NRanks: 1, Wiring: &ringdump.Wiring{Order: o}}
	head, tail, err := ringdump.Encode(d)
	require.NoError(t, err)
	back, err := ringdump.Decode("x", append(head, tail...))
	require.NoError(t, err)
	assert.Equal(t, o, back.Order)
}
