package location_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/location"
	"github.com/nccomring/libnccomring/nodeorder"
)

// A real collision of 32-bit FNV-1a, found by a search over leafN names
// (the first repeat of a hash among leaf0, leaf1, ...).
const collideA, collideB, collideHash = "leaf13298", "leaf302080", uint32(0xf738b38c)

func TestTheCollidingPairCollides(t *testing.T) {
	require.NotEqual(t, collideA, collideB)
	assert.Equal(t, collideHash, nodeorder.Hash(collideA))
	assert.Equal(t, collideHash, nodeorder.Hash(collideB))
}

func TestCollisionsNameBothNamesTheLevelAndTheHash(t *testing.T) {
	want := location.Collision{Level: 2, Hash: collideHash, Names: [2]string{collideA, collideB}}
	// Twice each, in either order, among names that do not collide, and
	// a value that does not parse (skipped, as the library skips it).
	got := location.Collisions([]string{
		"s0/" + collideB, "s0/" + collideA, "s1/" + collideA, "s1/" + collideB + "/x", "", "bad name/" + collideA, "s0/leaf1",
	})
	assert.Equal(t, []location.Collision{want}, got)
	assert.Equal(t, `level 2: the names "leaf13298" and "leaf302080" share the hash 0xf738b38c, so the library takes them for one (D28: names travel as their 32-bit FNV-1a hashes); rename one`,
		want.String())

	// At different levels they do not collide: each level is its own.
	assert.Empty(t, location.Collisions([]string{collideA, "s0/" + collideB}))
	// At level 1, and in a location of its own.
	assert.Equal(t, []location.Collision{{Level: 1, Hash: collideHash, Names: [2]string{collideA, collideB}}},
		location.Collisions([]string{collideB + "/x", collideA}))
	assert.Empty(t, location.Collisions(nil))
}
