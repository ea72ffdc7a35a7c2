package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/internal/cli"
	"github.com/nccomring/libnccomring/internal/junit"
	"github.com/nccomring/libnccomring/ringdump"
)

// runVerifyJUnit runs verify --junit FILE DIR and reads FILE back: the
// exit code, the suite, its counts (tests, failures, errors) and the
// testcases that did not pass.
func runVerifyJUnit(t *testing.T, dir string) (int, junit.Suite, [3]int, []string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "verify.xml")
	code, _, errOut := runTool("verify", "--junit", path, dir)
	b, err := os.ReadFile(path)
	require.NoError(t, err, errOut)
	s, err := junit.Parse(b)
	require.NoError(t, err, "%s", b)
	var bad []string
	for _, c := range s.Cases {
		if c.Failure != "" || c.Error != "" {
			bad = append(bad, c.Name)
		}
	}
	tests, failures, errors := s.Counts()
	return code, s, [3]int{tests, failures, errors}, bad
}

// "job", then one testcase per rank; a changed next fails its rank, a cut
// file is an error on its rank and the others are still testcases; the
// exit codes are verify's.
func TestVerifyJUnit(t *testing.T) {
	dir, paths := ringJob(t, 2, 4)
	code, _, counts, bad := runVerifyJUnit(t, dir)
	assert.Equal(t, cli.ExitOK, code)
	assert.Equal(t, [3]int{9, 0, 0}, counts)
	assert.Empty(t, bad)

	edit(t, paths[3], func(d *ringdump.Dump) { d.Channels[0].Next = 5 })
	code, _, counts, bad = runVerifyJUnit(t, dir)
	assert.Equal(t, cli.ExitFinding, code)
	assert.Equal(t, [3]int{9, 1, 0}, counts)
	assert.Equal(t, []string{"rank 3"}, bad)

	data, err := os.ReadFile(paths[5])
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(paths[5], data[:100], 0o644))
	code, s, counts, bad := runVerifyJUnit(t, dir)
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Equal(t, [3]int{9, 1, 1}, counts)
	assert.Equal(t, []string{"rank 3", "rank 5"}, bad)
	assert.Contains(t, s.Cases[6].Error, "not a ring dump: at byte 100")

	// No dumps at all: the one "job" testcase, errored.
	code, _, counts, bad = runVerifyJUnit(t, t.TempDir())
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Equal(t, [3]int{1, 0, 1}, counts)
	assert.Equal(t, []string{"job"}, bad)
}
