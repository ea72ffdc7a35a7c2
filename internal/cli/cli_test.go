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

// Everything after the "--" that ends the flags is an operand, however
// many follow and wherever the "--" stands; "--" as a flag's value is not
// that terminator.
func TestParseTerminator(t *testing.T) {
	for _, tc := range []struct {
		args, want []string
		name       string
	}{
		{args: []string{"--", "-a", "-b"}, want: []string{"-a", "-b"}, name: "0"},
		{args: []string{"DIR", "--", "-a", "--json"}, want: []string{"DIR", "-a", "--json"}, name: "0"},
		{args: []string{"--json", "--", "-a", "-b"}, want: []string{"-a", "-b"}, name: "0"},
		{args: []string{"DIR", "-name", "--", "OTHER"}, want: []string{"DIR", "OTHER"}, name: "--"},
		{args: []string{"DIR", "-name=x", "--", "-a", "-b"}, want: []string{"DIR", "-a", "-b"}, name: "x"},
	} {
		fs := NewFlagSet("show")
		fs.Bool("json", false, "")
		name := fs.String("name", "0", "")
		ops, err := Parse(fs, tc.args)
		require.NoError(t, err, tc.args)
		require.Equal(t, tc.want, ops, tc.args)
		require.Equal(t, tc.name, *name, tc.args)
	}
}
