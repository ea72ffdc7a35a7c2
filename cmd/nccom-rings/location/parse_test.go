package location_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/location"
)

// parser is ParseEC2 or ParseSlurm.
type parser func(path string, data []byte) (*location.Topology, error)

// mustParse is parse's topology of text, read as the file path.
func mustParse(t *testing.T, parse parser, path, text string) *location.Topology {
	t.Helper()
	topo, err := parse(path, []byte(text))
	require.NoError(t, err)
	return topo
}

func parseEC2(t *testing.T, text string) *location.Topology {
	t.Helper()
	return mustParse(t, location.ParseEC2, "topology.json", text)
}

func parseSlurm(t *testing.T, text string) *location.Topology {
	t.Helper()
	return mustParse(t, location.ParseSlurm, "topology.conf", text)
}

// parseFile is parse's topology of the file at path.
func parseFile(t *testing.T, parse parser, path string) *location.Topology {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return mustParse(t, parse, path, string(data))
}

// malformed is a file parse refuses: its text and the start of the error.
type malformed struct {
	name, text, want string
}

// checkMalformed checks that parse refuses each case, read as the file
// path, with a *location.Error that starts with the case's want.
func checkMalformed(t *testing.T, parse parser, path string, cases []malformed) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parse(path, []byte(c.text))
			require.Error(t, err)
			var le *location.Error
			require.ErrorAs(t, err, &le)
			assert.True(t, strings.HasPrefix(err.Error(), c.want), "got  %s\nwant %s", err, c.want)
		})
	}
}
