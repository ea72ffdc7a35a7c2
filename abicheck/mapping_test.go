package abicheck

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/nccomring/libnccomring/internal/abifixture"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A /proc/self/maps line is read for its device and inode, whatever path
// follows them; a line longer than any buffer is skipped, not a failure.
func TestMappingAt(t *testing.T) {
	long := "/" + strings.Repeat("d", 9000) + "/libx.so"
	maps := strings.Join([]string{
		"7f0000000000-7f0000001000 r--p 00000000 fd:01 11 " + long,
		"7f0000001000-7f0000003000 r-xp 00001000 103:0a 4242 /opt/lib/libnccom.so.2 (deleted)",
		"7f0000003000-7f0000004000 rw-p 00000000 00:00 0 ",
		"7ffff000-7ffff100 r--p 00000000 00:1b 77",
	}, "\n")
	for _, c := range []struct {
		addr uint64
		want FileID
		ok   bool
	}{
		{0x7f0000000800, FileID{0xfd, 1, 11}, true},
		{0x7f0000001000, FileID{0x103, 0xa, 4242}, true},
		{0x7f0000002fff, FileID{0x103, 0xa, 4242}, true},
		{0x7f0000003000, FileID{}, false}, // anonymous: no file
		{0x7ffff0ff, FileID{0, 0x1b, 77}, true},
		{0x7ffff100, FileID{}, false},
	} {
		got, ok, err := mappingAt(strings.NewReader(maps), c.addr)
		require.NoError(t, err)
		assert.Equal(t, c.ok, ok, "%#x", c.addr)
		assert.Equal(t, c.want, got, "%#x", c.addr)
	}
}

// withMaps makes /proc/self/maps read text (or fail with err) and the
// overlay test answer overlay, for the length of the test.
func withMaps(t *testing.T, text string, err error, overlay bool) {
	t.Helper()
	oldMaps, oldOverlay := procSelfMaps, onOverlay
	t.Cleanup(func() { procSelfMaps, onOverlay = oldMaps, oldOverlay })
	procSelfMaps = func() (io.ReadCloser, error) {
		if err != nil {
			return nil, err
		}
		return io.NopCloser(strings.NewReader(text)), nil
	}
	onOverlay = func(*os.File) bool { return overlay }
}

// The file opened at the mapped library's path is read only when it is the
// file mapped (issue 34, F5): its device and inode those of the mapping.
// Where the numbers cannot be compared, the build ID vouches alone and the
// check says it is weaker; another file put at the path is refused even
// with the mapped build ID.
func TestReadMappedReadsOnlyTheFileMapped(t *testing.T) {
	path := abifixture.Path(t, "selfcheck/match/libnccom.so.2")
	lib, err := Open(path)
	require.NoError(t, err)
	id, err := openedID(lib.file)
	require.NoError(t, err)
	buildID := lib.BuildID()
	lib.Close()
	const addr = 0x7f1234560000
	obj := MappedObject{Path: path, SONAME: LibnccomSONAME, SONAMEKnown: true, BuildID: buildID, Addr: addr}
	line := func(major, minor uint32, inode uint64) string {
		return fmt.Sprintf("7f1234560000-7f1234561000 r--p 00000000 %02x:%02x %d %s\n", major, minor, inode, path)
	}
	read := func() MappedStructs { return ReadMapped(context.Background(), []MappedObject{obj}) }

	withMaps(t, line(id.Major, id.Minor, id.Inode), nil, false)
	m := read()
	require.NotNil(t, m.Defs, m.Why)
	assert.Empty(t, m.Weaker)
	size, ok := m.CommSize()
	assert.True(t, ok)
	assert.Equal(t, 19224, size, "the stand-in's sizeof(ncclComm)")

	// Renamed over the path after load, with the mapped build ID.
	withMaps(t, line(id.Major, id.Minor, id.Inode+1), nil, false)
	m = read()
	assert.Nil(t, m.Defs, "another file's DWARF was read for the mapped library")
	assert.True(t, m.Warn)
	assert.Equal(t, fmt.Sprintf("the file at %s (%s) is not the file mapped (device %d:%d, inode %d), though it carries the mapped libnccom.so.2's build ID %s: another file was put at its path after it was loaded",
		path, id, id.Major, id.Minor, id.Inode+1, buildID), m.Why)
	sc := m.Check(movedOffsets, "D3")
	assert.Nil(t, sc.Report)
	assert.True(t, sc.Warn)

	// The same inode on another device: an overlay or btrfs filesystem.
	withMaps(t, line(id.Major+1, id.Minor, id.Inode), nil, false)
	m = read()
	require.NotNil(t, m.Defs)
	assert.Equal(t, fmt.Sprintf("the file opened has %s and the mapping device %d:%d, as an overlay or btrfs filesystem reports its own device: only the inode could be compared", id, id.Major+1, id.Minor), m.Weaker)
	assert.Equal(t, m.Weaker, m.Check(movedOffsets, "D3").Weaker)

	// Other numbers altogether, on an overlay filesystem.
	withMaps(t, line(id.Major+1, id.Minor, id.Inode+1), nil, true)
	m = read()
	require.NotNil(t, m.Defs)
	assert.Contains(t, m.Weaker, "is on an overlay filesystem, whose numbers the mapping's")

	// No /proc, no line, no address: weaker, not refused.
	withMaps(t, "", errors.New("no such file"), false)
	m = read()
	require.NotNil(t, m.Defs)
	assert.Equal(t, "/proc/self/maps cannot be read: no such file", m.Weaker)
	withMaps(t, "", nil, false)
	m = read()
	require.NotNil(t, m.Defs)
	assert.Equal(t, "/proc/self/maps has no file mapped at 0x7f1234560000, where it was loaded", m.Weaker)
	obj.Addr = 0
	m = read()
	require.NotNil(t, m.Defs)
	assert.Equal(t, "the loader gave no address of a segment of it mapped from its file", m.Weaker)
}
