package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/ab"
	"github.com/nccomring/libnccomring/internal/cli"
)

// stubTools writes mpirun, all_reduce_perf and nccom-test stand-ins into
// a directory for PATH: each logs its command line (nccom-test with its
// NEURON_RT_ROOT_COMM_ID) to log, and the benchmarks print the public
// sample outputs of ab/testdata. mpirun skips its own flags and runs the
// rest, as Open MPI would on each rank.
func stubTools(t *testing.T, log string) string {
	t.Helper()
	dir := t.TempDir()
	samples, err := filepath.Abs("ab/testdata")
	require.NoError(t, err)
	stubs := map[string]string{
		"mpirun": `echo "mpirun $*" >>"` + log + `"
while [ $# -gt 0 ]; do
  case $1 in -np|--hostfile|--map-by|--bind-to|-x) shift 2 ;; *) break ;; esac
done
exec "$@"`,
		"all_reduce_perf": `echo "all_reduce_perf $*" >>"` + log + `"
cat "` + samples + `/nccl-tests-p5-2node.txt"`,
		"nccom-test": `echo "NEURON_RT_ROOT_COMM_ID=$NEURON_RT_ROOT_COMM_ID nccom-test $*" >>"` + log + `"
cat "` + samples + `/nccom-test-2node.txt"`,
	}
	for name, body := range stubs {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755))
	}
	return dir
}

