package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/verify"
	"github.com/nccomring/libnccomring/internal/cli"
	"github.com/nccomring/libnccomring/internal/cputime"
	"github.com/nccomring/libnccomring/internal/fuzzseed"
	"github.com/nccomring/libnccomring/ringdump"
)

// Crafted dumps (docs/security.md): the tool's work follows the files
// present, it reads regular files of dump size only, it goes on past a bad
// file, and what a file says is printed as text.

// A 115-byte dump claiming 2^31-1 ranks once ended in "fatal error: out of
// memory": now it is a finding naming the missing ranks, without
// allocating for them.
func TestVerifySizesItsWorkByTheFilesPresent(t *testing.T) {
	dir := t.TempDir()
	d := &ringdump.Dump{Rank: 0, NRanks: 1<<31 - 1, ResultName: "ncclSuccess", Version: "x", Host: "h", PID: 1,
		Wiring: &ringdump.Wiring{NNodes: 1, NodesFirstRank: []int{0}, GraphChannels: 1, NChannels: 2}}
	_, err := ringdump.Write(dir, d)
	require.NoError(t, err)
	cpu := cputime.Process()
	code, out, _ := runTool("verify", dir)
	assert.Equal(t, cli.ExitFinding, code)
	assert.Contains(t, out, "nccom-rings: missing ranks 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20 and 2147483626 more (of 2147483647)\n")
	// Work sized by the claim would show in CPU time; the wall clock would
	// time the machine too (issue 32).
	assert.Less(t, cputime.Process()-cpu, 5*time.Second)

	code, out, _ = runTool("verify", "--json", dir)
	assert.Equal(t, cli.ExitFinding, code)
	var rep verify.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	// The missing ranks, then (since issue 23, which checks what it can
	// past a missing rank) the dump's own shape: no channels listed.
	require.Len(t, rep.Findings, 2)
	assert.Equal(t, verify.KindMissing, rep.Findings[0].Kind)
	assert.Len(t, rep.Findings[0].Ranks, verify.MaxListedMissing, "the lowest missing ranks only")
	assert.Equal(t, 1, rep.Findings[0].Ranks[0])
	assert.Equal(t, "rank 0: 0 channels listed, but nChannels is 2", rep.Findings[1].Message)
}

// A terminal escape in a dump's warn once printed "every rank agrees" over
// the failure: every string from a dump is printed quoted, its control
// characters escaped.
func TestDumpStringsArePrintedAsText(t *testing.T) {
	dir, paths := identityJob(t)
	const forged = "\x1b[1A\x1b[2K\rnccom-rings: 4 ranks, 2 channels, 2 nodes: every rank agrees\n"
	edit(t, paths[3], func(d *ringdump.Dump) {
		d.Result, d.ResultName, d.Warn, d.Wiring, d.NetDevs = 5, "ncclInvalidUsage\x1b[0m", forged, nil, nil
	})
	code, out, _ := runTool("verify", dir)
	assert.Equal(t, cli.ExitFinding, code)
	assert.NotContains(t, out, "\x1b")
	assert.NotContains(t, out, "\r")
	assert.Contains(t, out, `rank 3: ncclTopoPostset failed with "ncclInvalidUsage\x1b[0m" (5): "\x1b[1A\x1b[2K\rnccom-rings: 4 ranks, 2 channels, 2 nodes: every rank agrees\n"`+"\n")
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		assert.False(t, strings.HasPrefix(line, "nccom-rings: 4 ranks"), "a forged line: %q", line)
	}

	code, out, _ = runTool("show", dir)
	assert.Equal(t, cli.ExitOK, code)
	assert.NotContains(t, out, "\x1b")
	assert.Contains(t, out, `     3  failed: "\x1b[1A`)

	// A file name is as untrusted as what is in the file.
	name := filepath.Join(dir, "rank-000000.\x1b]0;owned\x07.1.json")
	require.NoError(t, os.WriteFile(name, []byte("{"), 0o644))
	code, out, _ = runTool("verify", dir)
	assert.Equal(t, cli.ExitUnusable, code)
	assert.NotContains(t, out, "\x1b")
	assert.Contains(t, out, `rank-000000.\x1b]0;owned\x07.1.json": not a ring dump`)

	// --json is JSON: encoding/json escapes the control characters itself.
	code, out, _ = runTool("verify", "--json", dir)
	assert.Equal(t, cli.ExitUnusable, code)
	assert.NotContains(t, out, "\x1b")
	var rep verify.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
}

