package ab

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testKit() Kit {
	return Kit{
		Version: "nccom-rings test",
		Variants: []Variant{
			{Name: "A", Order: "rank", About: "rank order", Hostfile: "A.hosts", Hosts: []string{"h1", "h2", "h3", "h4"}},
			{Name: "B", Order: "network", About: "network order", Hostfile: "B.hosts", Hosts: []string{"h1", "h3", "h2", "h4"}},
		},
		RanksPerNode: 32, Repeats: 5, MinBytes: 1 << 20, MaxBytes: 1 << 30, StepFactor: 4,
		Tools: []string{NCCLTests, NccomTest}, Script: ScriptName,
	}
}

func TestRunFileNames(t *testing.T) {
	assert.Equal(t, "A-01-nccl-tests.out", RunFile("A", 1, NCCLTests))
	assert.Equal(t, "B-100-nccom-test.out", RunFile("B", 100, NccomTest))
	v, r, tool, ok := ParseRunFile("B-07-nccom-test.out")
	assert.True(t, ok)
	assert.Equal(t, []any{"B", 7, NccomTest}, []any{v, r, tool})
	for _, bad := range []string{"A-1-nccl-tests.out", "C-01-nccl-tests.out", "A-01-nccl.out", "A-01-nccl-tests.out.bak", "runs.log"} {
		_, _, _, ok := ParseRunFile(bad)
		assert.False(t, ok, bad)
	}
}

func TestCheckHostName(t *testing.T) {
	for _, good := range []string{"trn1-st-trn1-1", "ip-10-1-4-145.ec2.internal", "10.1.4.138", "node_7"} {
		assert.NoError(t, CheckHostName(good), good)
	}
	for _, bad := range []string{"$(reboot)", "`id`", "a;b", "-x", "a b", "h\"", "h'", ""} {
		assert.Error(t, CheckHostName(bad), bad)
	}
}

// The script is POSIX sh: sh -n (and dash -n, where there is one) parse
// it; it holds both tools' command lines as the kit gives them.
func TestScriptParsesAndHoldsTheCommandLines(t *testing.T) {
	script := Script(testKit())
	path := filepath.Join(t.TempDir(), ScriptName)
	require.NoError(t, os.WriteFile(path, []byte(script), 0o755))
	for _, sh := range []string{"sh", "dash"} {
		if _, err := exec.LookPath(sh); err != nil {
			continue
		}
		out, err := exec.Command(sh, "-n", path).CombinedOutput()
		assert.NoError(t, err, "%s -n: %s", sh, out)
	}
	// 4 hosts x 32 ranks = 128 ranks; 1 MiB to 1 GiB, x4.
	assert.Contains(t, script, `"$MPIRUN" -np 128 --hostfile "$here/$1.hosts" --map-by ppr:32:node $MPIRUN_FLAGS \`+"\n"+
		`    "$ALL_REDUCE_PERF" -b 1048576 -e 1073741824 -f 4 -g 1`)
	assert.Contains(t, script, `"$NCCOM_TEST" -r 128 -N 4 -b 1048576 -e 1073741824 -f 4 -d fp32 $NCCOM_TEST_FLAGS allr --hosts $hosts`)
	assert.Contains(t, script, "A_HOSTS=\"h1 h2 h3 h4\"\nB_HOSTS=\"h1 h3 h2 h4\"\n")
	assert.Contains(t, script, "REPEATS=5\n")
	assert.Contains(t, script, "TOOLS=${TOOLS:-nccl-tests nccom-test}\n")
}
