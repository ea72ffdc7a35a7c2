package main

import (
	"fmt"
	"io"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/verify"
	"github.com/nccomring/libnccomring/internal/cli"
	"github.com/nccomring/libnccomring/internal/quote"
)

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
