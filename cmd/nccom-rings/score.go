package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/location"
	"github.com/nccomring/libnccomring/cmd/nccom-rings/score"
	"github.com/nccomring/libnccomring/internal/cli"
	"github.com/nccomring/libnccomring/internal/quote"
)

type scoreFlags struct {
	locations string
	maxExcess int
	json      bool
}

var scoreCommand = &cli.Command{
	Name:    "score",
	Summary: "each channel's crossings of each network level against the fewest a ring can have, NIC-index mismatches, channels per NIC index",
	Usage:   []string{"[--locations FILE] [--max-excess N] [--json] DIR"},
	Doc: `Scores the rings of the job whose dumps DIR holds against the network
(D25, package score). For each channel and each level of the locations (level
1 the outermost name): the inter-node edges whose two nodes are in different
groups at that level (a group: the nodes whose locations share that
level's prefix) against the fewest a ring through every node can have, the
number of groups when two or more, else 0. Then the NIC-index mismatches:
inter-node edges whose sender uses another NIC index on that channel than
the receiver (from the ncclTopoGetNetDev answers in the dumps; equal
indices are not proof of one rail, so this says index), and, per node, how
many channels carry inter-node edges through each NIC index. A graph
whose channels leave a node on another NIC than they enter it on
(inter[2c] != inter[2c+1], as in the embedded default graph) mismatches
on every inter-node edge by construction; one that keeps each channel on
one NIC has none.

The rings are the lowest rank's; score does not check that the ranks agree
(verify does). Each node is placed as the library places it, by the same
code (D28): its location is the one most of its ranks' records carried
(the hashes in the dumps; "no location" counts as a value; ties to its
head's, else to the lowest rank's), or with --locations the one FILE
gives its host. Two names of one level that share a 32-bit hash are one
name to the library: score says so, one line each pair.
`,
	Exits: cli.Exits("scored (and no level over --max-excess)", "with --max-excess N: some level crosses more than N times over its fewest, or some node has no location (its crossings are not known, so the gate cannot pass)", "unusable input or usage: no such directory, no dumps, a file that is not a dump, a missing or failed rank, a bad locations file, a bad flag"),
	Setup: func(fs *flag.FlagSet) func(*cli.Invocation) int {
		var f scoreFlags
		fs.StringVar(&f.locations, "locations", "", `"HOST LOCATION" lines (nccom-rings locate --all) in `+"`FILE`"+`, matched by the dumps' host names (lowercase, up to the first dot)`)
		fs.IntVar(&f.maxExcess, "max-excess", -1, "exit 1 when some level of some channel crosses more than `N` times over its fewest (for CI)")
		fs.BoolVar(&f.json, "json", false, `{"dir", "locationsFrom", "unlocated", "collisions": [{"level", "hash", "names"}], "maxExcessAllowed", "exceeded", "score": {"nRanks", "nNodes", "depth", "located", "arranged", "channels": [{"channel", "sequence", "interNodeEdges", "levels": [{"level", "groups", "crossings", "minimum", "excess"}], "nicMismatches", "nicUnknown"}], "maxExcess", "mismatches": [{"channel", "from", "to", "fromDev", "toDev"}], "nics": [[{"dev", "channels"}]]}}; on unusable input a document with "error" and no "score" (exit 2)`)
		return func(inv *cli.Invocation) int { return runScore(inv, &f) }
	},
}

// scoreReport is score's --json document.
type scoreReport struct {
	Dir           string `json:"dir"`
	LocationsFrom string `json:"locationsFrom"` // "dumps" or the file
	Unlocated     []int  `json:"unlocated"`     // nodes without a location
	// Collisions are the names of one level that share a hash (D28).
	Collisions []location.Collision `json:"collisions"`
	MaxExcess  *int                 `json:"maxExcessAllowed"`
	Exceeded   bool                 `json:"exceeded"`
	Score      *score.Score         `json:"score"`
	// Error says why there is no score (exit 2); the details are on
	// stderr. --json prints a document either way.
	Error string `json:"error,omitempty"`
}

func runScore(inv *cli.Invocation, f *scoreFlags) int {
	operands, stdout, stderr := inv.Operands, inv.Stdout, inv.Stderr
	rep := scoreReport{LocationsFrom: "dumps", Unlocated: []int{}, Collisions: []location.Collision{}}
	// unusable ends the command with exit 2, after err's line on stderr
	// and, with --json, a document that says so.
	unusable := func(err error) int {
		if err != nil {
			fmt.Fprintf(stderr, "nccom-rings score: %v\n", err)
		}
		if f.json {
			rep.Error = "unusable input (named on stderr)"
			writeJSON(stdout, rep)
		}
		return cli.ExitUnusable
	}
	if len(operands) == 1 {
		rep.Dir = operands[0]
	}
	if inv.Given("max-excess") && f.maxExcess < 0 {
		inv.UsageError("--max-excess %d: a count of crossings over the fewest is 0 or more", f.maxExcess)
		return unusable(nil)
	}
	dir, files, bad, ok := readDumps(inv, operands)
	if !ok {
		return unusable(nil)
	}
	job, err := dumpedJob(dir, files, f.locations)
	if err != nil {
		return unusable(err)
	}
	if f.locations != "" {
		rep.LocationsFrom = f.locations
	}
	for m, l := range job.Location {
		if l == "" {
			rep.Unlocated = append(rep.Unlocated, m)
		}
	}
	rep.Collisions = append(rep.Collisions, location.Collisions(job.Names)...)
	rep.Score, err = score.Compute(job)
	if err != nil {
		return unusable(fmt.Errorf("%s: %w", quote.String(dir), err))
	}
	if f.maxExcess >= 0 {
		rep.MaxExcess = &f.maxExcess
		_, _, rep.Exceeded = rep.Score.Exceeds(f.maxExcess)
		// A node without a location crosses nothing it can be charged
		// for: a gate that passed them would pass a job it never judged.
		rep.Exceeded = rep.Exceeded || len(rep.Unlocated) > 0
	}
	if f.json {
		writeJSON(stdout, rep)
	} else {
		writeScore(stdout, rep, job.Host)
	}
	switch {
	case bad > 0:
		return cli.ExitUnusable // the score is the other files'
	case rep.Exceeded:
		return cli.ExitFinding
	}
	return cli.ExitOK
}

