package main

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/internal/cli"
	"github.com/nccomring/libnccomring/ringdump"
)

// verifyJUnit is what a CI reader takes from verify --junit's file.
type verifyJUnit struct {
	Tests    int `xml:"tests,attr"`
	Failures int `xml:"failures,attr"`
	Errors   int `xml:"errors,attr"`
	Suites   []struct {
		Cases []struct {
			Name    string    `xml:"name,attr"`
			Failure *struct{} `xml:"failure"`
			Error   *struct {
				Text string `xml:",chardata"`
			} `xml:"error"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func runVerifyJUnit(t *testing.T, dir string) (int, verifyJUnit, []string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "verify.xml")
	code, _, errOut := runTool("verify", "--junit", path, dir)
	b, err := os.ReadFile(path)
	require.NoError(t, err, errOut)
	var doc verifyJUnit
	require.NoError(t, xml.Unmarshal(b, &doc), "%s", b)
	require.Len(t, doc.Suites, 1)
	var bad []string // the testcases that did not pass
	for _, c := range doc.Suites[0].Cases {
		if c.Failure != nil || c.Error != nil {
			bad = append(bad, c.Name)
		}
	}
	return code, doc, bad
}

// "job", then one testcase per rank; a changed next fails its rank, a cut
// file is an error on its rank and the others are still testcases; the
// exit codes are verify's.
func TestVerifyJUnit(t *testing.T) {
	dir, paths := ringJob(t, 2, 4)
	code, doc, bad := runVerifyJUnit(t, dir)
	assert.Equal(t, cli.ExitOK, code)
	assert.Equal(t, [3]int{9, 0, 0}, [3]int{doc.Tests, doc.Failures, doc.Errors})
	assert.Empty(t, bad)

	edit(t, paths[3], func(d *ringdump.Dump) { d.Channels[0].Next = 5 })
	code, doc, bad = runVerifyJUnit(t, dir)
	assert.Equal(t, cli.ExitFinding, code)
	assert.Equal(t, [3]int{9, 1, 0}, [3]int{doc.Tests, doc.Failures, doc.Errors})
	assert.Equal(t, []string{"rank 3"}, bad)

	data, err := os.ReadFile(paths[5])
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(paths[5], data[:100], 0o644))
	code, doc, bad = runVerifyJUnit(t, dir)
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Equal(t, [3]int{9, 1, 1}, [3]int{doc.Tests, doc.Failures, doc.Errors})
	assert.Equal(t, []string{"rank 3", "rank 5"}, bad)
	assert.Contains(t, doc.Suites[0].Cases[6].Error.Text, "not a ring dump: at byte 100")

	// No dumps at all: the one "job" testcase, errored.
	code, doc, bad = runVerifyJUnit(t, t.TempDir())
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Equal(t, [3]int{1, 0, 1}, [3]int{doc.Tests, doc.Failures, doc.Errors})
	assert.Equal(t, []string{"job"}, bad)
}
