package main

import (
	"bytes"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// junitDoc is what a CI reader takes from --junit's file.
type junitDoc struct {
	Tests    int `xml:"tests,attr"`
	Failures int `xml:"failures,attr"`
	Errors   int `xml:"errors,attr"`
	Suites   []struct {
		Cases []struct {
			Name    string `xml:"name,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
			} `xml:"error"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func runJUnit(t *testing.T, args ...string) (int, junitDoc) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "out.xml")
	var stdout, stderr bytes.Buffer
	code := run(append([]string{args[0], "--junit", path}, args[1:]...), &stdout, &stderr)
	b, err := os.ReadFile(path)
	require.NoError(t, err, "stderr: %s", stderr.String())
	var doc junitDoc
	require.NoError(t, xml.Unmarshal(b, &doc), "%s", b)
	require.Len(t, doc.Suites, 1)
	return code, doc
}

// check: one testcase per size and field (6 + 43 on the documented
// layout), the moved build's two ASSUMED fields failing with their
// mismatch lines, the stripped build one errored testcase; the exit codes
// are the ones without --junit.
func TestCheckJUnit(t *testing.T) {
	code, doc := runJUnit(t, "check", fixture(t, "libnccom-match.so"))
	assert.Equal(t, 0, code)
	assert.Equal(t, [3]int{49, 0, 0}, [3]int{doc.Tests, doc.Failures, doc.Errors})

	code, doc = runJUnit(t, "check", fixture(t, "libnccom-moved.so"))
	assert.Equal(t, 1, code)
	assert.Equal(t, [3]int{49, 2, 0}, [3]int{doc.Tests, doc.Failures, doc.Errors})
	var failed []string
	for _, c := range doc.Suites[0].Cases {
		if c.Failure != nil {
			failed = append(failed, c.Failure.Message)
		}
	}
	assert.Equal(t, []string{
		"ncclComm.rank (ASSUMED): LIB has +17612 (4 bytes), layout/ has +17616 (4 bytes)",
		"ncclComm.nRanks (ASSUMED): LIB has +17616 (4 bytes), layout/ has +17620 (4 bytes)",
	}, failed)

	code, doc = runJUnit(t, "check", fixture(t, "libnccom-stripped.so"))
	assert.Equal(t, 2, code)
	assert.Equal(t, [3]int{1, 0, 1}, [3]int{doc.Tests, doc.Failures, doc.Errors})
	assert.Contains(t, doc.Suites[0].Cases[0].Error.Message, "has no DWARF")
}

// preload: one testcase per function; -Bsymbolic fails all four.
func TestPreloadJUnit(t *testing.T) {
	code, doc := runJUnit(t, "preload", fixture(t, "libnccom-match.so"))
	assert.Equal(t, 0, code)
	assert.Equal(t, [3]int{4, 0, 0}, [3]int{doc.Tests, doc.Failures, doc.Errors})

	code, doc = runJUnit(t, "preload", fixture(t, "libnccom-symbolic.so"))
	assert.Equal(t, 1, code)
	assert.Equal(t, [3]int{4, 4, 0}, [3]int{doc.Tests, doc.Failures, doc.Errors})
	assert.True(t, strings.HasPrefix(doc.Suites[0].Cases[0].Failure.Message,
		"ncclTopoPreset: preloading replaces calls from hosts only: "), doc.Suites[0].Cases[0].Failure.Message)
}

// A --junit file that cannot be written fails the run, whatever the verdict.
func TestJUnitUnwritable(t *testing.T) {
	var stdout, stderr bytes.Buffer
	bad := filepath.Join(t.TempDir(), "no-such-dir", "out.xml")
	code := run([]string{"check", "--junit", bad, fixture(t, "libnccom-match.so")}, &stdout, &stderr)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr.String(), "--junit "+bad)
}
