// Command nccom-rings reads the per-rank wiring dumps libnccomring writes
// when NCCOM_RING_DUMP names a directory (package ringdump) and judges the
// job as a whole. Its commands, flags and exit codes are the table below
// (tool); `nccom-rings --help` and docs/commands/nccom-rings.md show it.
package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/location"
	"github.com/nccomring/libnccomring/cmd/nccom-rings/score"
	"github.com/nccomring/libnccomring/internal/cli"
	"github.com/nccomring/libnccomring/internal/quote"
	"github.com/nccomring/libnccomring/ringdump"
	"github.com/nccomring/libnccomring/version"
)

// tool is nccom-rings' table of commands: its help, each command's
// --help and docs/commands/nccom-rings.md are made from it (internal/cli).
var tool = &cli.Tool{
	Name:    "nccom-rings",
	Summary: "check, score and plan a job's rings against its network",
	About: `DIR holds one rank-NNNNNN.<host>.<pid>.json file per rank, written by
libnccomring's ncclTopoPostset when the job ran with NCCOM_RING_DUMP=DIR.
`,
	Version:  fmt.Sprintf("nccom-rings %s (libnccomring %s, dump format %d)", version.Library, version.Library, ringdump.FormatVersion),
	Exits:    cli.Exits("nothing found", "a finding (each command's --help says which)", "unusable input or usage"),
	Commands: []*cli.Command{verifyCommand, showCommand, locateCommand, scoreCommand, planCommand, simulateCommand, diffCommand, reportCommand, abCommand},
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

// dumpedJob is the job dir's dump files describe (score.FromDumps), its
// nodes placed by the locations file when one is given (score's and
// simulate's --locations); errors name dir or the file.
func dumpedJob(dir string, files []ringdump.File, locations string) (*score.Job, error) {
	job, err := score.FromDumps(files)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", quote.String(dir), err)
	}
	if locations != "" {
		entries, err := location.ReadLocationsFile(locations)
		if err != nil {
			return nil, err
		}
		job.SetLocations(entries)
	}
	return job, nil
}

// repeated is a flag given once per value (--instances FILE...,
// simulate's --bytes), in the order given.
type repeated []string

func (r *repeated) String() string { return strings.Join(*r, ",") }

func (r *repeated) Set(v string) error {
	if v == "" {
		return fmt.Errorf("an empty value")
	}
	*r = append(*r, v)
	return nil
}