// The kit end to end: ab writes it for D25's example, the script runs
// with the stand-ins on PATH (interleaving A B A B, both tools, each run
// into its named file), and ab compare reads what it wrote.
func TestABRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "kit")
	code, stdout, stderr := runTool("ab", "--locations", d25Locations, "--hosts", d25Hosts, "-o", dir)
	require.Equal(t, cli.ExitOK, code, stderr)
	assert.Contains(t, stdout, "8 hosts x 4 ranks; sizes 1 MiB to 1 GiB, x2; 5 repeats of nccl-tests and nccom-test, interleaved A B A B ...")
	// B is D25's network order: leafA's hosts, then leafB's.
	b, err := os.ReadFile(filepath.Join(dir, "B.hosts"))
	require.NoError(t, err)
	assert.Equal(t, "trn001 slots=4\ntrn003 slots=4\ntrn005 slots=4\ntrn007 slots=4\ntrn002 slots=4\ntrn004 slots=4\ntrn006 slots=4\ntrn008 slots=4\n",
		strings.Join(strings.SplitAfter(string(b), "\n")[1:], ""))

	log := filepath.Join(t.TempDir(), "calls.log")
	sh := exec.Command("sh", filepath.Join(dir, ab.ScriptName))
	sh.Env = append(os.Environ(), "PATH="+stubTools(t, log)+":"+os.Getenv("PATH"))
	out, err := sh.CombinedOutput()
	require.NoError(t, err, "%s", out)

	// The calls, in order: each repeat runs nccl-tests on A then B, then
	// nccom-test on A then B; 5 repeats, 30 lines (mpirun and
	// all_reduce_perf log one each).
	data, err := os.ReadFile(log)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	require.Len(t, lines, 30)
	const (
		orderA = "trn001 trn002 trn003 trn004 trn005 trn006 trn007 trn008"
		orderB = "trn001 trn003 trn005 trn007 trn002 trn004 trn006 trn008"
		sizes  = "-b 1048576 -e 1073741824 -f 2"
	)
	for r := range 5 {
		l := lines[6*r : 6*r+6]
		for i, v := range []string{"A", "B"} {
			assert.Equal(t, fmt.Sprintf("mpirun -np 32 --hostfile %s/%s.hosts --map-by ppr:4:node --bind-to none all_reduce_perf %s -g 1", dir, v, sizes), l[2*i], "repeat %d", r+1)
			assert.Equal(t, "all_reduce_perf "+sizes+" -g 1", l[2*i+1])
		}
		// NEURON_RT_ROOT_COMM_ID: the first host's address, or its name
		// where it does not resolve (here, as a rule).
		root := `^NEURON_RT_ROOT_COMM_ID=(trn001|[0-9a-f.:]+):44444 `
		assert.Regexp(t, root+regexp.QuoteMeta("nccom-test -r 32 -N 8 "+sizes+" -d fp32 allr --hosts "+orderA)+"$", l[4], "repeat %d", r+1)
		assert.Regexp(t, root+regexp.QuoteMeta("nccom-test -r 32 -N 8 "+sizes+" -d fp32 allr --hosts "+orderB)+"$", l[5], "repeat %d", r+1)
	}
	for r := 1; r <= 5; r++ {
		for _, v := range []string{"A", "B"} {
			for _, tool := range []string{ab.NCCLTests, ab.NccomTest} {
				assert.FileExists(t, filepath.Join(dir, ab.RunsDir, ab.RunFile(v, r, tool)))
			}
		}
	}
	// The script refuses to run again over these outputs.
	again := exec.Command("sh", filepath.Join(dir, ab.ScriptName))
	again.Env = sh.Env
	out, err = again.CombinedOutput()
	assert.Error(t, err)
	assert.Contains(t, string(out), "holds the outputs of an earlier run")

	// compare: every run of a tool printed the same sample, so each size's
	// A and B are that size's value 5 times: no measurable difference.
	code, stdout, stderr = runTool("ab", "compare", dir)
	assert.Equal(t, cli.ExitOK, code, stderr)
	assert.Contains(t, stdout, "nccl-tests: 5 runs of A, 5 of B; out-of-place busbw in GB/s")
	assert.Contains(t, stdout, "16 GiB   487.09 (487.09-487.09)  487.09 (487.09-487.09)  1.000  no measurable difference  likely ring or tree (NCCL's choice)\n")
	assert.Contains(t, stdout, "nccom-test: 5 runs of A, 5 of B; busbw in GiB/s")
	assert.Contains(t, stdout, "1 GiB    47.09 (47.09-47.09)  47.09 (47.09-47.09)  1.000  no measurable difference  likely hierarchical, or flat ring on Trn1\n")
	// 8 B and 16 B have a busbw of 0.00: no B/A.
	assert.Contains(t, stdout, "8 B      0.00 (0.00-0.00)")
	assert.Contains(t, stdout, "0 of 60 sizes show a measurable difference")

	// With simulate's predictions of 1 GiB, against both tools' runs.
	pred := filepath.Join(t.TempDir(), "predicted.json")
	require.NoError(t, os.WriteFile(pred, []byte(`{"predictions": [
  {"order": "rank", "algorithm": "flat", "collective": "allreduce", "oversubscription": "2", "bytes": 1073741824, "seconds": 0.1, "busbw_gbps": 200},
  {"order": "network", "algorithm": "flat", "collective": "allreduce", "oversubscription": "2", "bytes": 1073741824, "seconds": 0.05, "busbw_gbps": 400}
], "bottlenecks": [], "assumptions": ["a guess"]}`), 0o644))
	code, stdout, stderr = runTool("ab", "compare", "--predicted", pred, "--json", dir)
	assert.Equal(t, cli.ExitOK, code, stderr)
	var rep abCompareReport
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep))
	require.Len(t, rep.Tools, 2)
	assert.Equal(t, 4, rep.RanksPerNode) // from ab.json
	last := rep.Tools[1].Sizes[len(rep.Tools[1].Sizes)-1]
	assert.Equal(t, int64(1<<30), last.Bytes)
	assert.Equal(t, ab.Spread{Runs: 5, Median: 47.09, Min: 47.09, Max: 47.09, Values: []float64{47.09, 47.09, 47.09, 47.09, 47.09}}, last.B)
	// 200 Gbit/s is 25e9 B/s, 23.283 GiB/s; predicted B/A 2 is outside the measured 1-1.
	require.Len(t, last.Predicted, 1)
	assert.InDelta(t, 25e9/(1<<30), last.Predicted[0].A, 1e-9)
	assert.Equal(t, 2.0, last.Predicted[0].Ratio)
	assert.False(t, last.Predicted[0].Inside)
	assert.Equal(t, []string{"a guess"}, rep.PredictedAssumptions)
	code, stdout, stderr = runTool("ab", "compare", "--predicted", pred, dir)
	assert.Equal(t, cli.ExitOK, code, stderr)
	assert.Contains(t, stdout, "1 GiB  flat       2                 23.28        46.57        2.000          1.000 (1.000-1.000)   outside the range\n")
	assert.Contains(t, stdout, "simulate's assumptions (\""+pred+"\"):\n  - a guess\n")

	// Predictions of sizes the runs did not measure: said.
	require.NoError(t, os.WriteFile(pred, []byte(`{"predictions": [{"order": "rank", "algorithm": "flat", "collective": "allreduce", "oversubscription": "1", "bytes": 3, "busbw_gbps": 1}]}`), 0o644))
	code, _, stderr = runTool("ab", "compare", "--predicted", pred, dir)
	assert.Equal(t, cli.ExitOK, code, stderr)
	assert.Contains(t, stderr, "predicts no all-reduce of a measured size for both orders")
}

