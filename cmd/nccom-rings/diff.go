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
	Summary: "what changed between two jobs' dumps: crossings per level, NIC-index mismatches, placement, rings, every rank's own dump; one line per kind",
	Usage:   []string{"[--json] DIR_A DIR_B"},
	Doc: `What changed from the job whose dumps DIR_A holds to DIR_B's (two runs, two
library versions, two orders). First the score of each (as score computes
it, from the dumps' locations): the crossings per ring of each location
level, A -> B, with the fewest a ring can have, and the NIC-index
mismatches. Then what differs, one line per kind of change with its first
instance and how many differ: the rank and node counts, where ranks and
hosts are (a rank on another node, a node on another host), the nodes'
locations, the channel count, the node sequence of each channel, the rings
(each rank's next, channel by channel, from the lowest rank's dump), the
NIC index of each rank on each channel, and every rank's own dump (its
host, node, node heads, channels' prev, next and userRanks, node order and
NIC answers; not its process id or library version), so that a job one
rank saw otherwise is another job: the first rank named with what differs
in its dump, and the ranks that differ. A change of score alone is not a
kind: a job that crosses more has other rings or locations. Each job is
read as score reads it: one successful dump per rank; diff does not
verify (verify does).
`,
	Exits: cli.Exits("the two jobs are the same in every respect above", "they differ (one line per kind of change)", "unusable input or usage: not two directories, no dumps, a file that is not a dump, a missing or failed rank, a bad flag"),
	Setup: func(fs *flag.FlagSet) func(*cli.Invocation) int {
		var f diffFlags
		fs.BoolVar(&f.json, "json", false, `{"a", "b", "same", "score": {"levels": [{"level", "a", "b"}] (each job's {"groups", "fewest", "perChannel", "least", "most"}, null past its levels), "nicMismatches": [A, B], "interNodeEdges": [A, B]}, "changes": [{"kind", "text", "count", "ranks" (rank views: [{"rank", "what"}], the first 20)}]}; on unusable input the same with "error" and no "score" (exit 2)`)
		return func(inv *cli.Invocation) int { return runDiff(inv, &f) }
	},
}

type diffReport struct {
	A       string             `json:"a"`
	B       string             `json:"b"`
	Same    bool               `json:"same"`
	Score   *score.ScoreChange `json:"score,omitempty"`
	Changes []score.Change     `json:"changes"`
	// Error says why there is no comparison (exit 2); the details are on
	// stderr. --json prints a document either way.
	Error string `json:"error,omitempty"`
}

// readJob is the job DIR's dumps describe, or nil after saying on stderr
// why there is none; bad counts the dump files it could not use.
func readJob(inv *cli.Invocation, dir string) (job *score.Job, bad int) {
	_, files, bad, ok := readDumps(inv, []string{dir})
	if !ok {
		return nil, bad
	}
	job, err := dumpedJob(dir, files, "")
	if err != nil {
		fmt.Fprintf(inv.Stderr, "nccom-rings diff: %v\n", err)
		return nil, bad
	}
	return job, bad
}

func runDiff(inv *cli.Invocation, f *diffFlags) int {
	operands, stdout := inv.Operands, inv.Stdout
	if len(operands) != 2 {
		return inv.UsageError("want two directories, got %d operands", len(operands))
	}
	// Both are read, whatever the first gives, so that one run names
	// every unusable file.
	var jobs [2]*score.Job
	var scores [2]*score.Score
	unusable := 0
	for i, dir := range operands {
		job, bad := readJob(inv, dir)
		unusable += bad
		if job == nil {
			unusable++
			continue
		}
		s, err := score.Compute(job)
		if err != nil {
			fmt.Fprintf(inv.Stderr, "nccom-rings diff: %s: %v\n", quote.String(dir), err)
			unusable++
			continue
		}
		jobs[i], scores[i] = job, s
	}
	if jobs[0] == nil || jobs[1] == nil {
		if f.json {
			writeJSON(stdout, diffReport{A: operands[0], B: operands[1], Changes: []score.Change{}, Error: "unusable input (named on stderr)"})
		}
		return cli.ExitUnusable
	}
	change := score.CompareScores(scores[0], scores[1])
	rep := diffReport{A: operands[0], B: operands[1], Score: &change, Changes: score.Diff(jobs[0], jobs[1])}
	rep.Same = len(rep.Changes) == 0
	if rep.Changes == nil {
		rep.Changes = []score.Change{}
	}
	if f.json {
		writeJSON(stdout, rep)
	} else {
		for _, line := range change.Text() {
			fmt.Fprintf(stdout, "nccom-rings diff: %s\n", line)
		}
		for _, c := range rep.Changes {
			fmt.Fprintf(stdout, "nccom-rings diff: %s: %s\n", c.Kind, c.Text)
		}
		if rep.Same {
			j := jobs[0]
			fmt.Fprintf(stdout, "nccom-rings diff: the same job: %s, %s, %s, the same rings, NIC indices and dumps of every rank\n",
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
