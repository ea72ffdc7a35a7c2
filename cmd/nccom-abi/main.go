// Command nccom-abi checks a libnccom build against the layout libnccomring
// assumes (layout/, D2 and D3), from that build's own DWARF, and tells
// whether LD_PRELOAD can replace its four ring-stage functions. It reads
// the file with debug/elf and debug/dwarf only and never loads or runs
// it. Its commands, flags and exit codes are the table below (tool);
// `nccom-abi --help` and docs/commands/nccom-abi.md show it.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/nccomring/libnccomring/internal/cli"
	"github.com/nccomring/libnccomring/internal/junit"
	"github.com/nccomring/libnccomring/internal/quote"
	"github.com/nccomring/libnccomring/version"
)

// tool is nccom-abi's table of commands: its help, each command's --help
// and docs/commands/nccom-abi.md are made from it (internal/cli).
var tool = &cli.Tool{
	Name:    "nccom-abi",
	Summary: "check a libnccom build's ring-stage ABI from its own DWARF",
	About: `LIB is a libnccom shared object built with debug info (-g), or its separate
debug file. nccom-abi reads it with Go's debug/elf and debug/dwarf; it never
loads or runs it.
`,
	Version:  fmt.Sprintf("nccom-abi %s (libnccomring %s)", version.Library, version.Library),
	Exits:    cli.Exits("no finding", "a finding (check: a size or field differs from layout/; preload: a function LD_PRELOAD cannot replace everywhere; profile: a field missing or a documented field that differs)", "unusable input or usage: not an ELF file, no DWARF, a struct missing entirely, a bad flag; the message says what to do. Also a file beyond the reader's limits (abicheck/limits.go: a DWARF section over 256 MiB, compressed or not, a type that contains itself, ...), on one line"),
	Commands: []*cli.Command{checkCommand, preloadCommand, dumpCommand, profileCommand},
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	return tool.Main(args, stdout, stderr)
}

// libraryFlags are the flags of check and preload, the two commands that
// judge LIB.
type libraryFlags struct {
	json  bool
	junit string
}

// judgeSetup is the Setup of check and preload: their flags, then
// runJudge with judge.
func judgeSetup[R judged](judge func(path string) (R, error)) func(*flag.FlagSet) func(*cli.Invocation) int {
	return func(fs *flag.FlagSet) func(*cli.Invocation) int {
		var f libraryFlags
		fs.BoolVar(&f.json, "json", false, `one JSON object on stdout instead of the tables (on unusable input: {"library", "error", "hint"})`)
		fs.StringVar(&f.junit, "junit", "", "also write `FILE` as JUnit XML for CI: one testcase per check, a failure with the finding, an error (one testcase) on unusable input; a FILE that cannot be written is exit 2")
		return func(inv *cli.Invocation) int {
			return runJudge(inv, &f, func(path string) (judged, error) { return judge(path) })
		}
	}
}

// judged is what check or preload made of LIB: --json prints the value
// itself.
type judged interface {
	passed() bool        // nothing found
	cases() []junit.Case // --junit's testcases
	print(w io.Writer)   // the text report
}

// runJudge is check and preload: judge LIB, the one operand, then print
// the verdict as text or JSON and write it as JUnit; unusable input is
// exit 2, a finding 1.
func runJudge(inv *cli.Invocation, f *libraryFlags, judge func(path string) (judged, error)) int {
	if len(inv.Operands) != 1 {
		return inv.UsageError("give exactly one LIB")
	}
	name, path := inv.Command.Name, inv.Operands[0]
	v, err := judge(path)
	if err != nil {
		if f.json {
			writeJSONError(inv.Stdout, path, err)
		}
		return writeJUnit(inv.Stderr, f.junit, name, path, nil, err, reportError(inv.Stderr, name, err))
	}
	if f.json {
		if err := writeJSON(inv.Stdout, v); err != nil {
			return reportError(inv.Stderr, name, err)
		}
	} else {
		v.print(inv.Stdout)
	}
	code := cli.ExitOK
	if !v.passed() {
		code = cli.ExitFinding
	}
	return writeJUnit(inv.Stderr, f.junit, name, path, v.cases(), nil, code)
}

// reportError prints err for a subcommand and returns its exit code:
// unusable input is 2, anything else (a read error in the middle of the
// DWARF, say) is 2 as well, since no verdict was reached. The text may
// carry the LIB operand, which shows with its hidden characters escaped
// (quote.Visible, issue 34 F7).
func reportError(stderr io.Writer, name string, err error) int {
	fmt.Fprintf(stderr, "nccom-abi %s: %s\n", name, quote.Visible(strings.TrimSpace(err.Error())))
	return cli.ExitUnusable
}
