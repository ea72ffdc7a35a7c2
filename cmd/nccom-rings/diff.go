package main

import (
	"flag"
	"fmt"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/score"
	"github.com/nccomring/libnccomring/internal/cli"
	"github.com/nccomring/libnccomring/internal/quote"
)

type diffFlags struct{ json bool }

var diffCommand = &cli.Command{
	Name:    "diff",
	Summary: "what changed between two jobs' dumps: placement, channel count, node sequence, rings, NIC indices; one line per kind",
	Usage:   []string{"[--json] DIR_A DIR_B"},
	Doc: `What changed from the job whose dumps DIR_A holds to DIR_B's (two runs, two
library versions, two orders): the rank and node counts, where ranks and
hosts are (a rank on another node, a node on another host), the nodes'
locations, the channel count, the node sequence of each channel, the rings
(each rank's next, channel by channel) and the NIC index of each rank on
each channel. One line per kind of change, with its first instance and how
many differ. Each job is read as score reads it: one successful dump per
rank, the rings of its lowest rank; diff does not verify (verify does).
`,
	Exits: cli.Exits("the two jobs are the same in every respect above", "they differ (one line per kind of change)", "unusable input or usage: not two directories, no dumps, a file that is not a dump, a missing or failed rank, a bad flag"),
	Setup: func(fs *flag.FlagSet) func(*cli.Invocation) int {
		var f diffFlags
		fs.BoolVar(&f.json, "json", false, `{"a", "b", "same", "changes": [{"kind", "text", "count"}]}; on unusable input the same with "error" (exit 2)`)
		return func(inv *cli.Invocation) int { return runDiff(inv, &f) }
	},
}

type diffReport struct {
	A       string         `json:"a"`
	B       string         `json:"b"`
	Same    bool           `json:"same"`
	Changes []score.Change `json:"changes"`
	// Error says why there is no comparison (exit 2); the details are on
	// stderr. --json prints a document either way.
	Error string `json:"error,omitempty"`
}

func runDiff(inv *cli.Invocation, f *diffFlags) int {
	operands, stdout, stderr := inv.Operands, inv.Stdout, inv.Stderr
	if len(operands) != 2 {
		return inv.UsageError("want two directories, got %d operands", len(operands))
	}
	// Both are read, whatever the first gives, so that one run names
	// every unusable file.
	var jobs [2]*score.Job
	unusable := 0
	for i, dir := range operands {
		_, files, bad, ok := readDumps(inv, operands[i:i+1])
		unusable += bad
		if !ok {
			unusable++
			continue
		}
		job, err := score.FromDumps(files)
		if err != nil {
			fmt.Fprintf(stderr, "nccom-rings diff: %s: %v\n", quote.String(dir), err)
			unusable++
			continue
		}
		jobs[i] = job
	}
	if jobs[0] == nil || jobs[1] == nil {
		if f.json {
			writeJSON(stdout, diffReport{A: operands[0], B: operands[1], Changes: []score.Change{}, Error: "unusable input (named on stderr)"})
		}
		return cli.ExitUnusable
	}
	rep := diffReport{A: operands[0], B: operands[1], Changes: score.Diff(jobs[0], jobs[1])}
	rep.Same = len(rep.Changes) == 0
	if rep.Changes == nil {
		rep.Changes = []score.Change{}
	}
	if f.json {
		writeJSON(stdout, rep)
	} else {
		for _, c := range rep.Changes {
			fmt.Fprintf(stdout, "nccom-rings diff: %s: %s\n", c.Kind, c.Text)
		}
		if rep.Same {
			j := jobs[0]
			fmt.Fprintf(stdout, "nccom-rings diff: the same job: %s, %s, %s, the same rings and NIC indices\n",
				count(j.NRanks, "rank"), count(j.NNodes, "node"), count(len(j.Rings), "channel"))
		}
	}
	switch {
	case unusable > 0:
		return cli.ExitUnusable
	case !rep.Same:
		return cli.ExitFinding
	}
	return cli.ExitOK
}
