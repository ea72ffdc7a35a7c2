package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/location"
	"github.com/nccomring/libnccomring/cmd/nccom-rings/plan"
	"github.com/nccomring/libnccomring/cmd/nccom-rings/score"
	"github.com/nccomring/libnccomring/internal/cli"
	"github.com/nccomring/libnccomring/internal/quote"
	"github.com/nccomring/libnccomring/internal/safefile"
	"github.com/nccomring/libnccomring/layout"
	"github.com/nccomring/libnccomring/ringdump"
)

type planFlags struct {
	locations, hosts, graph, dump, emit string
	local                               int
	orders                              orders
	json                                bool
}

var planCommand = &cli.Command{
	Name:    "plan",
	Summary: "what a described cluster's job would build, each --order's score side by side, its dumps, a hostfile in network order",
	Usage: []string{
		"--locations FILE --hosts HOSTFILE [--ranks-per-node L] [--graph FILE] [--order rank|network]... [--dump DIR] [--emit-hostfile FILE] [--json]",
	},
	Doc: `What a job would build, without a job: runs the library's ring stage (its
Go code, no cgo) for every rank of the described cluster, once per --order
(default: rank, then network), and prints each order's score side by side
(see score --help): for each level the most crossings any ring has against
the fewest a ring can have, the NIC-index mismatches and the node sequence.

The cluster: the hosts of HOSTFILE in its order, L ranks each, numbered as a
launcher that keeps the hostfile's order numbers them (the first host ranks
0..L-1); each host's NCCOM_RING_LOCATION the one FILE gives it. Every node
has the RING graph of --graph, or else the embedded default cluster's
(ringstage's, said in the output): 8 ring channels, min(8, L) NICs; its
channels leave a node on another NIC than they enter it on, so every
inter-node edge is a NIC-index mismatch (see score --help). At most 4,096
ranks. The score places nodes by the library's own rule (D28), and the
network order is the library's own; two names of one level of the hosts'
locations that share a 32-bit hash, which the library takes for one, are
said, one line each pair.
`,
	Exits: cli.Exits("every order was planned", "an order the ring stage refused or did not apply (its WARN printed)", "unusable input or usage: a missing or bad hostfile, locations file or graph file, a bad --ranks-per-node or --order, more than 4,096 ranks, a dump directory that cannot be written, a bad flag"),
	Setup: func(fs *flag.FlagSet) func(*cli.Invocation) int {
		var f planFlags
		fs.StringVar(&f.locations, "locations", "", `"HOST LOCATION" lines (nccom-rings locate --all) in `+"`FILE`"+`; a host it does not list has no location`)
		fs.StringVar(&f.hosts, "hosts", "", "the hosts, one a line of `HOSTFILE`: its first field (\"host slots=4\" and MPICH's \"host:4\" read as host, with 4 slots); '#' comments. A host whose slots are not L is noted on stderr: a launcher filling slots numbers otherwise")
		fs.IntVar(&f.local, "ranks-per-node", 0, "`L` ranks on each host, 1 to 256; when not given, --graph's ranks a node, else the slot count every host of HOSTFILE gives (the same on each)")
		fs.StringVar(&f.graph, "graph", "", "an NCCL_GRAPH_FILE `FILE` (NCCL_GRAPH_DUMP_FILE's XML): its first pattern=\"4\" graph, read as ringstage --graph reads it, on every node. Read as a stream: a regular file of at most 64 MiB, elements nested at most 256 deep, at most 32 channels of 256 <gpu>")
		fs.Var(&f.orders, "order", "NCCOM_RING_NODE_ORDER for every rank, one of `rank|network`; repeatable (default: rank, then network)")
		fs.StringVar(&f.dump, "dump", "", "write the dumps the job would (NCCOM_RING_DUMP=`DIR`); with two orders, into DIR/rank and DIR/network")
		fs.StringVar(&f.emit, "emit-hostfile", "", "write HOSTFILE's lines in D25's network order to `FILE`: a launcher that keeps that order gets, in rank order, the rings the network order gives")
		fs.BoolVar(&f.json, "json", false, `{"hosts", "ranksPerNode", "nRanks", "graph", "locations", "unlocated", "collisions": [{"level", "hash", "names"}], "emittedHostfile", "plans": [{"order", "networkApplied", "note", "sequence", "graphChannels", "nChannels", "dump", "score"}]} ("score" as score --json's)`)
		return func(inv *cli.Invocation) int { return runPlan(inv, &f) }
	},
}

// orders is --order, repeatable.
type orders []string

func (o *orders) String() string { return strings.Join(*o, ",") }

func (o *orders) Set(v string) error {
	if v != "rank" && v != "network" {
		return fmt.Errorf("%s is not rank or network", quote.String(v))
	}
	if !slices.Contains(*o, v) { // one plan, one dump directory, per order
		*o = append(*o, v)
	}
	return nil
}

