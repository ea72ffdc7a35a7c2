package plan_test

import (
	"os"
	"path/filepath"
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
	} {
		path := filepath.Join(dir, "graph.xml")
		require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
		_, err := plan.ReadGraphFile(path)
		if assert.Error(t, err, body) {
			assert.Contains(t, err.Error(), path+": "+want, body)
		}
	}
}