func TestABCompareNamesBadFilesAndGoesOn(t *testing.T) {
	dir := t.TempDir()
	p5, err := os.ReadFile("ab/testdata/nccl-tests-p5-2node.txt")
	require.NoError(t, err)
	fail, err := os.ReadFile("ab/testdata/nccom-test-failure.txt")
	require.NoError(t, err)
	var files []string
	for r := 1; r <= 5; r++ {
		for _, v := range []string{"A", "B"} {
			files = append(files, filepath.Join(dir, ab.RunFile(v, r, ab.NCCLTests)))
			require.NoError(t, os.WriteFile(files[len(files)-1], p5, 0o644))
		}
	}
	broken := filepath.Join(dir, ab.RunFile("A", 1, ab.NccomTest))
	require.NoError(t, os.WriteFile(broken, fail, 0o644))
	misnamed := filepath.Join(dir, "notes.txt")
	require.NoError(t, os.WriteFile(misnamed, p5, 0o644))

	// A damaged ab.json is named too.
	require.NoError(t, os.WriteFile(filepath.Join(dir, ab.ManifestName), []byte("{"), 0o644))

	// The directory: the failed run is named, the 10 others compared.
	code, stdout, stderr := runTool("ab", "compare", dir)
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Contains(t, stderr, "A-01-nccom-test.out\": line 2: nccom-test reports a failure")
	assert.Contains(t, stderr, "ab.json\": unexpected end of JSON input")
	assert.Contains(t, stdout, "nccl-tests: 5 runs of A, 5 of B")
	assert.NotContains(t, stdout, "nccom-test:")

	// Files named: one not named as a run is refused, the others read.
	code, stdout, stderr = runTool(append([]string{"ab", "compare", misnamed}, files...)...)
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Contains(t, stderr, "notes.txt\": not named as the kit names a run")
	assert.Contains(t, stdout, "0 of 32 sizes show a measurable difference")

	// Nothing usable at all.
	code, _, stderr = runTool("ab", "compare", broken)
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Contains(t, stderr, "no usable run output")
}

// A measurable difference is ab compare's finding, exit 1.
func TestABCompareFinding(t *testing.T) {
	dir := t.TempDir()
	row := func(busbw float64) string {
		return fmt.Sprintf("size(B) count(elems) type time(us) algbw(GB/s) busbw(GB/s)\n1073741824 268435456 fp32 41806 %.2f %.2f\n", busbw/2, busbw)
	}
	for r, v := range []float64{40, 41, 42, 43, 44} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, ab.RunFile("A", r+1, ab.NccomTest)), []byte(row(v)), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, ab.RunFile("B", r+1, ab.NccomTest)), []byte(row(v+5)), 0o644))
	}
	code, stdout, stderr := runTool("ab", "compare", "--ranks-per-node", "1", dir)
	assert.Equal(t, cli.ExitFinding, code, stderr)
	// A 40-44, median 42; B 45-49, median 47: 47/42 = 1.119.
	assert.Contains(t, stdout, "1 GiB  42.00 (40.00-44.00)  47.00 (45.00-49.00)  1.119  B faster  likely ring\n")
	assert.Contains(t, stdout, "1 of 1 sizes show a measurable difference")
}

