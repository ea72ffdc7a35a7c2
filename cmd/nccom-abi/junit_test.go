package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/internal/junit"
)

// runJUnit runs nccom-abi COMMAND --junit FILE ARGS and reads FILE back:
// the exit code, the suite and its counts (tests, failures, errors).
func runJUnit(t *testing.T, args ...string) (int, junit.Suite, [3]int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "out.xml")
	var stdout, stderr bytes.Buffer
	code := run(append([]string{args[0], "--junit", path}, args[1:]...), &stdout, &stderr)
	b, err := os.ReadFile(path)
	require.NoError(t, err, "stderr: %s", stderr.String())
	s, err := junit.Parse(b)
	require.NoError(t, err, "%s", b)
	tests, failures, errors := s.Counts()
	return code, s, [3]int{tests, failures, errors}
}

// check: one testcase per size and field (6 + 43 on the documented
// layout), the moved build's two ASSUMED fields failing with their
// mismatch lines, the stripped build one errored testcase; the exit codes
// are the ones without --junit.
func TestCheckJUnit(t *testing.T) {
	code, _, counts := runJUnit(t, "check", fixture(t, "libnccom-match.so"))
	assert.Equal(t, 0, code)
	assert.Equal(t, [3]int{49, 0, 0}, counts)

	code, s, counts := runJUnit(t, "check", fixture(t, "libnccom-moved.so"))
	assert.Equal(t, 1, code)
	assert.Equal(t, [3]int{49, 2, 0}, counts)
	var failed []string
	for _, c := range s.Cases {
		if c.Failure != "" {
			failed = append(failed, c.Failure)
		}
	}
	assert.Equal(t, []string{
		"ncclComm.rank (ASSUMED): LIB has +17612 (4 bytes), layout/ has +17616 (4 bytes)",
		"ncclComm.nRanks (ASSUMED): LIB has +17616 (4 bytes), layout/ has +17620 (4 bytes)",
	}, failed)

	code, s, counts = runJUnit(t, "check", fixture(t, "libnccom-stripped.so"))
	assert.Equal(t, 2, code)
	assert.Equal(t, [3]int{1, 0, 1}, counts)
	assert.Contains(t, s.Cases[0].Error, "has no DWARF")
}

// preload: one testcase per function; -Bsymbolic fails all four.
func TestPreloadJUnit(t *testing.T) {
	code, _, counts := runJUnit(t, "preload", fixture(t, "libnccom-match.so"))
	assert.Equal(t, 0, code)
	assert.Equal(t, [3]int{4, 0, 0}, counts)

	code, s, counts := runJUnit(t, "preload", fixture(t, "libnccom-symbolic.so"))
	assert.Equal(t, 1, code)
	assert.Equal(t, [3]int{4, 4, 0}, counts)
	assert.True(t, strings.HasPrefix(s.Cases[0].Failure, "ncclTopoPreset: preloading replaces calls from hosts only: "),
		s.Cases[0].Failure)
}

// A --junit file that cannot be written fails the run, whatever the verdict.
func TestJUnitUnwritable(t *testing.T) {
	var stdout, stderr bytes.Buffer
	bad := filepath.Join(t.TempDir(), "no-such-dir", "out.xml")
	code := run([]string{"check", "--junit", bad, fixture(t, "libnccom-match.so")}, &stdout, &stderr)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr.String(), "--junit "+bad)
}
