package layout_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/internal/cputime"
	"github.com/nccomring/libnccomring/layout"
)

// What `nccom-abi profile` prints for a build with rank and nRanks 4 bytes
// lower than D3.
const movedProfile = `{"ncclComm": {"topo": 17552, "rank": 17612, "nRanks": 17616, "node": 17640, "nNodes": 17644, "nChannels": 17704},
	"sizeof": {"ncclComm": 19224}, "source": "/opt/lib/libnccom.so.2", "buildId": "9c00176c"}`

func TestParseProfileReadsNccomAbiProfile(t *testing.T) {
	p, err := layout.ParseProfile([]byte(movedProfile))
	require.NoError(t, err)
	assert.Equal(t, layout.CommOffsets{Topo: 17552, Rank: 17612, NRanks: 17616, Node: 17640, NNodes: 17644, NChannels: 17704}, p.Comm)
	assert.Equal(t, 19224, p.CommSize)
	assert.Equal(t, "9c00176c", p.BuildID)
	assert.Equal(t, "/opt/lib/libnccom.so.2", p.Source)
	assert.NotEqual(t, layout.D3Offsets, p.Comm)
	assert.NoError(t, layout.D3Offsets.Validate())
}

func profile(offsets, sizeof string) string {
	return fmt.Sprintf(`{"ncclComm": {%s}, "sizeof": %s, "buildId": ""}`, offsets, sizeof)
}

// comm is the members of a valid profile's ncclComm object, in this order,
// but for the changes: name, value pairs, where "" drops the member and a
// name not there is added last.
func comm(changes ...string) string {
	names := []string{"topo", "rank", "nRanks", "node", "nNodes", "nChannels"}
	values := map[string]string{"topo": "17552", "rank": "17616", "nRanks": "17620", "node": "17640", "nNodes": "17644", "nChannels": "17704"}
	for i := 0; i+1 < len(changes); i += 2 {
		if _, ok := values[changes[i]]; !ok {
			names = append(names, changes[i])
		}
		values[changes[i]] = changes[i+1]
	}
	var members []string
	for _, name := range names {
		if v := values[name]; v != "" {
			members = append(members, fmt.Sprintf("%q: %s", name, v))
		}
	}
	return strings.Join(members, ", ")
}

