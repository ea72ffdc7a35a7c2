// Command nccom-rings reads the per-rank wiring dumps libnccomring writes
// when NCCOM_RING_DUMP names a directory (package ringdump) and judges the
// job as a whole. Its commands, flags and exit codes are the table below
// (tool); `nccom-rings --help` and docs/commands/nccom-rings.md show it.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/nccomring/libnccomring/internal/cli"
	"github.com/nccomring/libnccomring/internal/quote"
	"github.com/nccomring/libnccomring/ringdump"
	"github.com/nccomring/libnccomring/version"
)

// tool is nccom-rings' table of commands: its help, each command's
// --help and docs/commands/nccom-rings.md are made from it (internal/cli).
var tool = &cli.Tool{
	Name:    "nccom-rings",
	Summary: "check the per-rank wiring dumps of a job (NCCOM_RING_DUMP)",
	About: `DIR holds one rank-NNNNNN.<host>.<pid>.json file per rank, written by
libnccomring's ncclTopoPostset when the job ran with NCCOM_RING_DUMP=DIR.
`,
	Version: fmt.Sprintf("nccom-rings %s (libnccomring %s, dump format %d)", version.Library, version.Library, ringdump.FormatVersion),
	Exits:   verifyExits,
}

// init fills the table: the commands print their help from it, which a
// static initializer would make an initialization cycle.
func init() {
	tool.Commands = []*cli.Command{verifyCommand, showCommand, locateCommand, scoreCommand, planCommand, diffCommand, reportCommand}
}

// verifyExits are verify's exit codes, and the tool's.
var verifyExits = []cli.Exit{
	{Code: cli.ExitOK, Meaning: "no finding"},
	{Code: cli.ExitFinding, Meaning: "a finding: ranks that disagree on a ring, a missing rank, a rank whose ncclTopoPostset failed, two files for one rank"},
	{Code: cli.ExitUnusable, Meaning: "unusable input or usage: no such directory, no dump files in it, a file that is not a dump (named, with the byte offset), a bad flag. verify reports an unusable file as one finding among the others, checks every other rank, and exits 2 even when it also found something: the verdict misses that rank, so fix the input first"},
}

var verifyCommand = &cli.Command{
	Name:    "verify",
	Summary: "check that every rank's dump is there and that all ranks agree on every channel's ring (prev/next, one cycle, userRanks, doubling)",
	Usage:   []string{"[--json] [--junit FILE] DIR"},
	Doc: `Reads every rank's dump in DIR and checks the job as a whole: one file per
rank of nRanks, every Postset succeeded, one rank count, channel count and
node list (the ones most files give); then per channel, over every rank
whose dump is usable: each rank's next and prev, each rank's userRanks
starting at it and following the ring (stale userRanks), one cycle through
every rank, and each doubled channel c >= graphChannels repeating channel
c-graphChannels. Where the dumps carry D25's node order: one policy and
one node sequence on every rank, the rings following it, the sequence the
one the records' locations give, and one location per node, each node
placed by the library's own rule (D28: the value most of its ranks'
records carry, no location a value too, ties to its head's). A file that
cannot be read is one finding; the other ranks are still checked.

Blame: every rank's next, the prev of the rank it names and every rank's
userRanks are views of who follows whom; the value more than half of them
give is the agreed one, and a rank whose field differs is a finding
weighed by the views that contradict it. Ring findings come rank by rank,
the most contradicted rank first (ties: the lowest rank), after the
findings about files. Each finding is one line, then what to check next:

  nccom-rings: rank 3: channel 0 next is 1, but rank 1's prev is 0; 5 of 6 views have 0 after 3
    check: this rank first, as most views contradict it: its libnccomring ...

then one summary line (or one line when every rank agrees).
`,
	Setup: func(fs *flag.FlagSet) func(*cli.Invocation) int {
		var f verifyFlags
		fs.BoolVar(&f.json, "json", false, `the report as one JSON document, whatever the input: {"dir", "files", "unusable", "ranks", "channels", "nodes", "ok", "findings": [{"kind", "rank", "channel", "other", "ranks", "files", "message", "hint"}], "omitted"}; -1 where a finding is not about one rank, channel or other rank`)
		fs.StringVar(&f.junit, "junit", "", "also write `FILE` as JUnit XML for CI: a testcase \"job\" (the findings about no one rank), then one per rank, failed with its findings (an error when its dump could not be used); a FILE that cannot be written is exit 2")
		return func(inv *cli.Invocation) int { return runVerify(inv, &f) }
	},
}

type verifyFlags struct {
	json  bool
	junit string
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	return tool.Main(args, stdout, stderr)
}

// readDumps reads DIR, the one operand. Each dump file that cannot be used
// (not a regular file, larger than ringdump.MaxFileSize, not a dump) is one
// line on stderr, and the others are read on: unusable counts them, and
// the command ends with exit 2 after doing what it can with the rest. ok
// is false (exit 2, printed about) when there is no such directory or no
// usable dump in it.
func readDumps(inv *cli.Invocation, operands []string) (dir string, files []ringdump.File, unusable int, ok bool) {
	dir, files, bad, ok := readDumpsBad(inv, operands)
	return dir, files, len(bad), ok
}

// readDumpDir is ringdump.ReadDir, with a directory that holds no file
// named as the library names a dump (ringdump.FileName) an error too.
func readDumpDir(dir string) (files []ringdump.File, bad []error, err error) {
	files, bad, err = ringdump.ReadDir(dir)
	if err == nil && len(files) == 0 && len(bad) == 0 {
		err = fmt.Errorf("%s holds no rank-NNNNNN.HOST.PID.json dump files (did the job run with NCCOM_RING_DUMP=%s?)", quote.String(dir), quote.String(dir))
	}
	return files, bad, err
}

// readDumpsBad is readDumps with the errors of the unusable files, for a
// command that reports them (report hands them to verify).
func readDumpsBad(inv *cli.Invocation, operands []string) (dir string, files []ringdump.File, bad []error, ok bool) {
	if len(operands) != 1 {
		inv.UsageError("want one directory, got %d operands", len(operands))
		return "", nil, nil, false
	}
	dir = operands[0]
	files, bad, err := readDumpDir(dir)
	for _, b := range bad {
		inv.Errorf("%v", b)
	}
	if err == nil && len(files) == 0 {
		err = fmt.Errorf("%s holds no usable dump file", quote.String(dir))
	}
	if err != nil {
		inv.Errorf("%v", err)
		return "", nil, bad, false
	}
	return dir, files, bad, true
}

func runVerify(inv *cli.Invocation, f *verifyFlags) int {
	if len(inv.Operands) != 1 {
		return inv.UsageError("want one directory, got %d operands", len(inv.Operands))
	}
	rep := verifyDir(inv.Operands[0], inv.Stderr)
	if f.json {
		writeJSON(inv.Stdout, rep)
	} else {
		writeReport(inv.Stdout, rep)
	}
	return writeVerifyJUnit(inv.Stderr, f.junit, rep, verifyExit(rep))
}

// writeJSON is every --json document (cli.WriteJSON).
func writeJSON(w io.Writer, v any) {
	cli.WriteJSON(w, v) // a write error to stdout has nowhere to go
}

// count is "1 node" or "4 nodes".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
