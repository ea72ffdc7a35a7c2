package main

import (
	"bytes"
	"flag"
	"fmt"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/location"
	"github.com/nccomring/libnccomring/cmd/nccom-rings/report"
	"github.com/nccomring/libnccomring/cmd/nccom-rings/score"
	"github.com/nccomring/libnccomring/cmd/nccom-rings/verify"
	"github.com/nccomring/libnccomring/internal/cli"
	"github.com/nccomring/libnccomring/internal/quote"
	"github.com/nccomring/libnccomring/internal/safefile"
)

type reportFlags struct {
	out, locations string
	redact         bool
}

var reportCommand = &cli.Command{
	Name:    "report",
	Summary: "one self-contained HTML page: the rings drawn by location, one channel at a time, every userRanks, the score, verify's findings",
	Usage:   []string{"[--locations FILE] [--redact] -o FILE DIR"},
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
`,
	Exits: cli.Exits("the page was written and verify found nothing", "the page was written and holds verify's findings", "unusable input or usage: no such directory, no usable dump in it, a bad locations file, a page that cannot be written, a bad flag; or the page was written but some dump files could not be used (as verify)"),
	Setup: func(fs *flag.FlagSet) func(*cli.Invocation) int {
		var f reportFlags
		fs.StringVar(&f.out, "o", "", "the page to write, `FILE` (\"-\": standard output)")
		fs.StringVar(&f.locations, "locations", "", `"HOST LOCATION" lines (nccom-rings locate --all) in `+"`FILE`"+`, as score`)
		fs.BoolVar(&f.redact, "redact", false, "host names, EC2 instance ids and location names replaced by tokens (host-1, instance-1, loc-1: one name, one token in the page), the dump directory by DIR")
		return func(inv *cli.Invocation) int { return runReport(inv, &f) }
	},
}

func runReport(inv *cli.Invocation, f *reportFlags) int {
	stdout, stderr := inv.Stdout, inv.Stderr
	if f.out == "" {
		return inv.UsageError("-o FILE is needed")
	}
	dir, files, bad, ok := readDumpsBad(inv, inv.Operands)
	if !ok {
		return cli.ExitUnusable
	}
	rep := verify.Check(dir, files, bad)
	in := report.Input{Dir: dir, LocationsFrom: "dumps", Findings: rep.Findings, Omitted: rep.Omitted, Unusable: rep.Unusable, Redact: f.redact}
	job, err := score.FromDumps(files)
	if err == nil && f.locations != "" {
		entries, lerr := location.ReadLocationsFile(f.locations)
		if lerr != nil {
			fmt.Fprintf(stderr, "nccom-rings report: %v\n", lerr)
			return cli.ExitUnusable
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
		fmt.Fprintf(stderr, "nccom-rings report: %d of %d nodes located (host %s first without): %s\n", in.Score.Located, job.NNodes, quote.String(job.Host[first]), whyUnlocated(in.LocationsFrom))
	}
	if err != nil {
		in.JobError = err.Error()
	} else {
		in.Job = job
	}
	var page bytes.Buffer
	if err := report.Write(&page, in); err != nil {
		fmt.Fprintf(stderr, "nccom-rings report: %s: %v\n", quote.String(dir), err)
		return cli.ExitUnusable
	}
	if f.out == "-" {
		stdout.Write(page.Bytes())
	} else {
		if err := safefile.WriteFile(f.out, page.Bytes(), 0o644); err != nil {
			fmt.Fprintf(stderr, "nccom-rings report: %v\n", err)
			return cli.ExitUnusable
		}
		what := "no rings (" + in.JobError + ")"
		if in.Job != nil {
			what = fmt.Sprintf("%s, %s, %s", count(job.NRanks, "rank"), count(job.NNodes, "node"), count(len(job.Rings), "channel"))
		}
		fmt.Fprintf(stdout, "nccom-rings report: wrote %s: %s; %s\n", quote.String(f.out), what, count(rep.Count(), "finding"))
	}
	return verifyExit(rep)
}
