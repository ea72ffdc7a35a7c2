package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/internal/abifixture"
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
// mismatch lines, the stripped build one errored testcase. preload: one
// testcase per function; -Bsymbolic fails all four. The exit codes are
// the ones without --junit.
func TestJUnitOfCheckAndPreload(t *testing.T) {
	hostsOnly := ": preloading replaces calls from hosts only: "
	for _, tc := range []struct {
		command, lib string
		code         int
		counts       [3]int   // tests, failures, errors
		problems     []string // what each failed or errored testcase says, in order
	}{
		{"check", "libnccom-match.so", 0, [3]int{49, 0, 0}, nil},
		{"check", "libnccom-moved.so", 1, [3]int{49, 2, 0}, []string{
			"ncclComm.rank (ASSUMED): LIB has +17612 (4 bytes), layout/ has +17616 (4 bytes)",
			"ncclComm.nRanks (ASSUMED): LIB has +17616 (4 bytes), layout/ has +17620 (4 bytes)",
		}},
		{"check", "libnccom-stripped.so", 2, [3]int{1, 0, 1}, []string{"has no DWARF"}},
		{"preload", "libnccom-match.so", 0, [3]int{4, 0, 0}, nil},
		{"preload", "libnccom-symbolic.so", 1, [3]int{4, 4, 0}, []string{
			"ncclTopoPreset" + hostsOnly, "ncclTopoPostset" + hostsOnly, "ncclBuildRings" + hostsOnly, "ncclTopoGetNetDev" + hostsOnly,
		}},
	} {
		code, s, counts := runJUnit(t, tc.command, abifixture.Path(t, tc.lib))
		assert.Equal(t, tc.code, code, tc.lib)
		assert.Equal(t, tc.counts, counts, tc.lib)
		var problems []string
		for _, c := range s.Cases {
			if c.Failure+c.Error != "" {
				problems = append(problems, c.Failure+c.Error)
			}
		}
		if assert.Len(t, problems, len(tc.problems), tc.lib) {
			for i, p := range tc.problems {
				assert.Contains(t, problems[i], p, tc.lib)
			}
		}
	}
}

// A --junit file that cannot be written fails the run, whatever the verdict.
func TestJUnitUnwritable(t *testing.T) {
	var stdout, stderr bytes.Buffer
	bad := filepath.Join(t.TempDir(), "no-such-dir", "out.xml")
	code := run([]string{"check", "--junit", bad, abifixture.Path(t, "libnccom-match.so")}, &stdout, &stderr)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr.String(), "--junit "+bad)
}
