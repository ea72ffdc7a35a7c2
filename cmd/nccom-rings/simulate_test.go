package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/simulate"
)

var d25Args = []string{"--locations", "testdata/d25/locations", "--hosts", "testdata/d25/hosts"}

// needEngine points NCCOMRING_BUILD at the repository's build directory
// unless it is set, and skips the test when the SimGrid engine is not
// built there.
func needEngine(t *testing.T) {
	t.Helper()
	if os.Getenv("NCCOMRING_BUILD") == "" {
		build, _ := filepath.Abs("../../build")
		t.Setenv("NCCOMRING_BUILD", build)
	}
	if _, err := simulate.FindEngine(); err != nil {
		t.Skipf("skipped: %v", err)
	}
}

// Without the engine simulate is unusable (exit 2) and says what
// installs SimGrid (issue 38).
func TestSimulateWithoutEngine(t *testing.T) {
	t.Setenv("NCCOM_SIMULATE_ENGINE", "")
	t.Setenv("NCCOMRING_BUILD", t.TempDir())
	code, _, stderr := runTool(append([]string{"simulate"}, d25Args...)...)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "apt-get install -y libsimgrid-dev")
}

// D25's example through the command: --json's shape as issue 38 gives
// it (the A/B kit reads it), one row per order x algorithm x collective
// x oversubscription x size, the rank order slower at 2:1.
func TestSimulateD25JSON(t *testing.T) {
	needEngine(t)
	code, stdout, stderr := runTool(append([]string{"simulate", "--json", "--bytes", "256M", "--oversubscription", "1", "--oversubscription", "2"}, d25Args...)...)
	require.Equal(t, 0, code, stderr)
	var doc struct {
		Predictions []map[string]any `json:"predictions"`
		Bottlenecks []map[string]any `json:"bottlenecks"`
		Assumptions []string         `json:"assumptions"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc))
	require.Len(t, doc.Predictions, 2*2*3*2) // orders x algorithms x collectives x oversubscriptions
	keys := []string{"order", "algorithm", "collective", "oversubscription", "bytes", "seconds", "busbw_gbps"}
	busbw := map[string]float64{}
	for _, p := range doc.Predictions {
		assert.Len(t, p, len(keys))
		for _, k := range keys {
			assert.Contains(t, p, k)
		}
		if p["algorithm"] == "flat" && p["collective"] == "allreduce" {
			busbw[p["order"].(string)+" "+p["oversubscription"].(string)] = p["busbw_gbps"].(float64)
		}
		assert.Equal(t, float64(256<<20), p["bytes"])
	}
	assert.Less(t, busbw["rank 2"], 0.65*busbw["network 2"])
	assert.NotEmpty(t, doc.Bottlenecks)
	assert.NotEmpty(t, doc.Assumptions)
}

// plan --simulate on D25's example, by hand: 4 NICs a node, 16
// channels, so 4 flows a NIC at 25 Gbit/s; a part is 256 MiB / (16 x 32)
// = 512 KiB; AllReduce is 62 steps of 15 us + 512 KiB / 3.125 GB/s =
// 11.33 ms; busbw = 256 MiB / 11.33 ms x 62/32 = 367 Gbit/s. The rank
// order crosses a leaf 8 times a ring: 64 flows up each leaf, at 2:1
// 800 Gbit/s, 12.5 each: 191; at 4:1 6.25 each: 98.
func TestPlanSimulate(t *testing.T) {
	needEngine(t)
	code, stdout, stderr := runTool(append([]string{"plan", "--simulate"}, d25Args...)...)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "PREDICTED BUSBW 1:1/2:1/4:1")
	assert.Regexp(t, `(?m)^rank .* 367/191/98 `, stdout)
	assert.Regexp(t, `(?m)^network .* 367/367/367 `, stdout)
}

// simulate DIR reads the rings from dumps: D25's rank order dumped by
// plan, located by --locations, predicts what the plan path does (the
// hand figures of TestPlanSimulate), and names the order by DIR.
func TestSimulateDumps(t *testing.T) {
	needEngine(t)
	dir := filepath.Join(t.TempDir(), "rank")
	code, _, stderr := runTool(append([]string{"plan", "--order", "rank", "--dump", dir}, d25Args...)...)
	require.Equal(t, 0, code, stderr)
	code, stdout, stderr := runTool("simulate", dir, "--locations", "testdata/d25/locations", "--json",
		"--algorithm", "flat", "--bytes", "256M", "--oversubscription", "2")
	require.Equal(t, 0, code, stderr)
	var doc simulate.Report
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc))
	require.Len(t, doc.Predictions, 3)
	assert.Equal(t, dir, doc.Predictions[0].Order)
	assert.Equal(t, "allreduce", doc.Predictions[0].Collective)
	assert.InDelta(t, 191.4, doc.Predictions[0].BusbwGbps, 0.1)
}