// planned is one order's plan in plan's --json document.
type planned struct {
	Order          string       `json:"order"`
	NetworkApplied bool         `json:"networkApplied"`
	Note           string       `json:"note,omitempty"`
	Sequence       []int        `json:"sequence"` // channel 0's nodes
	GraphChannels  int          `json:"graphChannels"`
	NChannels      int          `json:"nChannels"`
	Dump           string       `json:"dump,omitempty"`
	Score          *score.Score `json:"score"`
	Error          string       `json:"error,omitempty"`
}

type planReport struct {
	Hosts        string   `json:"hosts"`
	RanksPerNode int      `json:"ranksPerNode"`
	NRanks       int      `json:"nRanks"`
	Graph        string   `json:"graph"`
	Locations    string   `json:"locations"`
	Unlocated    []string `json:"unlocated"`
	// Collisions are the names of one level of the hosts' locations that
	// share a hash (D28): the library takes them for one.
	Collisions      []location.Collision `json:"collisions"`
	EmittedHostfile string               `json:"emittedHostfile,omitempty"`
	Plans           []planned            `json:"plans"`
}

func runPlan(inv *cli.Invocation, f *planFlags) int {
	operands, stdout, stderr, usage := inv.Operands, inv.Stdout, inv.Stderr, inv.UsageError
	ords := f.orders
	switch {
	case len(operands) > 0:
		return usage("no operand expected, got %s", quote.String(operands[0]))
	case f.locations == "" || f.hosts == "":
		return usage("--locations and --hosts are needed")
	}
	graphName := plan.DefaultGraphName
	var graph *plan.GraphFile
	if f.graph != "" {
		var err error
		if graph, err = plan.ReadGraphFile(f.graph); err != nil {
			fmt.Fprintf(stderr, "nccom-rings plan: %v\n", err)
			return cli.ExitUnusable
		}
		if f.local == 0 {
			f.local = graph.LocalRanks
		}
		graphName = fmt.Sprintf("%s's RING graph (%s a node, %s)", quote.String(f.graph), count(graph.LocalRanks, "rank"), count(graph.NChannels, "channel"))
	}
	if len(ords) == 0 {
		ords = orders{"rank", "network"}
	}
	hosts, err := plan.ReadHostfile(f.hosts)
	if err != nil {
		fmt.Fprintf(stderr, "nccom-rings plan: %v\n", err)
		return cli.ExitUnusable
	}
	if f.local == 0 { // neither --ranks-per-node nor --graph: the hosts' slots
		n, ok := plan.CommonSlots(hosts)
		if !ok {
			return usage("--ranks-per-node is needed: neither --graph nor the same slot count on every host of %s gives it", quote.String(f.hosts))
		}
		if n > layout.MaxLocalRanks {
			return usage("every host of %s gives %d slots, but a plan puts 1 to %d ranks on a host: give --ranks-per-node", quote.String(f.hosts), n, layout.MaxLocalRanks)
		}
		f.local = n
	}
	if i, n := plan.OtherSlots(hosts, f.local); n > 0 {
		fmt.Fprintf(stderr, "nccom-rings plan: note: %s line %d: host %s gives %s, but the plan puts %s on every host (%d of %d hosts give another count); a launcher that fills each host's slots numbers the ranks otherwise\n",
			quote.String(f.hosts), hosts[i].Line, quote.String(hosts[i].Name), count(hosts[i].Slots, "slot"), count(f.local, "rank"), n, len(hosts))
	}
	entries, err := location.ReadLocationsFile(f.locations)
	if err != nil {
		fmt.Fprintf(stderr, "nccom-rings plan: %v\n", err)
		return cli.ExitUnusable
	}
	locs, missing := plan.Locate(hosts, entries)
	cl := plan.Cluster{RanksPerNode: f.local, Locations: locs, Graph: graph}
	for _, h := range hosts {
		cl.Hosts = append(cl.Hosts, h.Name)
	}
	rep := planReport{Hosts: f.hosts, RanksPerNode: f.local, NRanks: len(hosts) * f.local, Graph: graphName,
		Locations: f.locations, Unlocated: []string{}, Plans: []planned{}, Collisions: location.Collisions(locs)}
	if rep.Collisions == nil {
		rep.Collisions = []location.Collision{}
	}
	for _, m := range missing {
		rep.Unlocated = append(rep.Unlocated, hosts[m].Name)
	}

	finding := false
	for _, o := range ords {
		p := planned{Order: o}
		var write func(*ringdump.Dump) error
		if f.dump != "" {
			p.Dump = f.dump
			if len(ords) > 1 {
				p.Dump = filepath.Join(f.dump, o)
			}
			write = func(d *ringdump.Dump) error { _, err := ringdump.Write(p.Dump, d); return err }
		}
		res, err := plan.Run(cl, o == "network", write)
		if err != nil {
			// A refusal of the ring stage is a finding about the
			// cluster; anything else (its shape, a dump not written) is
			// input this cannot use.
			var stage *plan.StageError
			if !errors.As(err, &stage) {
				fmt.Fprintf(stderr, "nccom-rings plan: %v\n", err)
				return cli.ExitUnusable
			}
			p.Error, finding = err.Error(), true
			rep.Plans = append(rep.Plans, p)
			continue
		}
		p.NetworkApplied, p.Note = res.Order.Network, res.Order.Warn+res.Order.Info
		p.GraphChannels, p.NChannels = res.GraphChannels, res.NChannels
		finding = finding || (o == "network" && !res.Order.Network)
		if p.Score, err = score.Compute(res.Job); err != nil {
			fmt.Fprintf(stderr, "nccom-rings plan: %v\n", err)
			return cli.ExitUnusable
		}
		p.Sequence = p.Score.Channels[0].Sequence
		rep.Plans = append(rep.Plans, p)
	}
	if f.emit != "" {
		order, err := plan.NetworkOrder(locs)
		if err == nil {
			err = safefile.WriteFile(f.emit, plan.EmitHostfile(f.hosts, hosts, order), 0o644)
		}
		if err != nil {
			fmt.Fprintf(stderr, "nccom-rings plan: --emit-hostfile: %v\n", err)
			return cli.ExitUnusable
		}
		rep.EmittedHostfile = f.emit
	}
	if f.json {
		writeJSON(stdout, rep)
	} else {
		writePlan(stdout, rep)
	}
	if finding {
		return cli.ExitFinding
	}
	return cli.ExitOK
}