func TestABRefusals(t *testing.T) {
	tmp := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(tmp, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	for _, c := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"fewer than 5 repeats", []string{"--locations", d25Locations, "--hosts", d25Hosts, "-o", filepath.Join(tmp, "k1"), "--repeats", "4"}, cli.ExitUnusable, "--repeats 4: 5 to 100"},
		{"no -o", []string{"--locations", d25Locations, "--hosts", d25Hosts}, cli.ExitUnusable, "-o DIR is needed"},
		{"a hostile host name", []string{"-a", write("a", "h1 slots=2\nh$(id) slots=2\n"), "-b", write("b", "h$(id) slots=2\nh1 slots=2\n"), "-o", filepath.Join(tmp, "k2")}, cli.ExitUnusable, `host name "h$(id)" has "$" at byte 2`},
		{"two sets of hosts", []string{"-a", write("a2", "h1 slots=2\nh2 slots=2\n"), "-b", write("b2", "h1 slots=2\nh3 slots=2\n"), "-o", filepath.Join(tmp, "k3")}, cli.ExitUnusable, "host \"h3\" of"},
		{"a host without a location", []string{"--locations", write("locs", "trn001 s/a\n"), "--hosts", d25Hosts, "-o", filepath.Join(tmp, "k4")}, cli.ExitUnusable, "7 of 8 hosts"},
		{"--predicted when writing", []string{"--locations", d25Locations, "--hosts", d25Hosts, "-o", filepath.Join(tmp, "k5"), "--predicted", "x"}, cli.ExitUnusable, "--predicted is ab compare's"},
		{"a kit flag when comparing", []string{"compare", "--repeats", "6", tmp}, cli.ExitUnusable, "ab compare takes no --repeats"},
	} {
		code, _, stderr := runTool(append([]string{"ab"}, c.args...)...)
		assert.Equal(t, c.code, code, c.name)
		assert.Contains(t, stderr, c.msg, c.name)
	}

	// --json prints a document whatever the exit.
	code, stdout, _ := runTool("ab", "--json", "--locations", d25Locations, "--hosts", d25Hosts, "-o", filepath.Join(tmp, "k7"), "--repeats", "3")
	assert.Equal(t, cli.ExitUnusable, code)
	assert.JSONEq(t, `{"error": "unusable input or usage (named on stderr)"}`, stdout)

	// A directory that is not empty, unless --force.
	dir := filepath.Join(tmp, "kit")
	args := []string{"ab", "--locations", d25Locations, "--hosts", d25Hosts, "-o", dir, "--tool", "nccom-test"}
	code, _, stderr := runTool(args...)
	require.Equal(t, cli.ExitOK, code, stderr)
	code, _, stderr = runTool(args...)
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Contains(t, stderr, "is not empty")
	code, _, stderr = runTool(append(args, "--force")...)
	assert.Equal(t, cli.ExitOK, code, stderr)
	script, err := os.ReadFile(filepath.Join(dir, ab.ScriptName))
	require.NoError(t, err)
	assert.Contains(t, string(script), "TOOLS=${TOOLS:-nccom-test}\n")

	// A hostfile in network order already: A and B are one order, exit 1
	// (the kit written: it measures run-to-run noise).
	grouped := write("grouped", "trn001 slots=4\ntrn003 slots=4\ntrn002 slots=4\ntrn004 slots=4\n")
	code, _, stderr = runTool("ab", "--locations", d25Locations, "--hosts", grouped, "-o", filepath.Join(tmp, "k6"))
	assert.Equal(t, cli.ExitFinding, code)
	assert.Contains(t, stderr, "A and B are one order")
	assert.FileExists(t, filepath.Join(tmp, "k6", ab.ScriptName))
}