func TestParseProfileRefusesBadFiles(t *testing.T) {
	const size = `{"ncclComm": 19216}`
	for _, tc := range []struct{ name, json, err string }{
		{"not JSON", `rank=1`, "not a layout profile: invalid character 'r' looking for beginning of value"},
		{"no ncclComm", `{"source": "x"}`, `no "ncclComm" object`},
		{"a field missing", profile(comm("nChannels", ""), size), "ncclComm.nChannels is missing"},
		{"an unknown field", profile(comm("localRanks", "17648"), size), `ncclComm: json: unknown field "localRanks"`},
		{"negative", profile(comm("rank", "-8"), size), "ncclComm.rank at +-8 is outside [0, 19216), the sizeof(ncclComm) as the profile declares it"},
		{"misaligned", profile(comm("topo", "17556"), size), "ncclComm.topo at +17556 is not aligned to its 8 bytes"},
		{"on a documented field", profile(comm("rank", "17648"), size), "ncclComm.rank at +17648 overlaps the documented ncclComm.localRanks (+17648, 4 bytes), which no profile can move"},
		{"inside channels", profile(comm("rank", "100"), size), "ncclComm.rank at +100 overlaps the documented ncclComm.channels (+0, 16384 bytes), which no profile can move"},
		{"two on one int", profile(comm("nRanks", "17616"), size), "ncclComm.nRanks at +17616 overlaps ncclComm.rank at +17616"},
		// Issue 21: Validate overflowed at 2^63-4 and took it.
		{"2^63-4", profile(comm("rank", "9223372036854775804"), size), "ncclComm.rank at +9223372036854775804 is outside [0, 19216), the sizeof(ncclComm) as the profile declares it"},
		{"past its own sizeof", profile(comm("nChannels", "19216"), size), "ncclComm.nChannels at +19216 is outside [0, 19216), the sizeof(ncclComm) as the profile declares it"},
		{"no sizeof", fmt.Sprintf(`{"ncclComm": {%s}}`, comm()), `no "sizeof" object: the profile must say the build's sizeof(ncclComm) (profiles from before issue 21 do not)`},
		{"sizeof below the prefix", profile(comm(), `{"ncclComm": 4096}`), "sizeof.ncclComm 4096 is outside [19212, 1048576]: the documented prefix (D3) and the bound on any ncclComm"},
		{"sizeof huge", profile(comm(), `{"ncclComm": 9223372036854775807}`), "sizeof.ncclComm 9223372036854775807 is outside [19212, 1048576]: the documented prefix (D3) and the bound on any ncclComm"},
		{"sizeof of another struct", profile(comm(), `{"ncclComm": 19216, "ncclRing": 24}`), `sizeof: json: unknown field "ncclRing"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := layout.ParseProfile([]byte(tc.json))
			require.EqualError(t, err, tc.err)
		})
	}
	// Validate without a declared size bounds at MaxCommOffset, overflow-safe.
	o := layout.D3Offsets
	o.Rank = 1<<63 - 4
	require.EqualError(t, o.Validate(), "ncclComm.rank at +9223372036854775804 is outside [0, 1048576)")
}

// The profile file may be another user's: no link followed, no wait on a
// FIFO, no device, no unbounded read.
func TestReadProfileRefusesHostileFiles(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "layout.json")
	require.NoError(t, os.WriteFile(good, []byte(movedProfile), 0o644))
	p, err := layout.ReadProfile(good)
	require.NoError(t, err)
	assert.Equal(t, 17612, p.Comm.Rank)

	link := filepath.Join(dir, "link.json")
	require.NoError(t, os.Symlink(good, link))
	fifo := filepath.Join(dir, "fifo.json")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	big := filepath.Join(dir, "big.json")
	require.NoError(t, os.WriteFile(big, []byte(strings.Repeat(" ", layout.MaxProfileSize)+movedProfile), 0o644))

	for _, tc := range []struct{ name, path, err string }{
		{"a symbolic link", link, "it is a symbolic link, which is not followed (a profile must be a regular file, named by its own path)"},
		{"a FIFO", fifo, "it is a FIFO, not a regular file"},
		{"/dev/zero", "/dev/zero", "it is a character device, not a regular file"},
		{"a directory", dir, "it is a directory, not a regular file"},
		{"too big", big, fmt.Sprintf("it has %d bytes, more than the 65536 a layout profile may have", layout.MaxProfileSize+len(movedProfile))},
		{"missing", filepath.Join(dir, "none.json"), "open " + filepath.Join(dir, "none.json") + ": no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A wait (on the FIFO) would not return at all: the watchdog
			// around go test ends it. What a read can do is work (/dev/zero
			// read to its end), so the bound is on CPU time, not the wall
			// clock, which would time the machine too (issue 32).
			start := cputime.Process()
			_, err := layout.ReadProfile(tc.path)
			require.EqualError(t, err, tc.err)
			assert.Less(t, cputime.Process()-start, 5*time.Second, "never read to its end")
		})
	}
}

// A profile may place its fields only inside the ncclComm the host is
// known to have (issue 34, F4): its own declared sizeof widens nothing.
// Issue 34's profile declares 1 MiB and puts node, nNodes and nChannels in
// the 12 bytes after a 19,216-byte ncclComm.
func TestProfileInsideTheHostsStruct(t *testing.T) {
	const known = "ncclComm that every host allocates (D3)"
	p, err := layout.ParseProfile([]byte(profile(`"topo": 17552, "rank": 17616, "nRanks": 17620, "node": 19216, "nNodes": 19220, "nChannels": 19224`, `{"ncclComm": 1048576}`)))
	require.NoError(t, err, "valid against its own sizeof")
	assert.EqualError(t, p.Inside(layout.CommMinSize, false, known),
		"ncclComm.node at +19216 (4 bytes) ends past the 19212 bytes of ncclComm that every host allocates (D3)")
	// The mapped build's DWARF gives the size: its sizeof first, then the fields.
	assert.EqualError(t, p.Inside(19224, true, "ncclComm in the DWARF of L"),
		"sizeof.ncclComm 1048576 is more than the 19224 bytes of ncclComm in the DWARF of L")
	assert.NoError(t, p.Inside(1<<20, true, "ncclComm in the DWARF of L"), "a build that large takes it")
	p.CommSize = 19224
	assert.EqualError(t, p.Inside(19224, true, "ncclComm in the DWARF of L"),
		"ncclComm.nChannels at +19224 (4 bytes) ends past the 19224 bytes of ncclComm in the DWARF of L")

	// The 8-byte topo past the end.
	p, err = layout.ParseProfile([]byte(profile(`"topo": 19216, "rank": 17616, "nRanks": 17620, "node": 17640, "nNodes": 17644, "nChannels": 17704`, `{"ncclComm": 1048576}`)))
	require.NoError(t, err)
	assert.EqualError(t, p.Inside(layout.CommMinSize, false, known), "ncclComm.topo at +19216 (8 bytes) ends past the 19212 bytes of ncclComm that every host allocates (D3)")

	// nccom-abi's own profile of a build with a larger ncclComm: its fields
	// inside, its declared size (19224) unchecked without the build's DWARF.
	p, err = layout.ParseProfile([]byte(movedProfile))
	require.NoError(t, err)
	assert.NoError(t, p.Inside(layout.CommMinSize, false, known))
	assert.NoError(t, p.Inside(19224, true, "ncclComm in the DWARF of L"))
	assert.NoError(t, layout.Profile{Comm: layout.D3Offsets, CommSize: layout.CommSize}.Inside(layout.CommMinSize, false, known))
}
