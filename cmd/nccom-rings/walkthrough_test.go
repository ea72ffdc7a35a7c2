package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/internal/cli"
)

// The operator's example of docs/node-order.md, section "An example end
// to end: 16 hosts in 4 leaves" (issue 36): this test reads the section,
// runs every command it shows, in its order, on the same files
// (testdata/cluster16), and checks every output line and exit code it
// quotes, so the example cannot silently go stale. What it understands of
// the shell is what the section uses:
//
//   - in ```sh blocks: NAME=VALUE (then $NAME in later commands), and
//     make and mkdir, which it skips (the tool runs in process, the work
//     directory is a temporary one);
//   - in ```console blocks: "$ build/nccom-rings ARGS [> FILE]",
//     "$ head -n N FILE" and "$ echo $?"; the lines up to the next "$ "
//     are the command's output, stdout and stderr together, each line
//     found in order in one of them; "..." marks lines left out, and a
//     command without it shows all of its output. A command not followed
//     by "echo $?" must exit 0.
//
// Paths are the section's, from the repository's top directory: build/c16
// is the test's temporary directory, cmd/nccom-rings/testdata/cluster16
// this package's testdata/cluster16.
const walkthroughDoc = "../../docs/node-order.md"
const walkthroughSection = "### An example end to end: 16 hosts in 4 leaves"

type walkStep struct {
	line     int    // in the doc
	command  string // after "$ ", or a line of a sh block
	expected []string
	trimmed  bool
}

// walkthroughSteps reads the section's commands and their outputs.
func walkthroughSteps(t *testing.T) []walkStep {
	t.Helper()
	data, err := os.ReadFile(walkthroughDoc)
	require.NoError(t, err)
	lines := strings.Split(string(data), "\n")
	start := slices.Index(lines, walkthroughSection)
	require.GreaterOrEqual(t, start, 0, "%s has no line %q", walkthroughDoc, walkthroughSection)
	var steps []walkStep
	fence := "" // "sh" or "console" inside a block
	for i := start + 1; i < len(lines); i++ {
		line := lines[i]
		if fence == "" && (strings.HasPrefix(line, "## ") || strings.HasPrefix(line, "### ")) {
			break // the next section
		}
		if strings.HasPrefix(line, "```") {
			if fence != "" {
				fence = ""
			} else {
				fence = strings.TrimPrefix(line, "```")
				require.Contains(t, []string{"sh", "console"}, fence, "%s:%d: a block the test cannot run", walkthroughDoc, i+1)
			}
			continue
		}
		switch {
		case fence == "sh":
			steps = append(steps, walkStep{line: i + 1, command: line})
		case fence == "console" && strings.HasPrefix(line, "$ "):
			steps = append(steps, walkStep{line: i + 1, command: strings.TrimPrefix(line, "$ ")})
		case fence == "console":
			require.NotEmpty(t, steps, "%s:%d: output before any command", walkthroughDoc, i+1)
			s := &steps[len(steps)-1]
			if line == "..." {
				s.trimmed = true
			} else {
				s.expected = append(s.expected, line)
			}
		}
	}
	require.Empty(t, fence, "the section ends inside a block")
	return steps
}

