package cli

import (
	"bytes"
	"flag"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// toy is a tool of two commands, one with flags of each kind.
func toy() (*Tool, *[]string) {
	var ran []string
	t := &Tool{
		Name:    "toy",
		Summary: "a tool to test the table with",
		About:   "DIR is a directory.\n",
		Version: "toy 1",
		Exits:   []Exit{{0, "fine"}, {2, "unusable input or usage: a bad flag, or anything else that is long enough to need a second line"}},
	}
	t.Commands = []*Command{
		{
			Name: "look", Summary: "look at DIR", Usage: []string{"[--json] [--depth N] -o FILE DIR"},
			Doc: "Looks at DIR.\n",
			Setup: func(fs *flag.FlagSet) func(*Invocation) int {
				asJSON := fs.Bool("json", false, "as JSON")
				depth := fs.Int("depth", 1, "look `N` levels down")
				out := fs.String("o", "", "write to `FILE`")
				return func(inv *Invocation) int {
					if len(inv.Operands) != 1 {
						return inv.UsageError("want one DIR, got %d", len(inv.Operands))
					}
					ran = append(ran, inv.Operands[0], *out)
					if *asJSON && *depth == 3 && inv.Given("depth") && !inv.Given("json2") {
						return 1
					}
					return 0
				}
			},
		},
		{
			Name: "sum", Summary: "sum it", Usage: []string{"A | B"},
			Exits: []Exit{{1, "a sum"}},
			Setup: func(fs *flag.FlagSet) func(*Invocation) int {
				return func(inv *Invocation) int { return 1 }
			},
		},
	}
	return t, &ran
}

const toyHelp = `toy: a tool to test the table with

Usage: toy look [--json] [--depth N] -o FILE DIR
       toy sum A | B
       toy COMMAND --help
       toy --version

Commands:
  look   look at DIR
  sum    sum it

DIR is a directory.

Exit codes:
  0  fine
  2  unusable input or usage: a bad flag, or anything else that is long enough
     to need a second line
`

const toyLookHelp = `Usage: toy look [--json] [--depth N] -o FILE DIR

Looks at DIR.

Flags:
  --depth N    look N levels down
  --json       as JSON
  -o FILE      write to FILE

Exit codes:
  0  fine
  2  unusable input or usage: a bad flag, or anything else that is long enough
     to need a second line
`

// toyLookUsage follows a usage error of toy look.
const toyLookUsage = "Usage: toy look [--json] [--depth N] -o FILE DIR\nRun 'toy look --help' for its flags and exit codes.\n"

func TestHelpComesFromTheTable(t *testing.T) {
	tool, _ := toy()
	var b bytes.Buffer
	tool.Help(&b)
	assert.Equal(t, toyHelp, b.String())
	b.Reset()
	tool.CommandHelp(&b, tool.Commands[0])
	assert.Equal(t, toyLookHelp, b.String())
	b.Reset()
	tool.CommandHelp(&b, tool.Commands[1])
	assert.Equal(t, "Usage: toy sum A | B\n\nExit codes:\n  1  a sum\n", b.String())
	assert.Empty(t, tool.Problems())
}

func TestMainDispatches(t *testing.T) {
	for _, tc := range []struct {
		args           []string
		code           int
		stdout, stderr string
	}{
		{args: nil, code: 2, stderr: toyHelp},
		{args: []string{"--help"}, code: 0, stdout: toyHelp},
		{args: []string{"help"}, code: 0, stdout: toyHelp},
		{args: []string{"help", "look"}, code: 0, stdout: toyLookHelp},
		{args: []string{"look", "--help"}, code: 0, stdout: toyLookHelp},
		{args: []string{"look", "-h"}, code: 0, stdout: toyLookHelp},
		{args: []string{"--version"}, code: 0, stdout: "toy 1\n"},
		{args: []string{"peek"}, code: 2, stderr: "toy: unknown command \"peek\"\n\n" + toyHelp},
		{args: []string{"look", "--bogus", "D"}, code: 2, stderr: "toy look: flag provided but not defined: -bogus\n\n" + toyLookUsage},
		{args: []string{"look"}, code: 2, stderr: "toy look: want one DIR, got 0\n\n" + toyLookUsage},
		{args: []string{"look", "D", "--json", "--depth", "3"}, code: 1},
		{args: []string{"look", "--json", "D", "-o", "F"}, code: 0},
		{args: []string{"sum"}, code: 1},
	} {
		tool, _ := toy()
		var stdout, stderr bytes.Buffer
		assert.Equal(t, tc.code, tool.Main(tc.args, &stdout, &stderr), tc.args)
		assert.Equal(t, tc.stdout, stdout.String(), tc.args)
		assert.Equal(t, tc.stderr, stderr.String(), tc.args)
	}
	// Each run parses into flags of its own: nothing carries over.
	tool, ran := toy()
	var out bytes.Buffer
	require.Equal(t, 0, tool.Main([]string{"look", "-o", "F", "D"}, &out, &out))
	require.Equal(t, 0, tool.Main([]string{"look", "E"}, &out, &out))
	assert.Equal(t, []string{"D", "F", "E", ""}, *ran)
}

func TestProblemsFindsWhatTheTableGetsWrong(t *testing.T) {
	tool, _ := toy()
	look := tool.Commands[0]
	look.Usage = []string{"[--json] [--width W] DIR"}
	setup := look.Setup
	look.Setup = func(fs *flag.FlagSet) func(*Invocation) int {
		fs.Bool("quiet", false, " ")
		return setup(fs)
	}
	tool.Commands = append(tool.Commands, &Command{Name: "sum"}, &Command{Name: "bare", Usage: []string{"X"}})
	assert.Equal(t, []string{
		"look: usage does not show --depth N",
		"look: usage does not show -o FILE",
		"look --quiet: no help text",
		"look: usage does not show --quiet",
		"look: usage shows --width, which is no flag of it",
		"sum: two commands",
		"bare: no summary, usage or Setup",
	}, tool.Problems())
}

func TestMarkdownIsEachHelpInTurn(t *testing.T) {
	tool, _ := toy()
	tool.Commands[1].Summary = "does it sum?"
	var top, look bytes.Buffer
	tool.Help(&top)
	tool.CommandHelp(&look, tool.Commands[0])
	assert.Equal(t, "# toy\n\n<!-- Generated from the command table in cmd/toy (internal/cli.Tool) by `make generate`; do not edit. -->\n\n"+
		"```\n$ toy --help\n"+top.String()+"```\n"+
		"\n## toy look\n\nLook at DIR.\n\n```\n$ toy look --help\n"+look.String()+"```\n"+
		"\n## toy sum\n\nDoes it sum?\n\n```\n$ toy sum --help\nUsage: toy sum A | B\n\nExit codes:\n  1  a sum\n```\n", tool.Markdown())
}

func TestFlagSynopsis(t *testing.T) {
	fs := NewFlagSet("x")
	fs.Bool("json", false, "")
	fs.String("o", "", "the `FILE`")
	fs.Int("n", 0, "a count")
	var got []string
	fs.VisitAll(func(f *flag.Flag) { got = append(got, FlagSynopsis(f)) })
	assert.Equal(t, []string{"--json", "-n int", "-o FILE"}, got)
}

// A command line that asks for --json gets a document on standard output
// whatever ends the run: a flag that does not parse (even before --json),
// a usage error of the command, and no document of the command's own.
func TestJSONIsAlwaysADocument(t *testing.T) {
	tool, _ := toy()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"look", "--depth", "q", "--json", "DIR"}, `{"error":"usage: invalid value \"q\" for flag -depth: parse error"}` + "\n"},
		{[]string{"look", "--json"}, `{"error":"toy look: want one DIR, got 0"}` + "\n"},
		{[]string{"look", "--json=true", "A", "B"}, `{"error":"toy look: want one DIR, got 2"}` + "\n"},
		{[]string{"--json", "look", "DIR"}, `{"error":"toy: unknown command \"--json\""}` + "\n"},
		{[]string{"bogus", "--json"}, `{"error":"toy: unknown command \"bogus\""}` + "\n"},
		// Without --json, or with it after "--" (an operand), or false:
		// nothing, as before.
		{[]string{"look", "--depth", "q", "DIR"}, ""},
		{[]string{"look", "--depth", "q", "--", "--json"}, ""},
		{[]string{"look", "--json=false"}, ""},
		// A command without a --json flag is left alone.
		{[]string{"sum", "--json"}, ""},
	} {
		var out, errOut bytes.Buffer
		assert.Equal(t, ExitUnusable, tool.Main(c.args, &out, &errOut), "%q", c.args)
		assert.Equal(t, c.want, out.String(), "%q", c.args)
		assert.NotEmpty(t, errOut.String(), "%q", c.args)
	}
	// A run that wrote its own document, or ended otherwise, gets none.
	var out bytes.Buffer
	assert.Equal(t, 1, tool.Main([]string{"look", "--json", "--depth", "3", "DIR"}, &out, &bytes.Buffer{}))
	assert.Empty(t, out.String())
}
