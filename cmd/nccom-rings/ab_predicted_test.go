package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/ab"
	"github.com/nccomring/libnccomring/cmd/nccom-rings/simulate"
)

// simulate --json on D25's example fed to ab compare --predicted, with a
// synthetic measured set of 256 MiB (5 runs of each order of both
// tools): every predicted figure compare prints is simulate's busbw_gbps
// in the tool's unit, nccl-tests' GB/s = Gbit/s / 8 and nccom-test's
// GiB/s = Gbit/s x 10^9 / 8 / 2^30, each checked against simulate's own
// row and against the hand figures of D25 (simulate/hierarchical_test.go
// and TestPlanSimulate): flat rank order 367.17 / 191.44 / 97.81 Gbit/s
// at 1:1 / 2:1 / 4:1, network 367.17; hierarchical rank 433.17 / 218.98
// / 110.10, network 433.17.
func TestABComparePredictedFromSimulate(t *testing.T) {
	needEngine(t)
	code, stdout, stderr := runTool(append([]string{"simulate", "--json", "--bytes", "256M"}, d25Args...)...)
	require.Equal(t, 0, code, stderr)
	pred := filepath.Join(t.TempDir(), "predicted.json")
	require.NoError(t, os.WriteFile(pred, []byte(stdout), 0o644))
	var sim simulate.Report
	require.NoError(t, json.Unmarshal([]byte(stdout), &sim))
	gbps := map[string]float64{} // "order algorithm oversubscription" -> all-reduce busbw
	for _, p := range sim.Predictions {
		if p.Collective == "allreduce" {
			gbps[p.Order+" "+p.Algorithm+" "+p.Oversubscription] = p.BusbwGbps
		}
	}
	hand := map[string]float64{
		"rank flat 1": 367.17, "rank flat 2": 191.44, "rank flat 4": 97.81,
		"network flat 1": 367.17, "network flat 2": 367.17, "network flat 4": 367.17,
		"rank hierarchical 1": 433.17, "rank hierarchical 2": 218.98, "rank hierarchical 4": 110.10,
		"network hierarchical 1": 433.17, "network hierarchical 2": 433.17, "network hierarchical 4": 433.17,
	}
	require.Len(t, gbps, len(hand))
	for k, v := range hand {
		assert.InEpsilon(t, v, gbps[k], 1e-4, k)
	}

	// The measured set: A 20-24 and B 40-44 in each tool's unit.
	dir := t.TempDir()
	for r := 1; r <= 5; r++ {
		for v, base := range map[string]float64{"A": 20, "B": 40} {
			b := base + float64(r-1)
			nccl := fmt.Sprintf("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"+
				"#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n"+
				"   268435456      67108864     float     sum      -1   1468.2  %.2f  %.2f      0   1452.7  %.2f  %.2f      0\n", b/2, b, b/2, b)
			nccom := fmt.Sprintf("       size(B)    count(elems)    type    time(us)    algbw(GB/s)    busbw(GB/s)\n"+
				"     268435456        67108864    fp32       11954           %.2f          %.2f\n", b/2, b)
			require.NoError(t, os.WriteFile(filepath.Join(dir, ab.RunFile(v, r, ab.NCCLTests)), []byte(nccl), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(dir, ab.RunFile(v, r, ab.NccomTest)), []byte(nccom), 0o644))
		}
	}
	unit := map[string]func(float64) float64{
		ab.NCCLTests: func(g float64) float64 { return g / 8 },
		ab.NccomTest: func(g float64) float64 { return g * 1e9 / 8 / (1 << 30) },
	}

	code, stdout, stderr = runTool("ab", "compare", "--ranks-per-node", "4", "--predicted", pred, "--json", dir)
	require.Equal(t, 1, code, stderr) // B 40-44 against A 20-24: measurably faster
	var rep abCompareReport
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep))
	require.Len(t, rep.Tools, 2)
	for _, tr := range rep.Tools {
		require.Len(t, tr.Sizes, 1, tr.Tool)
		s := tr.Sizes[0]
		assert.Equal(t, int64(256<<20), s.Bytes)
		require.Len(t, s.Predicted, 6, tr.Tool) // 2 algorithms x 3 oversubscriptions
		for _, p := range s.Predicted {
			a, b := gbps["rank "+p.Algorithm+" "+p.Oversubscription], gbps["network "+p.Algorithm+" "+p.Oversubscription]
			assert.InEpsilon(t, unit[tr.Tool](a), p.A, 1e-12, "%s %s %s A", tr.Tool, p.Algorithm, p.Oversubscription)
			assert.InEpsilon(t, unit[tr.Tool](b), p.B, 1e-12, "%s %s %s B", tr.Tool, p.Algorithm, p.Oversubscription)
			assert.InEpsilon(t, b/a, p.Ratio, 1e-9)
		}
	}
	assert.Equal(t, sim.Assumptions, rep.PredictedAssumptions)

	// The text, rounded as printed, by hand: hierarchical 2:1 is 218.98
	// and 433.17 Gbit/s, 27.37 and 54.15 GB/s, 25.49 and 50.43 GiB/s;
	// flat 2:1 191.44 and 367.17: 23.93 and 45.90 GB/s, 22.29 and 42.74
	// GiB/s. The measured B/A is 42/22 = 1.909, its range 40/24 to 44/20:
	// 1.667-2.200.
	code, stdout, stderr = runTool("ab", "compare", "--ranks-per-node", "4", "--predicted", pred, dir)
	require.Equal(t, 1, code, stderr)
	for _, want := range []string{
		`nccl-tests against nccom-rings simulate's all-reduce \(A: its rank order, B: its network order\), GB/s:`,
		`256 MiB +hierarchical +2 +27\.37 +54\.15 +1\.978 +1\.909 \(1\.667-2\.200\) +inside the range`,
		`256 MiB +flat +2 +23\.93 +45\.90 +1\.918 +1\.909 \(1\.667-2\.200\) +inside the range`,
		`256 MiB +hierarchical +1 +54\.15 +54\.15 +1\.000 +1\.909 \(1\.667-2\.200\) +outside the range`,
		`nccom-test against nccom-rings simulate's all-reduce \(A: its rank order, B: its network order\), GiB/s:`,
		`256 MiB +hierarchical +2 +25\.49 +50\.43 +1\.978 `,
		`256 MiB +flat +2 +22\.29 +42\.74 +1\.918 `,
	} {
		assert.Regexp(t, regexp.MustCompile(want), stdout)
	}
}
