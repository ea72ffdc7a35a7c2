package ab

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/simulate"
)

// synthetic is 5 runs of A and 5 of B of tool, each one row of size 1 GiB
// with the given bus bandwidths, repeats 1..5, interleaved as the script
// runs them.
func synthetic(tool string, a, b []float64) []Run {
	var runs []Run
	for i := range a {
		runs = append(runs,
			Run{File: RunFile("A", i+1, tool), Variant: "A", Repeat: i + 1, Output: &Output{Tool: tool, Rows: []Row{{Bytes: 1 << 30, BusBW: a[i]}}}},
			Run{File: RunFile("B", i+1, tool), Variant: "B", Repeat: i + 1, Output: &Output{Tool: tool, Rows: []Row{{Bytes: 1 << 30, BusBW: b[i]}}}})
	}
	return runs
}

func TestCompareSyntheticByHand(t *testing.T) {
	b := []float64{14, 15.5, 13.5, 16, 14.5} // median 14.5, 13.5-16; A: median 11, 9-13
	tools, measurable := Compare(synthetic(NCCLTests, fiveA, b), 32, nil)
	require.Len(t, tools, 1)
	assert.Equal(t, 1, measurable)
	tr := tools[0]
	assert.Equal(t, []any{NCCLTests, "GB/s", "out-of-place busbw", 5, 5}, []any{tr.Tool, tr.Unit, tr.Metric, tr.RunsA, tr.RunsB})
	require.Len(t, tr.Sizes, 1)
	s := tr.Sizes[0]
	assert.Equal(t, Spread{Runs: 5, Median: 11, Min: 9, Max: 13, Values: fiveA}, s.A)
	assert.Equal(t, Spread{Runs: 5, Median: 14.5, Min: 13.5, Max: 16, Values: b}, s.B)
	assert.Equal(t, BFaster, s.Verdict)
	assert.InDelta(t, 14.5/11, s.Ratio, 1e-12)
	assert.Equal(t, []any{"ring or tree (NCCL's choice)", "likely"}, []any{s.Algorithm, s.AlgorithmSource})

	var out bytes.Buffer
	WriteText(&out, tools)
	assert.Equal(t, `nccl-tests: 5 runs of A, 5 of B; out-of-place busbw in GB/s, median (min-max) of the runs
SIZE   A                   B                    B/A    VERDICT   ALGORITHM
1 GiB  11.00 (9.00-13.00)  14.50 (13.50-16.00)  1.318  B faster  likely ring or tree (NCCL's choice)
`, out.String())

	// B's runs shifted down to overlap A's: no measurable difference, no finding.
	tools, measurable = Compare(synthetic(NccomTest, fiveA, []float64{12.5, 14, 15, 13, 14.5}), 1, nil)
	assert.Equal(t, 0, measurable)
	assert.Equal(t, NoDifference, tools[0].Sizes[0].Verdict)
	assert.Equal(t, []any{"ring", "likely"}, []any{tools[0].Sizes[0].Algorithm, tools[0].Sizes[0].AlgorithmSource})
}

