package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/internal/cli"
	"github.com/nccomring/libnccomring/ringdump"
)

// Issue 34, F6: verify and report on directories another user filled,
// run as the built tool in a child under ulimit -v 2000000 and a CPU-time
// cap, its CPU time counted (readers_bounded_test.go's runBounded and
// checkBounded: a bound on work, not on the wall clock, issue 32).

// manyShapes writes n small dumps into a new directory, each claiming a
// shape no other file claims: the odd ranks another job's nRanks (n+r),
// the even ranks nRanks n and another node list ([0, r+1]). Written as
// bytes, not through ringdump.Write: 40,000 files take about a second.
func manyShapes(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	for r := range n {
		nRanks := n
		if r%2 == 1 {
			nRanks = n + r
		}
		body := fmt.Sprintf(`{"format":1,"rank":%d,"nRanks":%d,"result":0,"resultName":"ncclSuccess","nNodes":2,"node":0,"nodesFirstRank":[0,%d],"graphChannels":1,"nChannels":2,"channels":[],"version":"x","host":"h","pid":1}`+"\n",
			r, nRanks, r+1)
		require.NoError(t, os.WriteFile(filepath.Join(dir, ringdump.FileName(r, "h", 1)), []byte(body), 0o644))
	}
	return dir
}

// 40,000 dumps that each claim another shape once took 8.3 s, and twice
// the files four times the CPU: the most common shape was found by
// comparing every file with every shape seen. Now it is one map from shape
// to its files: twice the files, about twice the CPU (the bound is 3x,
// over a floor of 250 ms so that a fast half is not noise).
func TestVerifyAndReportGrowLinearlyWithTheFiles(t *testing.T) {
	const full = 40000
	tool := buildRingsTool(t, t.TempDir())
	dirs := map[string]string{"half": manyShapes(t, full/2), "full": manyShapes(t, full)}
	page := filepath.Join(t.TempDir(), "page.html")
	for _, c := range []struct {
		name string
		args func(dir string) []string
	}{
		{"verify", func(dir string) []string { return []string{"verify", dir} }},
		{"report", func(dir string) []string { return []string{"report", "-o", page, dir} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			checkBounded(t, tool, 60*time.Second, c.args(dirs["half"]), c.args(dirs["full"]),
				func(t *testing.T, which string, r boundedRun) {
					// Findings (the odd ranks' nRanks, the even ranks'
					// shape), every file read: exit 1.
					require.Equal(t, cli.ExitFinding, r.code, "%s: stderr: %.2000s", which, r.stderr)
					if c.name != "verify" || which != "full" {
						return
					}
					// 20,000 files of other jobs, the 20,000 ranks they
					// would have been missing, and every other file's
					// shape (rank 0's too: it lists no channels).
					for _, want := range []string{
						"nccom-rings: rank 1: nRanks is 40001 (",
						"), but 20000 of 40000 files say 40000\n",
						"nccom-rings: and 39901 more findings\n",
						": 40001 findings\n",
					} {
						assert.True(t, strings.Contains(r.stdout, want), "want %q in\n%.600s", want, r.stdout)
					}
				})
		})
	}
}

// bigDump is a file of size bytes (about) holding one dump whose array
// named field (in the wiring, or netDevs) holds zeros (or {}) to fill it:
// the most values a 64 MiB file can carry.
func bigDump(t *testing.T, path string, rank int, field string, size int) {
	t.Helper()
	var b bytes.Buffer
	b.Grow(size + 1024)
	fmt.Fprintf(&b, `{"format":1,"rank":%d,"nRanks":3,"result":0,"resultName":"ncclSuccess","nNodes":1,"node":0,"graphChannels":1,"nChannels":2,`, rank)
	elem := "0"
	switch field {
	case "netDevs":
		elem = `{}`
		b.WriteString(`"nodesFirstRank":[0],"channels":[],"netDevs":[`)
	case "nodesFirstRank":
		b.WriteString(`"channels":[],"nodesFirstRank":[`)
	default: // userRanks
		b.WriteString(`"nodesFirstRank":[0],"channels":[{"channel":0,"prev":0,"next":0,"userRanks":[`)
	}
	tail := `],"version":"x","host":"h","pid":1}`
	if field == "userRanks" {
		tail = `]}],"version":"x","host":"h","pid":1}`
	}
	b.WriteString(elem)
	for b.Len()+len(tail)+len(elem)+1 <= size {
		b.WriteByte(',')
		b.WriteString(elem)
	}
	b.WriteString(tail)
	require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
}

// Three 64 MiB dumps once took 1.9 GB and, under ulimit -v 2000000, ended
// in "fatal error: out of memory": every array was decoded whole, an
// 8-byte int for each 2-byte "0,". Now a file is read into one buffer
// that the next file reuses, and one that holds more values than a dump
// the library writes can (ringdump.MaxValues) is refused before it is
// decoded: the three are unusable findings, exit 2, and the tool lives.
func TestVerifyReadsThreeLargestDumpsInBoundedMemory(t *testing.T) {
	tool := buildRingsTool(t, t.TempDir())
	dir := t.TempDir()
	for r, field := range []string{"userRanks", "nodesFirstRank", "netDevs"} {
		bigDump(t, filepath.Join(dir, ringdump.FileName(r, "h", 1)), r, field, ringdump.MaxFileSize)
	}
	for _, args := range [][]string{{"verify", dir}, {"report", "-o", filepath.Join(t.TempDir(), "page.html"), dir}} {
		r := runBounded(t, tool, 60*time.Second, args...)
		t.Logf("%s: exit %d, %v of CPU, a heap of %d MB at most", args[0], r.code, r.cpu, r.heapMB)
		require.Equal(t, cli.ExitUnusable, r.code, "stdout: %.2000s\nstderr: %.2000s", r.stdout, r.stderr)
		assert.False(t, strings.Contains(r.stderr, "fatal error"), "%.600s", r.stderr)
		for rank := range 3 {
			want := "rank " + strconv.Itoa(rank) + `: "` + filepath.Join(dir, ringdump.FileName(rank, "h", 1)) + `": not a ring dump: holds more than `
			out := r.stdout
			if args[0] == "report" { // on stderr, without the rank
				out, want = r.stderr, want[len("rank 0: "):]
			}
			assert.True(t, strings.Contains(out, want), "want %q in\n%.600s", want, out)
		}
		// One file's buffer (64 MiB, reused: the files are 64 MiB and a
		// byte less), not three files' values.
		assert.Less(t, r.heapMB, 100, "%s: the largest heap, in MB", args[0])
		assert.Less(t, r.cpu, 20*time.Second)
	}
}
