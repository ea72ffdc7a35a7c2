package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/verify"
	"github.com/nccomring/libnccomring/internal/cli"
	"github.com/nccomring/libnccomring/internal/quote"
)

// verifyExits are verify's exit codes.
var verifyExits = cli.Exits("no finding", "a finding: ranks that disagree on a ring, a missing rank, a rank whose ncclTopoPostset failed, two files for one rank", "unusable input or usage: no such directory, no dump files in it, a file that is not a dump (named, with the byte offset), a bad flag. verify reports an unusable file as one finding among the others, checks every other rank, and exits 2 even when it also found something: the verdict misses that rank, so fix the input first")

type verifyFlags struct {
	json  bool
	junit string
}

var verifyCommand = &cli.Command{
	Name:    "verify",
	Exits:   verifyExits,
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

// verifyDir reads dir's dumps and verifies them (package verify). A dir
// that cannot be read, or holds no dump file, is a report of one unusable
// finding, also printed on stderr: --json prints a document whatever the
// input.
func verifyDir(dir string, stderr io.Writer) verify.Report {
	files, bad, err := readDumpDir(dir)
	if err != nil {
		fmt.Fprintf(stderr, "nccom-rings verify: %v\n", err)
		return verify.Unreadable(dir, err)
	}
	return verify.Check(dir, files, bad)
}

// verifyExit is verify's exit code: 2 when some input could not be used,
// even with other findings, as the verdict then misses those ranks (the
// findings are printed all the same); else 1 for a finding, 0 for none.
func verifyExit(rep verify.Report) int {
	switch {
	case rep.Unusable > 0:
		return cli.ExitUnusable
	case !rep.OK:
		return cli.ExitFinding
	}
	return cli.ExitOK
}

// writeReport prints rep as text: each finding on a line of its own, its
// hint indented under it, then one summary line.
func writeReport(w io.Writer, rep verify.Report) {
	for _, f := range rep.Findings {
		fmt.Fprintf(w, "nccom-rings: %s\n  check: %s\n", f.Message, f.Hint)
	}
	if rep.Omitted > 0 {
		fmt.Fprintf(w, "nccom-rings: and %d more %s\n", rep.Omitted, plural(rep.Omitted, "finding", "findings"))
	}
	if rep.OK {
		fmt.Fprintf(w, "nccom-rings: %s, %s, %s: every rank agrees\n", count(rep.Ranks, "rank"), count(rep.Channels, "channel"), count(rep.Nodes, "node"))
		return
	}
	unusable := ""
	if rep.Unusable > 0 {
		unusable = fmt.Sprintf(", %s unusable", count(rep.Unusable, "input"))
	}
	fmt.Fprintf(w, "nccom-rings: %s: %d %s%s\n", quote.String(rep.Dir), rep.Count(), plural(rep.Count(), "finding", "findings"), unusable)
}

// plural is one when n is 1, else many: the summary lines of verify, its
// JUnit cases and score.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