func TestCompareAgainstPredictions(t *testing.T) {
	b := []float64{14, 15.5, 13.5, 16, 14.5} // B/A from 13.5/13 = 1.038 to 16/9 = 1.778
	pred := &Predictions{Predictions: []simulate.Prediction{
		// 1:1: 100 against 104 Gbit/s, B/A 1.04: inside.
		{Order: "rank", Algorithm: "flat", Collective: "allreduce", Oversubscription: "1", Bytes: 1 << 30, BusbwGbps: 100},
		{Order: "network", Algorithm: "flat", Collective: "allreduce", Oversubscription: "1", Bytes: 1 << 30, BusbwGbps: 104},
		// 2:1: 50 against 100, B/A 2: outside.
		{Order: "rank", Algorithm: "flat", Collective: "allreduce", Oversubscription: "2", Bytes: 1 << 30, BusbwGbps: 50},
		{Order: "network", Algorithm: "flat", Collective: "allreduce", Oversubscription: "2", Bytes: 1 << 30, BusbwGbps: 100},
		// Neither another collective nor another size is paired.
		{Order: "rank", Algorithm: "flat", Collective: "allgather", Oversubscription: "1", Bytes: 1 << 30, BusbwGbps: 1},
		{Order: "network", Algorithm: "flat", Collective: "allgather", Oversubscription: "1", Bytes: 1 << 30, BusbwGbps: 9},
		{Order: "rank", Algorithm: "flat", Collective: "allreduce", Oversubscription: "1", Bytes: 1 << 20, BusbwGbps: 1},
		{Order: "network", Algorithm: "flat", Collective: "allreduce", Oversubscription: "1", Bytes: 1 << 20, BusbwGbps: 9},
		// A prediction of one order only has no pair.
		{Order: "rank", Algorithm: "hierarchical", Collective: "allreduce", Oversubscription: "1", Bytes: 1 << 30, BusbwGbps: 100},
	}}
	tools, _ := Compare(synthetic(NCCLTests, fiveA, b), 32, pred)
	// Gbit/s to nccl-tests' GB/s: / 8.
	assert.Equal(t, []PredictedPair{
		{Algorithm: "flat", Oversubscription: "1", A: 12.5, B: 13, Ratio: 1.04, Inside: true},
		{Algorithm: "flat", Oversubscription: "2", A: 6.25, B: 12.5, Ratio: 2, Inside: false},
	}, tools[0].Sizes[0].Predicted)

	var out bytes.Buffer
	WriteText(&out, tools)
	assert.Contains(t, out.String(), `nccl-tests against nccom-rings simulate's all-reduce (A: its rank order, B: its network order), GB/s:
SIZE   ALGORITHM  OVERSUBSCRIPTION  PREDICTED A  PREDICTED B  PREDICTED B/A  MEASURED B/A (RANGE)  PREDICTION
1 GiB  flat       1                 12.50        13.00        1.040          1.318 (1.038-1.778)   inside the range
1 GiB  flat       2                 6.25         12.50        2.000          1.318 (1.038-1.778)   outside the range
`)
}

func TestToolUnit(t *testing.T) {
	// 8 Gbit/s is 10^9 bytes a second: 1 GB/s, 10^9 / 2^30 GiB/s.
	assert.InDelta(t, 1.0, ToolUnit(NCCLTests, 8), 1e-12)
	assert.InDelta(t, 0.931322574615479, ToolUnit(NccomTest, 8), 1e-12)
}

func TestLikely(t *testing.T) {
	for _, c := range []struct {
		tool  string
		bytes int64
		local int
		want  string
	}{
		{NccomTest, 32 << 20, 32, "hierarchical, or flat ring on Trn1"},
		{NccomTest, 32<<20 - 1, 32, "hierarchical"},
		{NccomTest, 1 << 30, 0, "hierarchical, or flat ring on Trn1"},
		{NccomTest, 32 << 20, 1, "ring"},
		{NccomTest, 1 << 20, 1, "RDH"},
		{NccomTest, 1<<20 - 1, 1, "mesh"},
		{NCCLTests, 1 << 30, 8, "ring or tree (NCCL's choice)"},
	} {
		assert.Equal(t, c.want, Likely(c.tool, c.bytes, c.local), "%s %d %d", c.tool, c.bytes, c.local)
	}
}

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{8: "8 B", 1024: "1 KiB", 1536: "1536 B", 1 << 20: "1 MiB", 3 << 30: "3 GiB", 16 << 30: "16 GiB", 1 << 40: "1 TiB"} {
		assert.Equal(t, want, Bytes(n))
	}
}

func TestParsePredictions(t *testing.T) {
	p, err := ParsePredictions([]byte(`{"predictions":[{"order":"rank","algorithm":"flat","collective":"allreduce","oversubscription":"2","bytes":268435456,"seconds":0.5,"busbw_gbps":123.5}],"bottlenecks":[],"assumptions":["NIC 100 Gbps"]}`))
	require.NoError(t, err)
	assert.Equal(t, []simulate.Prediction{{Order: "rank", Algorithm: "flat", Collective: "allreduce", Oversubscription: "2", Bytes: 268435456, Seconds: 0.5, BusbwGbps: 123.5}}, p.Predictions)
	assert.Equal(t, []string{"NIC 100 Gbps"}, p.Assumptions)
	_, err = ParsePredictions([]byte(`{"predictions":[]}`))
	assert.ErrorContains(t, err, "no \"predictions\"")
	_, err = ParsePredictions([]byte(`size(B) count`))
	assert.ErrorContains(t, err, "not the JSON of nccom-rings simulate --json")
}
