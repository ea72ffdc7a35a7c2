package plan_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/plan"
)

func TestReadGraphFile(t *testing.T) {
	// testdata/graphs/03 (NVIDIA/nccl#524): the RING graph's two channels
	// both run gpu 0 1 2 3, entering on NIC 3 and leaving on NIC 0; the
	// tree graph after it is skipped.
	f, err := plan.ReadGraphFile("../../../testdata/graphs/03_nccl524_4gpu_4nic_graph.xml")
	require.NoError(t, err)
	assert.Equal(t, 4, f.LocalRanks)
	assert.Equal(t, 2, f.NChannels)
	assert.Equal(t, [][]int{{0, 1, 2, 3}, {0, 1, 2, 3}}, f.Order)
	assert.Equal(t, []int{3, 3}, f.NICIn)
	assert.Equal(t, []int{0, 0}, f.NICOut)
	g := f.Graph(8)
	assert.Equal(t, int32(2), g.NChannels)
	assert.Equal(t, []int32{8, 9, 10, 11, 8, 9, 10, 11}, g.Intra[:8])
	assert.Equal(t, []int32{3, 0, 3, 0, -1}, g.Inter[:5])

	// testdata/graphs/01 (Azure NCv4): 0123 and 0321, no NICs.
	f, err = plan.ReadGraphFile("../../../testdata/graphs/01_azure_ncv4_graph.xml")
	require.NoError(t, err)
	assert.Equal(t, [][]int{{0, 1, 2, 3}, {0, 3, 2, 1}}, f.Order)
	assert.Equal(t, []int{-1, -1}, f.NICIn)
}

func TestReadGraphFileRefuses(t *testing.T) {
	dir := t.TempDir()
	for body, want := range map[string]string{
		`<graphs><graph pattern="3" nchannels="1"><channel><gpu dev="0"/></channel></graph></graphs>`:                                                              `no <graphs><graph pattern="4"> (RING) element`,
		`<graphs><graph pattern="4" nchannels="x"></graph></graphs>`:                                                                                               "the RING graph has no integer nchannels attribute",
		`<graphs><graph pattern="4" nchannels="2"><channel><gpu dev="0"/></channel></graph></graphs>`:                                                              `nchannels="2" but 1 <channel> elements`,
		`<graphs><graph pattern="4" nchannels="1"><channel><net dev="1"/></channel></graph></graphs>`:                                                              "channel 0 lists no <gpu>",
		`<graphs><graph pattern="4" nchannels="1"><channel><gpu dev="a"/></channel></graph></graphs>`:                                                              "channel 0 has a <gpu> without an integer dev",
		`<graphs><graph pattern="4" nchannels="1"><channel><gpu dev="1"/><gpu dev="1"/></channel></graph></graphs>`:                                                "channel 0 lists gpu dev 1 twice",
		`<graphs><graph pattern="4" nchannels="2"><channel><gpu dev="0"/><gpu dev="1"/></channel><channel><gpu dev="0"/><gpu dev="2"/></channel></graph></graphs>`: "channel 1 uses gpu dev 2, which channel 0 does not",
		`<graphs><graph pattern="4" nchannels="2"><channel><gpu dev="0"/><gpu dev="1"/></channel><channel><gpu dev="0"/></channel></graph></graphs>`:               "channel 1 lists 1 <gpu>, channel 0 lists 2",
		`<graphs><graph`: "not an NCCL graph file",
		// Refused as ringstage refuses them: libxml2 reads the whole
		// document first, so a document not well formed after the RING
		// graph is that, not the RING graph's own error.
		`<graphs><graph pattern="4" nchannels="1"><channel><gpu dev="a"/></channel></graph><graph></graphs>`: "not an NCCL graph file: XML syntax error on line 1: element <graph> closed by </graphs>",
		`<graphs><graph pattern="4" nchannels="1"><channel><gpu dev="0"/></channel></graph><x>`:              "not an NCCL graph file: XML syntax error on line 1: unexpected EOF",
		`<other/>`: "not an NCCL graph file: expected element type <graphs> but have <other>",
		``:         "not an NCCL graph file: EOF",
		// The first error in document order, as ringstage's loop meets it.
		`<graphs><graph pattern="4" nchannels="3"><channel><gpu dev="a"/></channel></graph></graphs>`:                                "channel 0 has a <gpu> without an integer dev",
		`<graphs><graph pattern="4" nchannels="1"><channel>` + strings.Repeat(`<gpu dev="1"/>`, 257) + `</channel></graph></graphs>`: "channel 0 lists more than 256 <gpu>",
		`<graphs><graph pattern="4" nchannels="33">` + strings.Repeat(`<channel><gpu dev="0"/></channel>`, 33) + `</graph></graphs>`: "more than 32 <channel> elements",
		// Nesting is bounded: 256 levels (about libxml2's own limit).
		`<graphs>` + strings.Repeat("<a>", 256) + strings.Repeat("</a>", 256) + `</graphs>`: "1:774: not an NCCL graph file: elements nested more than 256 deep",
	} {
		path := filepath.Join(dir, "graph.xml")
		require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
		_, err := plan.ReadGraphFile(path)
		if assert.Error(t, err, body) {
			if strings.HasPrefix(want, "1:") {
				assert.Equal(t, path+":"+want, err.Error())
			} else {
				assert.Contains(t, err.Error(), path+": "+want, body)
			}
		}
	}
}

// The RING graph is found past what the reader skips, elements nested up
// to 256 deep, with the first of two pattern="4" graphs taken.
func TestReadGraphFileSkips(t *testing.T) {
	path := filepath.Join(t.TempDir(), "graph.xml")
	body := `<?xml version="1.0"?><!-- a comment --><graphs version="1">` +
		`<graph id="0" pattern="1" nchannels="1"><channel><gpu dev="9"/></channel></graph>` +
		strings.Repeat("<deep>", 255) + "text" + strings.Repeat("</deep>", 255) + // 256 deep with <graphs>
		`<graph id="1" pattern="4" nchannels="1"><other><channel><gpu dev="7"/></channel></other>` +
		`<channel><net dev="2"/><gpu dev="5"><x/></gpu><pad/><gpu dev="3"/><net dev="4"/><net dev="6"/></channel></graph>` +
		`<graph id="2" pattern="4" nchannels="1"><channel><gpu dev="0"/></channel></graph></graphs>`
	require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
	f, err := plan.ReadGraphFile(path)
	require.NoError(t, err)
	assert.Equal(t, 2, f.LocalRanks)
	assert.Equal(t, 1, f.NChannels)
	assert.Equal(t, [][]int{{1, 0}}, f.Order)
	assert.Equal(t, []int{2}, f.NICIn)
	assert.Equal(t, []int{6}, f.NICOut)
}

// A file over 64 MiB is refused from its size, before it is read.
func TestReadGraphFileRefusesAFileOver64MiB(t *testing.T) {
	path := filepath.Join(t.TempDir(), "graph.xml")
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(64<<20+1))
	require.NoError(t, f.Close())
	_, err = plan.ReadGraphFile(path)
	assert.EqualError(t, err, path+": has 67108865 bytes, more than the 64 MiB a file may have")
}
