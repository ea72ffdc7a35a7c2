package layout_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/layout"
)

func TestParseProfileReadsNccomAbiProfile(t *testing.T) {
	// What `nccom-abi profile` prints for a build with rank and nRanks 4
	// bytes lower than D3.
	o, err := layout.ParseProfile([]byte(`{"ncclComm": {"topo": 17552, "rank": 17612, "nRanks": 17616, "node": 17640, "nNodes": 17644, "nChannels": 17704},
		"source": "/opt/lib/libnccom.so.2", "buildId": "9c00176c"}`))
	require.NoError(t, err)
	assert.Equal(t, layout.CommOffsets{Topo: 17552, Rank: 17612, NRanks: 17616, Node: 17640, NNodes: 17644, NChannels: 17704}, o)
	assert.NotEqual(t, layout.D3Offsets, o)
	assert.NoError(t, layout.D3Offsets.Validate())
}

func TestParseProfileRefusesBadFiles(t *testing.T) {
	for _, tc := range []struct{ name, json, err string }{
		{"not JSON", `rank=1`, "not a layout profile: invalid character 'r' looking for beginning of value"},
		{"no ncclComm", `{"source": "x"}`, `no "ncclComm" object`},
		{"a field missing", `{"ncclComm": {"topo": 17552, "rank": 17616, "nRanks": 17620, "node": 17640, "nNodes": 17644}}`,
			"ncclComm.nChannels is missing"},
		{"an unknown field", `{"ncclComm": {"topo": 17552, "rank": 17616, "nRanks": 17620, "node": 17640, "nNodes": 17644, "nChannels": 17704, "localRanks": 17648}}`,
			`ncclComm: json: unknown field "localRanks"`},
		{"negative", `{"ncclComm": {"topo": 17552, "rank": -8, "nRanks": 17620, "node": 17640, "nNodes": 17644, "nChannels": 17704}}`,
			"ncclComm.rank at +-8 is outside [0, 1048576)"},
		{"misaligned", `{"ncclComm": {"topo": 17556, "rank": 17616, "nRanks": 17620, "node": 17640, "nNodes": 17644, "nChannels": 17704}}`,
			"ncclComm.topo at +17556 is not aligned to its 8 bytes"},
		{"on a documented field", `{"ncclComm": {"topo": 17552, "rank": 17648, "nRanks": 17620, "node": 17640, "nNodes": 17644, "nChannels": 17704}}`,
			"ncclComm.rank at +17648 overlaps the documented ncclComm.localRanks (+17648, 4 bytes), which no profile can move"},
		{"inside channels", `{"ncclComm": {"topo": 17552, "rank": 100, "nRanks": 17620, "node": 17640, "nNodes": 17644, "nChannels": 17704}}`,
			"ncclComm.rank at +100 overlaps the documented ncclComm.channels (+0, 16384 bytes), which no profile can move"},
		{"two on one int", `{"ncclComm": {"topo": 17552, "rank": 17616, "nRanks": 17616, "node": 17640, "nNodes": 17644, "nChannels": 17704}}`,
			"ncclComm.nRanks at +17616 overlaps ncclComm.rank at +17616"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := layout.ParseProfile([]byte(tc.json))
			require.EqualError(t, err, tc.err)
		})
	}
}
