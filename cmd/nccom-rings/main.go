// Command nccom-rings reads the per-rank wiring dumps libnccomring writes
// when NCCOM_RING_DUMP names a directory (package ringdump) and judges the
// job as a whole.
//
//	nccom-rings verify [--json] [--junit F] DIR    do all ranks agree on every ring?
//	nccom-rings show [--channel C] [--json | --dot] DIR   one channel across ranks
//	nccom-rings locate ec2:FILE|slurm:FILE [--all]  a host's NCCOM_RING_LOCATION
//	nccom-rings score [--locations FILE] DIR        the rings against the network
//	nccom-rings plan --locations F --hosts H [--ranks-per-node L]   a job without a job
//	nccom-rings diff [--json] DIR_A DIR_B           what changed between two jobs
//	nccom-rings report [--locations F] [--redact] -o FILE DIR   one HTML page of it all
//
// Exit codes: 0 nothing to report, 1 a finding (a rank that disagrees, a
// missing or failed rank, two files for one rank), 2 unusable input or
// usage (no such directory, no dumps in it, a file that is not a dump).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/nccomring/libnccomring/internal/cli"
	"github.com/nccomring/libnccomring/internal/quote"
	"github.com/nccomring/libnccomring/ringdump"
	"github.com/nccomring/libnccomring/version"
)

const exitCodesHelp = `Exit codes:
  0  no finding
  1  a finding: ranks that disagree on a ring, a missing rank, a rank whose
     ncclTopoPostset failed, two files for one rank
  2  unusable input or usage: no such directory, no dump files in it, a file
     that is not a dump (named, with the byte offset), a bad flag. verify
     reports an unusable file as one finding among the others, checks every
     other rank, and exits 2 even when it also found something: the verdict
     misses that rank, so fix the input first
`

// showExitCodesHelp is show's: it reports no findings, only the channel.
const showExitCodesHelp = `Exit codes:
  0  the channel was shown
  2  unusable input or usage: no such directory, no dump files in it, a file
     that is not a dump (named, with the byte offset), a bad flag or channel
`

// exitCodesHelpOf is the exit-code text of a subcommand's help.
func exitCodesHelpOf(name string) string {
	switch name {
	case "show":
		return showExitCodesHelp
	case "locate":
		return locateExitCodesHelp
	case "score":
		return scoreExitCodesHelp
	case "plan":
		return planExitCodesHelp
	case "diff":
		return diffExitCodesHelp
	case "report":
		return reportExitCodesHelp
	}
	return exitCodesHelp
}

const topHelp = `nccom-rings: check the per-rank wiring dumps of a job (NCCOM_RING_DUMP)

Usage: nccom-rings verify [--json] [--junit FILE] DIR
       nccom-rings show [--channel C] [--json | --dot] DIR
       nccom-rings locate [--host NAME | --instance ID | --all] ec2:FILE | slurm:FILE
       nccom-rings score [--locations FILE] [--max-excess N] [--json] DIR
       nccom-rings plan --locations FILE --hosts HOSTFILE [--ranks-per-node L] [--graph FILE]
                        [--order rank|network]... [--dump DIR] [--emit-hostfile FILE] [--json]
       nccom-rings diff [--json] DIR_A DIR_B
       nccom-rings report [--locations FILE] [--redact] -o FILE DIR
       nccom-rings COMMAND --help
       nccom-rings --version

Commands:
  verify   check that every rank's dump is there and that all ranks agree on
           every channel's ring (prev/next, one cycle, userRanks, doubling)
  show     one channel across ranks: a table, JSON, or Graphviz (--dot)
  locate   a host's NCCOM_RING_LOCATION (or every host's) from an EC2
           instance-topology JSON or a Slurm topology.conf
  score    each channel's crossings of each network level against the fewest
           a ring can have, NIC-index mismatches, channels per NIC index
  plan     what a described cluster's job would build, each --order's score
           side by side, its dumps, a hostfile in network order
  diff     what changed between two jobs' dumps: placement, channel count,
           node sequence, rings, NIC indices; one line per kind
  report   one self-contained HTML page: the rings drawn by location, one
           channel at a time, every userRanks, the score, verify's findings

DIR holds one rank-NNNNNN.<host>.<pid>.json file per rank, written by
libnccomring's ncclTopoPostset when the job ran with NCCOM_RING_DUMP=DIR.

`

const verifyHelp = `Usage: nccom-rings verify [--json] [--junit FILE] DIR

Reads every rank's dump in DIR and checks the job as a whole: one file per
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

  --json   the report as one JSON document, whatever the input: {"dir",
           "files", "unusable", "ranks", "channels", "nodes", "ok",
           "findings": [{"kind", "rank", "channel", "other", "ranks",
           "files", "message", "hint"}], "omitted"}; -1 where a finding is
           not about one rank, channel or other rank
  --junit FILE  also write FILE as JUnit XML for CI: a testcase "job" (the
           findings about no one rank), then one per rank, failed with its
           findings (an error when its dump could not be used); a FILE
           that cannot be written is exit 2

`

