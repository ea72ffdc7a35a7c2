package abicheck

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests need no fixture: they run on a plain `go test ./...`. (They
// came here from cmd/nccom-abi with the code they test.)

func TestSplitIndices(t *testing.T) {
	name, idx, err := splitIndices("nodes[0][12]")
	require.NoError(t, err)
	assert.Equal(t, "nodes", name)
	assert.Equal(t, []int64{0, 12}, idx)

	name, idx, err = splitIndices("rank")
	require.NoError(t, err)
	assert.Equal(t, "rank", name)
	assert.Empty(t, idx)

	for _, bad := range []string{"[0]", "nodes[", "nodes[x]", "nodes[-1]", "nodes[0]x"} {
		_, _, err := splitIndices(bad)
		assert.Error(t, err, bad)
	}
}

func TestFindBuildIDNote(t *testing.T) {
	var note bytes.Buffer
	put := func(v uint32) { _ = binary.Write(&note, binary.LittleEndian, v) }
	// An ABI tag note first (type 1, 16-byte descriptor), then the build ID.
	put(4)
	put(16)
	put(1)
	note.WriteString("GNU\x00")
	note.Write(make([]byte, 16))
	put(4)
	put(3)
	put(ntGNUBuildID)
	note.WriteString("GNU\x00")
	note.Write([]byte{0xab, 0xcd, 0xef, 0}) // 3 bytes padded to 4

	id, ok := findBuildIDNote(note.Bytes(), binary.LittleEndian)
	require.True(t, ok)
	assert.Equal(t, "abcdef", id)

	_, ok = findBuildIDNote(note.Bytes()[:30], binary.LittleEndian)
	assert.False(t, ok, "a truncated note is no build ID")
}
