package main

import (
	"bytes"
	"flag"
	"fmt"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/location"
	"github.com/nccomring/libnccomring/cmd/nccom-rings/report"
	"github.com/nccomring/libnccomring/cmd/nccom-rings/score"
	"github.com/nccomring/libnccomring/cmd/nccom-rings/simulate"
	"github.com/nccomring/libnccomring/cmd/nccom-rings/verify"
	"github.com/nccomring/libnccomring/internal/cli"
	"github.com/nccomring/libnccomring/internal/quote"
	"github.com/nccomring/libnccomring/internal/safefile"
	"github.com/nccomring/libnccomring/ringdump"
)

type reportFlags struct {
	out, locations   string
	redact, simulate bool
}

var reportCommand = &cli.Command{
	Name:    "report",
	Summary: "one self-contained HTML page: the rings drawn by location, one channel at a time, every userRanks, the score, verify's findings; or two jobs compared",
	Usage:   []string{"[--locations FILE] [--redact] -o FILE DIR", "[--locations FILE] [--redact] [--simulate] -o FILE DIR_A DIR_B"},
	Doc: `Writes one self-contained HTML page about the job whose dumps DIR holds
(package report), drawn with D3 (embedded; see docs/operating.md): the
ring view, one channel at a time chosen in the page (every node on a
circle, grouped by location level by level in arcs, the channel's
inter-node edges bundled along the location tree and coloured by the
outermost level they cross; zoom to a group, find a node by index, host or
rank); the group view (per level, a matrix of the edges between groups,
the cells out of a group the ring leaves more than once, which a ring with
the fewest crossings never does, outlined); the node table (index, host,
location, ranks, NIC indices); each channel's full userRanks as text;
score's table (see score); and every verify finding, its rank marked in
the picture and in the userRanks. The page loads nothing from anywhere:
open it in any browser, or attach it to a ticket (with --redact).

When a rank is missing or failed there are no rings to draw: the page then
holds verify's findings and says why.

With two directories the page compares the two jobs, A and B: each job's
summary, verify's verdict and score side by side, and between them the
crossings per ring of each location level in A and B with the fewest and
the change, the NIC-index mismatches of each, and what differs, as diff
prints it (down to every rank's own dump); then each job drawn as for
one, A left and B right (the same ring view, group view and node table,
each with its own channel and search), and its score. --locations
applies to both; --redact gives a name one token across the page.

--simulate adds each job's predicted bus bandwidth (package simulate, in
this process, as nccom-rings simulate predicts it): AllReduce of 256 MiB
on the rings as built, 1:1 (non-blocking), spray routing, simulate's
default NIC rate and latency, the model's assumptions listed beside it.
It is off by default: a plain report reads the dumps only, needs no
SimGrid and takes the same time on every machine. Without the SimGrid
engine the page says the figure is not available and why, and the exit
is as without --simulate (the line on stderr says so too).
`,
	Exits: cli.Exits("the page was written and verify found nothing (in either job)", "the page was written and holds verify's findings (of either job); two jobs that differ are no finding here (diff's exit says so)", "unusable input or usage: no such directory, no usable dump in it, a bad locations file, a page that cannot be written, a bad flag; or the page was written but some dump files could not be used (as verify)"),
	Setup: func(fs *flag.FlagSet) func(*cli.Invocation) int {
		var f reportFlags
		fs.StringVar(&f.out, "o", "", "the page to write, `FILE` (\"-\": standard output)")
		fs.StringVar(&f.locations, "locations", "", `"HOST LOCATION" lines (nccom-rings locate --all) in `+"`FILE`"+`, as score`)
		fs.BoolVar(&f.simulate, "simulate", false, "with DIR_A DIR_B: each job's predicted AllReduce bus bandwidth, 256 MiB, flat ring, 1:1, spray (nccom-rings simulate's model; needs its SimGrid engine)")
		fs.BoolVar(&f.redact, "redact", false, "host names, EC2 instance ids and location names replaced by tokens (host-1, instance-1, loc-1: one name, one token in the page), the dump directory by DIR (DIR_A, DIR_B)")
		return func(inv *cli.Invocation) int { return runReport(inv, &f) }
	},
}

func runReport(inv *cli.Invocation, f *reportFlags) int {
	stdout, stderr := inv.Stdout, inv.Stderr
	if f.out == "" {
		return inv.UsageError("-o FILE is needed")
	}
	if len(inv.Operands) == 2 {
		return runCompare(inv, f)
	}
	if f.simulate {
		return inv.UsageError("--simulate compares two jobs' predicted bus bandwidth: give DIR_A DIR_B (nccom-rings simulate DIR predicts one)")
	}
	dir, files, bad, ok := readDumpsBad(inv, inv.Operands)
	if !ok {
		return cli.ExitUnusable
	}
	in, rep, ok := reportInput(inv, f, dir, files, bad)
	if !ok {
		return cli.ExitUnusable
	}
	var page bytes.Buffer
	if err := report.Write(&page, in); err != nil {
		fmt.Fprintf(stderr, "nccom-rings report: %s: %v\n", quote.String(dir), err)
		return cli.ExitUnusable
	}
	if !writePage(inv, f.out, page.Bytes()) {
		return cli.ExitUnusable
	}
	if f.out != "-" {
		fmt.Fprintf(stdout, "nccom-rings report: wrote %s: %s; %s\n", quote.String(f.out), jobSummary(in), count(rep.Count(), "finding"))
	}
	return verifyExit(rep)
}

