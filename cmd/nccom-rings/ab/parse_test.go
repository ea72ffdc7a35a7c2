package ab

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The samples are the tools' public outputs (testdata/SOURCES.md says
// where each comes from). Each test checks rows read off the sample by
// hand, and every row against the tool's own formulas (an independent
// model of what the columns are): nccl-tests' algbw is bytes / time in
// 10^9 bytes a second and busbw algbw x 2(n-1)/n; nccom-test's algbw is
// in GiB a second.

func parseSample(t *testing.T, name string) *Output {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	require.NoError(t, err)
	out, err := Parse(data)
	require.NoError(t, err)
	return out
}

func TestParseNCCLTestsP5(t *testing.T) {
	out := parseSample(t, "nccl-tests-p5-2node.txt")
	assert.Equal(t, NCCLTests, out.Tool)
	require.Len(t, out.Rows, 32) // 8 B to 16 GiB, doubling: 2^3 .. 2^34
	assert.Equal(t, Row{Bytes: 8, TimeUS: 69.12, Wrong: "0"}, out.Rows[0])
	assert.Equal(t, Row{Bytes: 268435456, TimeUS: 1468.2, AlgBW: 182.83, BusBW: 342.81, InPlaceBusBW: 346.46, Wrong: "0"}, out.Rows[25])
	assert.Equal(t, Row{Bytes: 17179869184, TimeUS: 66132, AlgBW: 259.78, BusBW: 487.09, InPlaceBusBW: 487.26, Wrong: "0"}, out.Rows[31])
	// 2 x p5.48xlarge, 8 GPUs each: n = 16, busbw = algbw x 30/16.
	for i, r := range out.Rows {
		assert.Equal(t, int64(8)<<i, r.Bytes)
		if r.TimeUS >= 1000 { // 4+ significant digits of time: algbw to 2 decimals
			assert.InDelta(t, float64(r.Bytes)/r.TimeUS/1e3, r.AlgBW, 0.05, "algbw of %d", r.Bytes)
		}
		if r.AlgBW >= 1 {
			assert.InDelta(t, r.AlgBW*30/16, r.BusBW, 0.02, "busbw of %d", r.Bytes)
		}
	}
}

func TestParseNCCLTestsTaggedExcerpt(t *testing.T) {
	// Open MPI's [1,0]<stdout>: before every line, a "..." where the page
	// cut rows, and a row of 0 bytes (skipped: no bandwidth).
	out := parseSample(t, "nccl-tests-eks-excerpt.txt")
	assert.Equal(t, NCCLTests, out.Tool)
	var sizes []int64
	for _, r := range out.Rows {
		sizes = append(sizes, r.Bytes)
	}
	assert.Equal(t, []int64{64 << 20, 128 << 20, 256 << 20, 512 << 20, 1 << 30, 2 << 30}, sizes)
	assert.Equal(t, Row{Bytes: 67108864, TimeUS: 996.0, AlgBW: 67.38, BusBW: 126.33, InPlaceBusBW: 125.62, Wrong: "0"}, out.Rows[0])
	assert.Equal(t, Row{Bytes: 2147483648, TimeUS: 9197.5, AlgBW: 233.49, BusBW: 437.79, InPlaceBusBW: 437.89, Wrong: "0"}, out.Rows[5])
}

func TestParseNccomTest2Node(t *testing.T) {
	out := parseSample(t, "nccom-test-2node.txt")
	assert.Equal(t, NccomTest, out.Tool)
	require.Len(t, out.Rows, 28) // 8 B to 1 GiB, doubling
	assert.Equal(t, Row{Bytes: 8, TimeUS: 520}, out.Rows[0])
	assert.Equal(t, Row{Bytes: 33554432, TimeUS: 2711, AlgBW: 11.53, BusBW: 22.69}, out.Rows[22])
	assert.Equal(t, Row{Bytes: 1073741824, TimeUS: 41806, AlgBW: 23.92, BusBW: 47.09}, out.Rows[27])
	// 64 ranks: busbw = algbw x 2 x 63/64; algbw in GiB/s.
	for i, r := range out.Rows {
		assert.Equal(t, int64(8)<<i, r.Bytes)
		if r.TimeUS >= 1000 {
			assert.InDelta(t, float64(r.Bytes)/(r.TimeUS*1e-6)/(1<<30), r.AlgBW, 0.01, "algbw of %d", r.Bytes)
		}
		if r.AlgBW >= 1 {
			assert.InDelta(t, r.AlgBW*126/64, r.BusBW, 0.02, "busbw of %d", r.Bytes)
		}
	}
}

func TestParseNccomTestAlgorithmColumn(t *testing.T) {
	// Newer releases: time:avg(us), and --show-algorithm's column.
	out := parseSample(t, "nccom-test-show-algorithm.txt")
	require.Len(t, out.Rows, 8)
	var algs []string
	for _, r := range out.Rows {
		algs = append(algs, r.Algorithm)
	}
	assert.Equal(t, []string{"mesh", "mesh", "mesh", "mesh", "mesh", "rdh", "kangaring", "kangaring"}, algs)
	assert.Equal(t, Row{Bytes: 536870912, TimeUS: 9689.51, AlgBW: 55.41, BusBW: 103.89, Algorithm: "kangaring"}, out.Rows[7])
}

func TestParseRefusesFailuresAndNonTables(t *testing.T) {
	data, err := os.ReadFile("testdata/nccom-test-failure.txt")
	require.NoError(t, err)
	_, err = Parse(data)
	assert.ErrorContains(t, err, "line 2: nccom-test reports a failure: 33554432    Failure running neuron-bench")

	_, err = Parse([]byte("mpirun: command not found\n"))
	assert.ErrorContains(t, err, "no table of nccl-tests")

	_, err = Parse([]byte("#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n# Avg bus bandwidth : 0\n"))
	assert.ErrorContains(t, err, "a nccl-tests table without a row")

	_, err = Parse([]byte("# size count type redop root time algbw busbw #wrong time algbw busbw #wrong\nsize(B) count(elems) type time(us) algbw(GB/s) busbw(GB/s)\n"))
	assert.ErrorContains(t, err, "line 2: a nccom-test table after a nccl-tests one")
}

func TestParseNCCLTestsOldHeader(t *testing.T) {
	// Releases of 2019 had no root column and an error column for #wrong
	// (the layout of public p3dn runs of that year); rows are read by the
	// header's names, so the columns move with it.
	out, err := Parse([]byte(`# nThread 1 nGpus 1 minBytes 8 maxBytes 1073741824 step: 2(factor) warmup iters: 5 iters: 100 validation: 1
#                                                     out-of-place                       in-place
#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error
#        (B)    (elements)                     (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
     1048576        262144   float     sum    600.0    1.75    1.75  2e-07    610.0    1.72    1.72  2e-07
`))
	require.NoError(t, err)
	assert.Equal(t, []Row{{Bytes: 1048576, TimeUS: 600, AlgBW: 1.75, BusBW: 1.75, InPlaceBusBW: 1.72, Wrong: "2e-07"}}, out.Rows)
}