// writePlan prints the plans side by side: one row per order, one column
// per level.
func writePlan(w io.Writer, rep planReport) {
	fmt.Fprintf(w, "nccom-rings plan: %s x %s = %s; graph: %s\n",
		count(rep.NRanks/max(rep.RanksPerNode, 1), "host"), count(rep.RanksPerNode, "rank"), count(rep.NRanks, "rank"), rep.Graph)
	if len(rep.Unlocated) > 0 {
		fmt.Fprintf(w, "  %s without a location in %s (first %s)\n", count(len(rep.Unlocated), "host"), quote.String(rep.Locations), quote.String(rep.Unlocated[0]))
	}
	for _, c := range rep.Collisions {
		fmt.Fprintf(w, "  %s\n", c)
	}
	depth := 0
	for _, p := range rep.Plans {
		if p.Score != nil {
			depth = max(depth, p.Score.Depth)
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "ORDER\tCHANNELS")
	for l := range depth {
		fmt.Fprintf(tw, "\tLEVEL %d CROSSINGS/RING", l+1)
	}
	fmt.Fprint(tw, "\tNIC-INDEX MISMATCHES\tNODE SEQUENCE (CHANNEL 0)\n")
	for _, p := range rep.Plans {
		if p.Score == nil {
			fmt.Fprintf(tw, "%s\trefused: %s\n", p.Order, quote.String(p.Error))
			continue
		}
		fmt.Fprintf(tw, "%s\t%d -> %d", p.Order, p.GraphChannels, p.NChannels)
		for l := range depth {
			most, fewest := 0, 0
			for _, c := range p.Score.Channels {
				if l < len(c.Levels) {
					most, fewest = max(most, c.Levels[l].Crossings), c.Levels[l].Minimum
				}
			}
			fmt.Fprintf(tw, "\t%d (fewest %d)", most, fewest)
		}
		edges := 0
		for _, c := range p.Score.Channels {
			edges += c.InterNodeEdges
		}
		fmt.Fprintf(tw, "\t%d of %d edges\t%s\n", p.Score.NICMismatches(), edges, head(p.Sequence, 16))
	}
	tw.Flush()
	for _, p := range rep.Plans {
		if p.Note != "" {
			fmt.Fprintf(w, "  %s: %s\n", p.Order, quote.String(p.Note))
		}
		if p.Dump != "" && p.Score != nil {
			fmt.Fprintf(w, "  %s: dumps written to %s\n", p.Order, quote.String(p.Dump))
		}
	}
	if rep.EmittedHostfile != "" {
		fmt.Fprintf(w, "  hostfile in network order written to %s: plan it with --order rank to check\n", quote.String(rep.EmittedHostfile))
	}
}

// head is the first n of v, space-separated, then "..." when there are more.
func head(v []int, n int) string {
	s := strings.Trim(fmt.Sprint(v[:min(len(v), n)]), "[]")
	if len(v) > n {
		s += fmt.Sprintf(" ... (%d more)", len(v)-n)
	}
	return s
}