// reportInput verifies and scores one job's dumps for a page; ok is false
// (exit 2, said on stderr) when the locations file is unusable.
func reportInput(inv *cli.Invocation, f *reportFlags, dir string, files []ringdump.File, bad []error) (report.Input, verify.Report, bool) {
	rep := verify.Check(dir, files, bad)
	in := report.Input{Dir: dir, LocationsFrom: "dumps", Findings: rep.Findings, Omitted: rep.Omitted, Unusable: rep.Unusable, Redact: f.redact}
	job, err := score.FromDumps(files)
	if err == nil && f.locations != "" {
		entries, lerr := location.ReadLocationsFile(f.locations)
		if lerr != nil {
			fmt.Fprintf(inv.Stderr, "nccom-rings report: %v\n", lerr)
			return in, rep, false
		}
		job.SetLocations(entries)
		in.LocationsFrom = f.locations
	}
	if err == nil {
		in.Score, err = score.Compute(job)
	}
	if err == nil && in.Score.Located < job.NNodes {
		first := 0
		for m, l := range job.Location {
			if l == "" {
				first = m
				break
			}
		}
		fmt.Fprintf(inv.Stderr, "nccom-rings report: %d of %d nodes located (host %s first without): %s\n", in.Score.Located, job.NNodes, quote.String(job.Host[first]), whyUnlocated(in.LocationsFrom))
	}
	if err != nil {
		in.JobError = err.Error()
	} else {
		in.Job = job
	}
	return in, rep, true
}

// jobSummary is "512 ranks, 16 nodes, 16 channels", or why there are no
// rings.
func jobSummary(in report.Input) string {
	if j := in.Job; j != nil {
		return fmt.Sprintf("%s, %s, %s", count(j.NRanks, "rank"), count(j.NNodes, "node"), count(len(j.Rings), "channel"))
	}
	return "no rings (" + in.JobError + ")"
}

// writePage writes a page to out ("-": standard output).
func writePage(inv *cli.Invocation, out string, page []byte) bool {
	if out == "-" {
		inv.Stdout.Write(page)
		return true
	}
	if err := safefile.WriteFile(out, page, 0o644); err != nil {
		fmt.Fprintf(inv.Stderr, "nccom-rings report: %v\n", err)
		return false
	}
	return true
}

// runCompare writes the page of two jobs (report DIR_A DIR_B). Both are
// read, whatever the first gives, so that one run names every unusable
// file; a job without rings is a side of the page that says why.
func runCompare(inv *cli.Invocation, f *reportFlags) int {
	var ins [2]report.Input
	var reps [2]verify.Report
	for i, dir := range inv.Operands {
		_, files, bad, ok := readDumpsBad(inv, []string{dir})
		if !ok {
			return cli.ExitUnusable
		}
		if ins[i], reps[i], ok = reportInput(inv, f, dir, files, bad); !ok {
			return cli.ExitUnusable
		}
	}
	c := report.Compare{A: ins[0], B: ins[1]}
	if ins[0].Job != nil && ins[1].Job != nil {
		comparePrediction(inv, f, &c)
	}
	var page bytes.Buffer
	if err := report.WriteCompare(&page, c); err != nil {
		fmt.Fprintf(inv.Stderr, "nccom-rings report: %s, %s: %v\n", quote.String(ins[0].Dir), quote.String(ins[1].Dir), err)
		return cli.ExitUnusable
	}
	if !writePage(inv, f.out, page.Bytes()) {
		return cli.ExitUnusable
	}
	if f.out != "-" {
		change := ""
		if ins[0].Score != nil && ins[1].Score != nil {
			change = "; " + score.CompareScores(ins[0].Score, ins[1].Score).Text()[0]
		}
		fmt.Fprintf(inv.Stdout, "nccom-rings report: wrote %s: %s -> %s%s; %s\n", quote.String(f.out), jobSummary(ins[0]), jobSummary(ins[1]), change, count(reps[0].Count()+reps[1].Count(), "finding"))
	}
	// The worse of the two verdicts: the exit codes rank unusable input
	// over findings over none.
	return max(verifyExit(reps[0]), verifyExit(reps[1]))
}

// comparePrediction sets c's predicted bus bandwidth (--simulate): each
// job's flat AllReduce at 1:1 from quickAllReduce, the simulate package
// run here; or why the page has none. Without the engine the page and a
// line on stderr say so, and the exit is the page's as without it.
func comparePrediction(inv *cli.Invocation, f *reportFlags, c *report.Compare) {
	if !f.simulate {
		c.NoPrediction = "not computed (nccom-rings report --simulate predicts it, with the SimGrid engine built)"
		return
	}
	if _, err := simulate.FindEngine(); err != nil {
		c.NoPrediction = "not available (SimGrid engine not built: " + simulate.InstallLine + ")"
		fmt.Fprintf(inv.Stderr, "nccom-rings report: --simulate: predicted bus bandwidth %s\n", c.NoPrediction)
		return
	}
	opt, _ := quickOptions("1") // "1" always parses
	c.Assumptions = simulate.Assumptions(opt)
	c.PredictBusBandwidth = func(j *score.Job) (float64, error) {
		preds, err := quickAllReduce("", j, "1")
		if err != nil {
			return 0, err
		}
		return preds[0].BusbwGbps, nil
	}
	c.Predicted = fmt.Sprintf("AllReduce of %d MiB (nccl-tests' size) on each job's rings as built (--algorithm flat), "+
		"oversubscription 1:1 (non-blocking, simulate's first row: at 1:1 two orders often predict alike, "+
		"and nccom-rings simulate DIR_A DIR_B also gives 2:1 and 4:1), spray routing, NIC %g Gbit/s, %d us a hop",
		quickBytes>>20, float64(defaultNICGbps), defaultLatency.Microseconds())
}