// writeScore prints a score: a header, one line per channel, the NIC
// lines and the verdict of --max-excess.
func writeScore(w io.Writer, rep scoreReport, hosts []string) {
	s := rep.Score
	from := "the dumps"
	if rep.LocationsFrom != "dumps" {
		from = quote.String(rep.LocationsFrom)
	}
	fmt.Fprintf(w, "nccom-rings score: %s, %s, %s; locations from %s: %d of %d nodes located, %s\n",
		count(s.NRanks, "rank"), count(s.NNodes, "node"), count(len(s.Channels), "channel"), from, s.Located, s.NNodes, count(s.Depth, "level"))
	if len(rep.Unlocated) > 0 {
		fmt.Fprintf(w, "  without a location: nodes %s (host %s first): %s\n", score.Spans(rep.Unlocated), quote.String(hosts[rep.Unlocated[0]]), whyUnlocated(rep.LocationsFrom))
	}
	for _, c := range rep.Collisions {
		fmt.Fprintf(w, "  %s\n", c)
	}
	// Channels that score alike share a line: the doubled half repeats
	// the first (D10), and a job's channels often cross alike.
	var lines []string
	channels := map[string][]int{}
	for _, c := range s.Channels {
		var b strings.Builder
		b.WriteString(count(c.InterNodeEdges, "inter-node edge"))
		for _, l := range c.Levels {
			fmt.Fprintf(&b, "; level %d: %s (%s: fewest %d", l.Level, count(l.Crossings, "crossing"), count(l.Groups, "group"), l.Minimum)
			if l.Excess > 0 {
				fmt.Fprintf(&b, "; %d over", l.Excess)
			}
			b.WriteString(")")
		}
		fmt.Fprintf(&b, "; %d %s", c.NICMismatches, plural(c.NICMismatches, "NIC-index mismatch", "NIC-index mismatches"))
		if c.NICUnknown > 0 {
			fmt.Fprintf(&b, ", %d without a NIC answer", c.NICUnknown)
		}
		k := b.String()
		if _, ok := channels[k]; !ok {
			lines = append(lines, k)
		}
		channels[k] = append(channels[k], c.Channel)
	}
	for _, k := range lines {
		fmt.Fprintf(w, "  %s %s: %s\n", plural(len(channels[k]), "channel", "channels"), score.Spans(channels[k]), k)
	}
	edges := 0
	for _, c := range s.Channels {
		edges += c.InterNodeEdges
	}
	fmt.Fprintf(w, "  NIC-index mismatches: %d of %d inter-node edges", s.NICMismatches(), edges)
	if len(s.Mismatches) > 0 {
		m := s.Mismatches[0]
		fmt.Fprintf(w, ", first on channel %d: rank %d (NIC index %d) -> rank %d (NIC index %d)", m.Channel, m.From, m.FromDev, m.To, m.ToDev)
		if s.NICMismatches() == edges {
			fmt.Fprint(w, " (every one: as when the graph's channels leave a node on another NIC than they enter it on)")
		}
	}
	fmt.Fprintln(w)
	writeNICShares(w, s.NICs)
	for l, e := range s.MaxExcess {
		if e > 0 {
			fmt.Fprintf(w, "  level %d: up to %d crossings over the fewest a ring can have (nccom-rings plan --order network shows what D25's order would give)\n", l+1, e)
		}
	}
	if rep.MaxExcess != nil {
		if level, excess, over := s.Exceeds(*rep.MaxExcess); over {
			fmt.Fprintf(w, "nccom-rings score: level %d is %d over its fewest, more than --max-excess %d\n", level, excess, *rep.MaxExcess)
		}
		if len(rep.Unlocated) > 0 {
			fmt.Fprintf(w, "nccom-rings score: --max-excess %d not met: %d of %d nodes have no location, so their crossings are not known\n", *rep.MaxExcess, len(rep.Unlocated), s.NNodes)
		}
	}
}

// writeNICShares prints the channels each NIC index carries, one line per
// distinct set of nodes that share the same counts.
func writeNICShares(w io.Writer, nics [][]score.NICShare) {
	for _, g := range score.GroupNICShares(nics) {
		fmt.Fprintf(w, "  channels per NIC index, nodes %s: %s\n", score.Spans(g.Nodes), g.Shares)
	}
}
