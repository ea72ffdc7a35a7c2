package main

import (
	"bytes"
	"fmt"
	"io"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/location"
	"github.com/nccomring/libnccomring/cmd/nccom-rings/report"
	"github.com/nccomring/libnccomring/cmd/nccom-rings/score"
	"github.com/nccomring/libnccomring/cmd/nccom-rings/verify"
	"github.com/nccomring/libnccomring/internal/cli"
	"github.com/nccomring/libnccomring/internal/quote"
	"github.com/nccomring/libnccomring/internal/safefile"
)

const reportHelp = `Usage: nccom-rings report DIR [--locations FILE] [--redact] -o FILE

Writes one self-contained HTML page about the job whose dumps DIR holds
(package report): a picture of the rings at node level, one channel at a
time chosen in the page (nodes in a box per location, inter-node edges
with the NIC index at each end, edges that cross a location level
coloured by the outermost level crossed), and above it the same channel
between location groups (a box per group of the outermost level with 2 or
more groups, or one chosen in the page; an arrow per ordered pair of
groups crossed, labelled with its edges, red out of a group the ring
leaves more than once, which a ring with the fewest crossings never does);
each channel's full userRanks as text; score's table (see score); and
every verify finding, its rank marked in the picture and in the userRanks. The page loads nothing from anywhere:
open it in any browser, or attach it to a ticket (with --redact).

When a rank is missing or failed there are no rings to draw: the page then
holds verify's findings and says why.

  -o FILE           the page to write ("-": standard output)
  --locations FILE  "HOST LOCATION" lines (nccom-rings locate --all), as score
  --redact          host names, EC2 instance ids and location names replaced
                    by tokens (host-1, instance-1, loc-1: one name, one token
                    in the page), the dump directory by DIR

`

const reportExitCodesHelp = `Exit codes:
  0  the page was written and verify found nothing
  1  the page was written and holds verify's findings
  2  unusable input or usage: no such directory, no usable dump in it, a bad
     locations file, a page that cannot be written, a bad flag; or the page
     was written but some dump files could not be used (as verify)
`

func runReport(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet("report")
	out := fs.String("o", "", "")
	locations := fs.String("locations", "", "")
	redact := fs.Bool("redact", false, "")
	operands, code, ok := parseArgs(fs, reportHelp, args, stdout, stderr)
	if !ok {
		return code
	}
	if *out == "" {
		fmt.Fprintf(stderr, "nccom-rings report: -o FILE is needed\n\n%s%s", reportHelp, reportExitCodesHelp)
		return cli.ExitUnusable
	}
	dir, files, bad, ok := readDumpsBad("report", reportHelp, operands, stderr)
	if !ok {
		return cli.ExitUnusable
	}
	rep := verify.Check(dir, files, bad)
	in := report.Input{Dir: dir, LocationsFrom: "dumps", Findings: rep.Findings, Omitted: rep.Omitted, Unusable: rep.Unusable, Redact: *redact}
	job, err := score.FromDumps(files)
	if err == nil && *locations != "" {
		entries, lerr := location.ReadLocationsFile(*locations)
		if lerr != nil {
			fmt.Fprintf(stderr, "nccom-rings report: %v\n", lerr)
			return cli.ExitUnusable
		}
		job.SetLocations(entries)
		in.LocationsFrom = *locations
	}
	if err == nil {
		in.Score, err = score.Compute(job)
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
	if *out == "-" {
		stdout.Write(page.Bytes())
	} else {
		if err := safefile.WriteFile(*out, page.Bytes(), 0o644); err != nil {
			fmt.Fprintf(stderr, "nccom-rings report: %v\n", err)
			return cli.ExitUnusable
		}
		what := "no rings (" + in.JobError + ")"
		if in.Job != nil {
			what = fmt.Sprintf("%s, %s, %s", count(job.NRanks, "rank"), count(job.NNodes, "node"), count(len(job.Rings), "channel"))
		}
		fmt.Fprintf(stdout, "nccom-rings report: wrote %s: %s; %s\n", quote.String(*out), what, count(rep.Count(), "finding"))
	}
	return verifyExit(rep)
}
