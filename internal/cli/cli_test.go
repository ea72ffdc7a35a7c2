package cli

import (
	"errors"
	"flag"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseFlagsAnywhere(t *testing.T) {
	fs := NewFlagSet("verify")
	asJSON := fs.Bool("json", false, "")
	ops, err := Parse(fs, []string{"DIR", "--json", "OTHER", "--", "-x"})
	require.NoError(t, err)
	require.True(t, *asJSON)
	require.Equal(t, []string{"DIR", "OTHER", "-x"}, ops)

	ops, err = Parse(NewFlagSet("show"), []string{"DIR", "--help"})
	require.True(t, errors.Is(err, flag.ErrHelp))
	require.Nil(t, ops)

	_, err = Parse(NewFlagSet("show"), []string{"DIR", "--bogus"})
	require.EqualError(t, err, "flag provided but not defined: -bogus")
}