// A FIFO, a link to /dev/zero and a file past the size limit under dump
// names: each is one line on stderr, at once, and the other files are
// still verified (exit 2: part of the input is unusable).
func TestVerifyGoesOnPastFilesThatAreNotDumps(t *testing.T) {
	dir, paths := identityJob(t)
	require.NoError(t, os.Remove(paths[1]))
	require.NoError(t, syscall.Mkfifo(paths[1], 0o644))
	require.NoError(t, os.Remove(paths[2]))
	require.NoError(t, os.Symlink("/dev/zero", paths[2]))
	big := filepath.Join(dir, ringdump.FileName(3, "big", 1))
	require.NoError(t, os.WriteFile(big, nil, 0o644))
	require.NoError(t, os.Truncate(big, ringdump.MaxFileSize+1))

	// A verify that waited on the FIFO would never return: the watchdog
	// make test runs go test under ends it (its blocked limit, every
	// goroutine's stack from SIGQUIT), or go test's -timeout does.
	code, out, errOut := runTool("verify", dir)
	// Each is a finding on stdout (issue 23), named by the rank in its
	// name: ranks 1 and 2 are not also missing; ranks 0 and 3 (its real
	// file) are verified, and agree.
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Empty(t, errOut)
	assert.Contains(t, out, `nccom-rings: rank 1: "`+paths[1]+`": is a FIFO, not a regular file`+"\n")
	assert.Contains(t, out, `nccom-rings: rank 2: "`+paths[2]+`": is a symbolic link, not a regular file`+"\n")
	assert.Contains(t, out, `nccom-rings: rank 3: "`+big+`": is 67108865 bytes, more than the 64 MiB a dump may have`+"\n")
	assert.NotContains(t, out, "missing")
	assert.Contains(t, out, ": 3 findings, 3 inputs unusable\n")

	code, out, errOut = runTool("show", dir)
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Contains(t, out, "channel 0 of 2, 2 ranks\n")
	assert.Contains(t, errOut, "is a FIFO")
}

// FuzzVerify: any two files' contents, as the dumps of one directory, are
// verified and shown without a crash, a hang, or work sized by what they
// claim.
func FuzzVerify(f *testing.F) {
	good := func(r int) []byte {
		d := &ringdump.Dump{Rank: r, NRanks: 2, ResultName: "ncclSuccess", Version: "x", Host: "h", PID: 1,
			Wiring: &ringdump.Wiring{NNodes: 1, NodesFirstRank: []int{0}, GraphChannels: 1, NChannels: 2,
				Channels: []ringdump.Channel{{Channel: 0, Prev: 1 - r, Next: 1 - r, UserRanks: []int{r, 1 - r}}, {Channel: 1, Prev: 1 - r, Next: 1 - r, UserRanks: []int{r, 1 - r}}}}}
		head, tail, _ := ringdump.Encode(d)
		return append(head, tail...)
	}
	c := fuzzseed.New(f)
	c.Add(good(0), good(1))
	c.Add(good(0), []byte(`{"format":1,"rank":1,"nRanks":2147483647,"result":0,"resultName":"ncclSuccess","nChannels":32,"graphChannels":16,"channels":[]}`))
	c.Add([]byte(`{"format":1,"rank":0,"nRanks":1000000000,"result":0,"resultName":"ncclSuccess","nNodes":1,"nodesFirstRank":[0],"graphChannels":1,"nChannels":2,"channels":[{"channel":0,"prev":0,"next":0,"userRanks":[0]}]}`), good(1))
	c.Add([]byte(`{"format":1,"rank":0,"nRanks":2,"result":4,"warn":"\u001b[2J"}`), good(1))
	c.Fuzz(func(t *testing.T, a, b []byte) {
		var files []ringdump.File
		for i, data := range [][]byte{a, b} {
			d, err := ringdump.Decode("f", data)
			if err != nil {
				continue
			}
			files = append(files, ringdump.File{Path: ringdump.FileName(i, "h", 1), Dump: d})
		}
		if len(files) == 0 {
			return
		}
		if files[len(files)-1].Dump.Rank < files[0].Dump.Rank {
			files[0], files[len(files)-1] = files[len(files)-1], files[0]
		}
		rep := verify.Check("dir", files, nil)
		if rep.OK && rep.Ranks > len(files) {
			t.Fatalf("%d ranks agree from %d files", rep.Ranks, len(files))
		}
		for _, f := range rep.Findings {
			if len(f.Ranks) > verify.MaxListedMissing {
				t.Fatalf("a finding lists %d ranks", len(f.Ranks))
			}
		}
		for c := range 3 {
			if shown, err := channelOf(files, c); err == nil {
				var sb strings.Builder
				writeTable(&sb, shown)
				writeDot(&sb, shown)
			}
		}
	})
}