const showHelp = `Usage: nccom-rings show [--channel C] [--json | --dot] DIR

Shows channel C (default 0) across the ranks of DIR: each rank's node, prev,
next, NIC (from its ncclTopoGetNetDev answers, - when none) and the head of
its userRanks. It does not verify (see verify); a failed rank is shown with
its WARN, a missing rank not at all.

  --channel C  the channel to show
  --json       the same as JSON: {"channel", "nChannels", "ranks": [{"rank",
               "node", "host", "prev", "next", "dev", "userRanks", "result",
               "warn"}]}
  --dot        Graphviz for plain dot: one box per node (index and host),
               its ranks in ring order in rows, the boxes in a grid; the
               edges between nodes blue, with the sender's and receiver's
               NIC index (nccom-rings show --dot DIR | dot -Tsvg > ring.svg)

`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, topHelp+exitCodesHelp)
		return cli.ExitUnusable
	}
	switch args[0] {
	case "--version", "-version", "version":
		fmt.Fprintf(stdout, "nccom-rings %s (libnccomring %s, dump format %d)\n", version.Library, version.Library, ringdump.FormatVersion)
		return cli.ExitOK
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, topHelp+exitCodesHelp)
		return cli.ExitOK
	case "verify":
		return runVerify(args[1:], stdout, stderr)
	case "show":
		return runShow(args[1:], stdout, stderr)
	case "locate":
		return runLocate(args[1:], stdout, stderr)
	case "score":
		return runScore(args[1:], stdout, stderr)
	case "plan":
		return runPlan(args[1:], stdout, stderr)
	case "diff":
		return runDiff(args[1:], stdout, stderr)
	case "report":
		return runReport(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "nccom-rings: unknown command %q\n\n%s%s", args[0], topHelp, exitCodesHelp)
	return cli.ExitUnusable
}

// parseArgs parses fs's flags anywhere among args (cli.Parse) and returns
// the operands; ok is false when the caller should return code, after help
// went to stdout (--help) or stderr (a bad flag).
func parseArgs(fs *flag.FlagSet, help string, args []string, stdout, stderr io.Writer) (operands []string, code int, ok bool) {
	operands, err := cli.Parse(fs, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stdout, help+exitCodesHelpOf(fs.Name()))
		return nil, cli.ExitOK, false
	case err != nil:
		fmt.Fprintf(stderr, "nccom-rings %s: %v\n\n%s%s", fs.Name(), err, help, exitCodesHelpOf(fs.Name()))
		return nil, cli.ExitUnusable, false
	}
	return operands, cli.ExitOK, true
}

// readDumps reads DIR, the one operand. Each dump file that cannot be used
// (not a regular file, larger than ringdump.MaxFileSize, not a dump) is one
// line on stderr, and the others are read on: unusable counts them, and
// the command ends with exit 2 after doing what it can with the rest. ok
// is false (exit 2, printed about) when there is no such directory or no
// usable dump in it.
func readDumps(name, help string, operands []string, stderr io.Writer) (dir string, files []ringdump.File, unusable int, ok bool) {
	dir, files, bad, ok := readDumpsBad(name, help, operands, stderr)
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
func readDumpsBad(name, help string, operands []string, stderr io.Writer) (dir string, files []ringdump.File, bad []error, ok bool) {
	if len(operands) != 1 {
		fmt.Fprintf(stderr, "nccom-rings %s: want one directory, got %d operands\n\n%s%s", name, len(operands), help, exitCodesHelpOf(name))
		return "", nil, nil, false
	}
	dir = operands[0]
	files, bad, err := readDumpDir(dir)
	for _, b := range bad {
		fmt.Fprintf(stderr, "nccom-rings %s: %v\n", name, b)
	}
	if err == nil && len(files) == 0 {
		err = fmt.Errorf("%s holds no usable dump file", quote.String(dir))
	}
	if err != nil {
		fmt.Fprintf(stderr, "nccom-rings %s: %v\n", name, err)
		return "", nil, bad, false
	}
	return dir, files, bad, true
}

func runVerify(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet("verify")
	asJSON := fs.Bool("json", false, "")
	junitPath := fs.String("junit", "", "")
	operands, code, ok := parseArgs(fs, verifyHelp, args, stdout, stderr)
	if !ok {
		return code
	}
	if len(operands) != 1 {
		fmt.Fprintf(stderr, "nccom-rings verify: want one directory, got %d operands\n\n%s%s", len(operands), verifyHelp, exitCodesHelp)
		return cli.ExitUnusable
	}
	rep := verifyDir(operands[0], stderr)
	if *asJSON {
		writeJSON(stdout, rep)
	} else {
		writeReport(stdout, rep)
	}
	return writeVerifyJUnit(stderr, *junitPath, rep, verifyExit(rep))
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