func TestNodeOrderWalkthrough(t *testing.T) {
	noHostHints(t)
	steps := walkthroughSteps(t)
	work := t.TempDir()
	const docData, testData = "cmd/nccom-rings/testdata/cluster16", "testdata/cluster16"
	vars := map[string]string{}
	// toTest turns the section's paths into the test's, fromTest back.
	toTest := func(arg string) string {
		arg = os.Expand(arg, func(k string) string {
			v, ok := vars[k]
			require.True(t, ok, "$%s is not set in the section", k)
			return v
		})
		arg = strings.ReplaceAll(arg, docData, testData)
		return strings.ReplaceAll(arg, "build/c16", work)
	}
	fromTest := func(text string) string {
		text = strings.ReplaceAll(text, work, "build/c16")
		return strings.ReplaceAll(text, testData+"/", docData+"/")
	}
	splitLines := func(s string) []string {
		if s == "" {
			return nil
		}
		return strings.Split(strings.TrimSuffix(fromTest(s), "\n"), "\n")
	}

	lastCode, lastChecked := cli.ExitOK, true
	ran := map[string]int{} // subcommand: times run
	for _, s := range steps {
		where := walkthroughDoc + ":" + strconv.Itoa(s.line) + ": " + s.command
		f := strings.Fields(s.command)
		if len(f) == 0 {
			continue
		}
		var stdout, stderr string
		switch {
		case len(f) == 1 && strings.Contains(f[0], "="):
			k, v, _ := strings.Cut(f[0], "=")
			vars[k] = v
			continue
		case f[0] == "make" || f[0] == "mkdir":
			continue
		case f[0] == "echo" && len(f) == 2 && f[1] == "$?":
			stdout = strconv.Itoa(lastCode) + "\n"
			lastChecked = true
		case f[0] == "head" && len(f) == 4 && f[1] == "-n":
			n, err := strconv.Atoi(f[2])
			require.NoError(t, err, where)
			data, err := os.ReadFile(toTest(f[3]))
			require.NoError(t, err, where)
			all := strings.SplitAfter(string(data), "\n")
			stdout = strings.Join(all[:min(n, len(all))], "")
		case f[0] == "build/nccom-rings":
			require.True(t, lastChecked, "the command before %s exited %d, and the section shows no echo $?", where, lastCode)
			args := f[1:]
			redirect := ""
			if i := slices.Index(args, ">"); i >= 0 {
				require.Len(t, args, i+2, where)
				redirect = args[i+1]
				args = args[:i]
			}
			for i := range args {
				args[i] = toTest(args[i])
			}
			lastCode, stdout, stderr = runTool(args...)
			lastChecked = false
			ran[args[0]]++
			if redirect != "" {
				if redirect != "/dev/null" {
					require.NoError(t, os.WriteFile(toTest(redirect), []byte(stdout), 0o644), where)
				}
				stdout = ""
			}
		default:
			t.Fatalf("%s: a command the test cannot run", where)
		}
		if lastCode == cli.ExitOK {
			lastChecked = true // exit 0 needs no echo $?
		}

		out, errOut := splitLines(stdout), splitLines(stderr)
		if !s.trimmed {
			assert.Len(t, s.expected, len(out)+len(errOut), "%s: the section shows all of its output (or says ...)\nstdout:\n%s\nstderr:\n%s", where, fromTest(stdout), fromTest(stderr))
		}
		// Each shown line, in order, in stdout or stderr.
		i, j := 0, 0
		for _, want := range s.expected {
			if k := slices.Index(out[i:], want); k >= 0 {
				i += k + 1
			} else if k := slices.Index(errOut[j:], want); k >= 0 {
				j += k + 1
			} else {
				t.Errorf("%s: no line\n\t%s\nin its output, in this order\nstdout:\n%s\nstderr:\n%s", where, want, fromTest(stdout), fromTest(stderr))
			}
		}
	}
	require.True(t, lastChecked, "the section's last command exited %d, and the section shows no echo $?", lastCode)

	// The section is the example the issue asks for: locate, plan
	// (--emit-hostfile), score, report and diff, each run.
	for _, sub := range []string{"locate", "plan", "score", "report", "diff"} {
		assert.NotZero(t, ran[sub], "the section runs no nccom-rings %s", sub)
	}
	for _, page := range []string{"rank.html", "network.html"} {
		info, err := os.Stat(filepath.Join(work, page))
		require.NoError(t, err, "report -o wrote no page")
		assert.NotZero(t, info.Size())
	}

	// The figures the section quotes, asked again through --json: 16 of
	// 16 hosts located; the hostfile's order 4 crossings of the spines
	// (fewest 2) and 6 of the leaves (fewest 4), the network order the
	// fewest; the emitted hostfile, in rank order, the network order's.
	rep := planJSON(t, cli.ExitOK, "--locations", filepath.Join(work, "locations"), "--hosts", c16Sorted, "--instances", c16Instances)
	assert.Equal(t, 16, rep.Located)
	require.Len(t, rep.Plans, 2)
	figures := func(p planned) [][2]int {
		var out [][2]int
		for _, l := range p.Score.Channels[0].Levels {
			out = append(out, [2]int{l.Crossings, l.Minimum})
		}
		return out
	}
	assert.Equal(t, [][2]int{{0, 0}, {4, 2}, {6, 4}}, figures(rep.Plans[0]), "rank order: crossings, fewest per level")
	assert.Equal(t, [][2]int{{0, 0}, {2, 2}, {4, 4}}, figures(rep.Plans[1]), "network order")
	again := planJSON(t, cli.ExitOK, "--locations", filepath.Join(work, "locations"), "--hosts", filepath.Join(work, "hosts-network.txt"), "--instances", c16Instances, "--order", "rank")
	require.Len(t, again.Plans, 1)
	assert.Equal(t, figures(rep.Plans[1]), figures(again.Plans[0]), "the emitted hostfile in rank order")
}
