package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/location"
	"github.com/nccomring/libnccomring/cmd/nccom-rings/plan"
	"github.com/nccomring/libnccomring/cmd/nccom-rings/score"
	"github.com/nccomring/libnccomring/cmd/nccom-rings/simulate"
	"github.com/nccomring/libnccomring/internal/cli"
	"github.com/nccomring/libnccomring/internal/quote"
	"github.com/nccomring/libnccomring/internal/safefile"
	"github.com/nccomring/libnccomring/layout"
	"github.com/nccomring/libnccomring/ringdump"
)

type planFlags struct {
	locations, hosts, graph, dump, emit string
	emitLocations                       string
	local                               int
	orders                              orders
	instances                           repeated
	json, hostsFromEnv, allowUnlocated  bool
	simulate                            bool
}

var planCommand = &cli.Command{
	Name:    "plan",
	Summary: "what a described cluster's job would build, each --order's score side by side, its dumps, a hostfile in network order",
	Usage: []string{
		"--locations FILE --hosts HOSTFILE|HOSTLIST [--instances FILE]... [--allow-unlocated] [--ranks-per-node L] [--graph FILE] [--order rank|network]... [--dump DIR] [--emit-hostfile FILE] [--emit-locations FILE] [--json]",
		"--locations FILE --hosts-from-env [--instances FILE]... [--allow-unlocated] [--ranks-per-node L] [--graph FILE] [--order rank|network]... [--dump DIR] [--emit-hostfile FILE] [--emit-locations FILE] [--json]",
		"... [--simulate]",
	},
	Doc: `What a job would build, without a job: runs the library's ring stage (its
Go code, no cgo) for every rank of the described cluster, once per --order
(default: rank, then network), and prints each order's score side by side
(see score --help): for each level the most crossings any ring has against
the fewest a ring can have, the NIC-index mismatches and the node sequence.

The cluster: the hosts of HOSTFILE in its order, L ranks each, numbered as a
launcher that keeps the hostfile's order numbers them (the first host ranks
0..L-1); each host's NCCOM_RING_LOCATION the one FILE gives it. A line of
HOSTFILE may hold a Slurm host list (trn[001-016] slots=32), and --hosts
may be one itself, or names on lines ("$(scontrol show hostnames)"), or
--hosts-from-env take this job's SLURM_JOB_NODELIST: each stands for its
hosts in order, as "scontrol show hostnames" expands it. HOSTFILE and
FILE are UTF-8 (a byte-order mark skipped, UTF-16 refused).

Host names are not what every topology names: DescribeInstanceTopology
(locate --all ec2:FILE) names instances. --instances FILE joins them: a
host matches the locations by its own name or, through FILE, by its
instance id, DNS name (full or short), IP address, Name tag or Slurm node
name (see docs/operating.md for the files; a terminated instance is
skipped). Two hosts joined to one instance (its name and its address,
say) are one machine: refused, as a host listed twice is. When fewer
hosts are located
than listed, plan plans nothing: it says how many of how many, the first
host without a location and why, and the line that would join them (exit
1); --allow-unlocated plans them without a location, as the library
would run them (the network order puts them last). --emit-locations
writes the joined locations by host name, for score and report.

Every node has the RING graph of --graph, or else the embedded default
cluster's (ringstage's, said in the output): 8 ring channels, min(8, L) NICs; its
channels leave a node on another NIC than they enter it on, so every
inter-node edge is a NIC-index mismatch (see score --help). At most 4,096
ranks. The score places nodes by the library's own rule (D28), and the
network order is the library's own; two names of one level of the hosts'
locations that share a 32-bit hash, which the library takes for one, are
said, one line each pair.
`,
	Exits: cli.Exits("every order was planned", "fewer hosts located than listed (nothing planned; --allow-unlocated plans them), or an order the ring stage refused or did not apply (its WARN printed)", "unusable input or usage: a missing or bad hostfile, host list, locations, instances or graph file, two hosts that are one instance, a bad --ranks-per-node, SLURM_NTASKS_PER_NODE, SLURM_TASKS_PER_NODE or --order, more than 4,096 ranks, a dump directory that cannot be written, a bad flag"),
	Setup: func(fs *flag.FlagSet) func(*cli.Invocation) int {
		var f planFlags
		fs.StringVar(&f.locations, "locations", "", `"HOST LOCATION" lines (nccom-rings locate --all) in `+"`FILE`"+`; a host it does not list has no location`)
		fs.StringVar(&f.hosts, "hosts", "", "the hosts, one a line of `HOSTFILE`: its first field (\"host slots=4\" and MPICH's \"host:4\" read as host, with 4 slots), or a Slurm host list standing for its hosts (trn[001-016] slots=4); '#' comments. A host whose slots are not L is noted on stderr: a launcher filling slots numbers otherwise. A value that is no file and holds '[' or ',', or names on lines (\"$(scontrol show hostnames)\"), is a HOSTLIST itself")
		fs.BoolVar(&f.hostsFromEnv, "hosts-from-env", false, "the hosts of this Slurm job: the host list in $SLURM_JOB_NODELIST; L from --ranks-per-node, --graph, $SLURM_NTASKS_PER_NODE or $SLURM_TASKS_PER_NODE (32(x16); counts that differ by host need --ranks-per-node); a bad count is refused")
		fs.Var(&f.instances, "instances", "join host names to the names the locations give (EC2 instance ids, reservations, node names) through `FILE`: the JSON of aws ec2 describe-instances, the output of scontrol show nodes, the JSON of kubectl get pods -o json, or HOST INSTANCE lines, told apart by content; repeatable (a pod to its node in one, the node to its instance in another)")
		fs.BoolVar(&f.allowUnlocated, "allow-unlocated", false, "plan even when some hosts have no location (the library runs them so: last in the network order); without it plan refuses, exit 1")
		fs.IntVar(&f.local, "ranks-per-node", 0, "`L` ranks on each host, 1 to 256; when not given, --graph's ranks a node, else the slot count every host of HOSTFILE gives (the same on each)")
		fs.StringVar(&f.graph, "graph", "", "an NCCL_GRAPH_FILE `FILE` (NCCL_GRAPH_DUMP_FILE's XML): its first pattern=\"4\" graph, read as ringstage --graph reads it, on every node. Read as a stream: a regular file of at most 64 MiB, elements nested at most 256 deep, at most 32 channels of 256 <gpu>")
		fs.Var(&f.orders, "order", "NCCOM_RING_NODE_ORDER for every rank, one of `rank|network`; repeatable (default: rank, then network)")
		fs.StringVar(&f.dump, "dump", "", "write the dumps the job would (NCCOM_RING_DUMP=`DIR`); with two orders, into DIR/rank and DIR/network")
		fs.StringVar(&f.emit, "emit-hostfile", "", "write HOSTFILE's lines in D25's network order to `FILE`: a launcher that keeps that order gets, in rank order, the rings the network order gives")
		fs.StringVar(&f.emitLocations, "emit-locations", "", `write the located hosts' "HOST LOCATION" lines, by HOSTFILE's names, to `+"`FILE`"+`: the locations file score and report match a job's dumps by (their hosts' names), joined once here`)
		fs.BoolVar(&f.simulate, "simulate", false, "also print each order's predicted AllReduce bus bandwidth at 256 MiB, flat ring, spray routing, 1:1, 2:1 and 4:1 (nccom-rings simulate's defaults; see simulate --help)")
		fs.BoolVar(&f.json, "json", false, `{"hosts", "ranksPerNode", "nRanks", "graph", "locations", "instances", "located", "unlocated", "collisions": [{"level", "hash", "names"}], "emittedHostfile", "emittedLocations", "plans": [{"order", "networkApplied", "note", "sequence", "graphChannels", "nChannels", "dump", "score", "predicted"}], "refused", "error"} ("score" as score --json's); one document whatever the exit: nothing planned (exit 1) with "refused", unusable input (exit 2) with "error"`)
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
	// Predicted is --simulate's: simulate's predictions of this order.
	Predicted []simulate.Prediction `json:"predicted,omitempty"`
	Error     string                `json:"error,omitempty"`
}

type planReport struct {
	Hosts        string   `json:"hosts"`
	RanksPerNode int      `json:"ranksPerNode"`
	NRanks       int      `json:"nRanks"`
	Graph        string   `json:"graph"`
	Locations    string   `json:"locations"`
	Instances    []string `json:"instances"` // the --instances files
	Located      int      `json:"located"`   // hosts with a location
	Unlocated    []string `json:"unlocated"`
	// Collisions are the names of one level of the hosts' locations that
	// share a hash (D28): the library takes them for one.
	Collisions       []location.Collision `json:"collisions"`
	EmittedHostfile  string               `json:"emittedHostfile,omitempty"`
	EmittedLocations string               `json:"emittedLocations,omitempty"`
	Plans            []planned            `json:"plans"`
	// Refused says why nothing was planned when fewer hosts are located
	// than listed (exit 1).
	Refused string `json:"refused,omitempty"`
	// Error says why there is no plan (exit 2); the details are on
	// stderr. --json prints a document either way.
	Error string `json:"error,omitempty"`
}

func runPlan(inv *cli.Invocation, f *planFlags) int {
	operands, stdout, stderr := inv.Operands, inv.Stdout, inv.Stderr
	ords := f.orders
	rep := planReport{Hosts: f.hosts, Locations: f.locations, Instances: append([]string{}, f.instances...),
		Unlocated: []string{}, Plans: []planned{}, Collisions: []location.Collision{}}
	// unusable ends the command with exit 2, after err's line on stderr
	// and, with --json, a document that says so (as score's and diff's).
	unusable := func(err error) int {
		if err != nil {
			fmt.Fprintf(stderr, "nccom-rings plan: %v\n", err)
		}
		if f.json {
			rep.Error = "unusable input (named on stderr)"
			writeJSON(stdout, rep)
		}
		return cli.ExitUnusable
	}
	usage := func(format string, a ...any) int {
		inv.UsageError(format, a...)
		return unusable(nil) // its document: the command line's hosts and files
	}
	switch {
	case len(operands) > 0:
		return usage("no operand expected, got %s", quote.String(operands[0]))
	case f.locations == "" || f.hosts == "" && !f.hostsFromEnv:
		return usage("--locations and --hosts (or --hosts-from-env) are needed")
	case f.hosts != "" && f.hostsFromEnv:
		return usage("--hosts and --hosts-from-env exclude each other")
	case inv.Given("ranks-per-node") && (f.local < 1 || f.local > layout.MaxLocalRanks):
		return usage("--ranks-per-node %d: a plan puts 1 to %d ranks on a host", f.local, layout.MaxLocalRanks)
	}
	graphName := plan.DefaultGraphName
	var graph *plan.GraphFile
	if f.graph != "" {
		var err error
		if graph, err = plan.ReadGraphFile(f.graph); err != nil {
			return unusable(err)
		}
		if f.local == 0 {
			f.local = graph.LocalRanks
		}
		graphName = fmt.Sprintf("%s's RING graph (%s a node, %s)", quote.String(f.graph), count(graph.LocalRanks, "rank"), count(graph.NChannels, "channel"))
	}
	if len(ords) == 0 {
		ords = orders{"rank", "network"}
	}
	rep.Graph = graphName
	hosts, hostsName, slotsFrom, err := readHosts(f)
	if err != nil {
		return unusable(err)
	}
	rep.Hosts = hostsName
	if f.local == 0 { // neither --ranks-per-node nor --graph: the hosts' slots
		n, ok := plan.CommonSlots(hosts)
		if !ok && f.hostsFromEnv {
			return usage("--ranks-per-node is needed: neither --graph nor SLURM_NTASKS_PER_NODE or SLURM_TASKS_PER_NODE (%s) gives one count for every host", envValues("SLURM_NTASKS_PER_NODE", "SLURM_TASKS_PER_NODE"))
		}
		if !ok {
			return usage("--ranks-per-node is needed: neither --graph nor the same slot count on every host of %s gives it", quote.String(hostsName))
		}
		if n > layout.MaxLocalRanks {
			return usage("every host of %s gives %d slots, but a plan puts 1 to %d ranks on a host: give --ranks-per-node", quote.String(hostsName), n, layout.MaxLocalRanks)
		}
		f.local = n
	}
	if f.local < 1 || f.local > layout.MaxLocalRanks {
		return usage("--ranks-per-node %d: a plan puts 1 to %d ranks on a host", f.local, layout.MaxLocalRanks)
	}
	rep.RanksPerNode, rep.NRanks = f.local, len(hosts)*f.local
	if i, n := plan.OtherSlots(hosts, f.local); n > 0 {
		where := fmt.Sprintf("%s line %d", quote.String(f.hosts), hosts[i].Line)
		if hosts[i].Line == 0 { // the counts of the environment
			where = slotsFrom
		}
		fmt.Fprintf(stderr, "nccom-rings plan: note: %s: host %s gives %s, but the plan puts %s on every host (%d of %d hosts give another count); a launcher that fills each host's slots numbers the ranks otherwise\n",
			where, quote.String(hosts[i].Name), count(hosts[i].Slots, "slot"), count(f.local, "rank"), n, len(hosts))
	}
	entries, err := readLocations(f.locations)
	if err != nil {
		return unusable(err)
	}
	var joins []*location.Instances
	for _, path := range f.instances {
		in, err := location.ReadInstancesFile(path)
		if err != nil {
			return unusable(fmt.Errorf("--instances: %w", err))
		}
		joins = append(joins, in)
	}
	locs, joined := plan.LocateJoined(hosts, entries, joins)
	// One machine under two names (its host name and its address, say)
	// would be planned as two nodes: refused, as a name listed twice is.
	owner := map[string]int{} // Key of a name of Joined.Same -> its host
	for m, j := range joined {
		for _, n := range j.Same {
			k := location.Key(n)
			if o, dup := owner[k]; dup && o != m {
				return unusable(fmt.Errorf("hosts %s and %s are one instance (%s): list each host once", quote.String(hosts[o].Name), quote.String(hosts[m].Name), quote.String(n)))
			}
			owner[k] = m
		}
	}
	cl := plan.Cluster{RanksPerNode: f.local, Locations: locs, Graph: graph}
	for _, h := range hosts {
		cl.Hosts = append(cl.Hosts, h.Name)
	}
	rep.Collisions = append(rep.Collisions, location.Collisions(locs)...)
	first := -1
	for m, l := range locs {
		if l != "" {
			rep.Located++
			continue
		}
		if first < 0 {
			first = m
		}
		rep.Unlocated = append(rep.Unlocated, hosts[m].Name)
	}
	if first >= 0 && !f.allowUnlocated {
		writeUnlocated(stderr, f, hostsName, hosts, entries, joins, rep.Located, first, joined[first])
		if f.json {
			rep.Refused = fmt.Sprintf("%d of %d hosts located, so nothing planned (named on stderr)", rep.Located, len(hosts))
			writeJSON(stdout, rep)
		}
		return cli.ExitFinding
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
				return unusable(err)
			}
			p.Error, finding = err.Error(), true
			rep.Plans = append(rep.Plans, p)
			continue
		}
		p.NetworkApplied, p.Note = res.Order.Network, res.Order.Warn+res.Order.Info
		p.GraphChannels, p.NChannels = res.GraphChannels, res.NChannels
		finding = finding || (o == "network" && !res.Order.Network)
		if p.Score, err = score.Compute(res.Job); err != nil {
			return unusable(err)
		}
		p.Sequence = p.Score.Channels[0].Sequence
		if f.simulate {
			if p.Predicted, err = planSimulate(o, res.Job); err != nil {
				return unusable(err)
			}
		}
		rep.Plans = append(rep.Plans, p)
	}
	if f.emit != "" {
		order, err := plan.NetworkOrder(locs)
		if err == nil {
			err = safefile.WriteFile(f.emit, plan.EmitHostfile(hostsName, hosts, order), 0o644)
		}
		if err != nil {
			return unusable(fmt.Errorf("--emit-hostfile: %w", err))
		}
		rep.EmittedHostfile = f.emit
	}
	if f.emitLocations != "" {
		var b strings.Builder
		fmt.Fprintf(&b, "# HOST LOCATION of the hosts of %s, from %s (nccom-rings plan --emit-locations)\n", quote.String(hostsName), quote.String(f.locations))
		for m, h := range hosts {
			if locs[m] != "" {
				b.WriteString(h.Name + " " + locs[m] + "\n")
			}
		}
		if err := safefile.WriteFile(f.emitLocations, []byte(b.String()), 0o644); err != nil {
			return unusable(fmt.Errorf("--emit-locations: %w", err))
		}
		rep.EmittedLocations = f.emitLocations
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

// readHosts reads the hosts of --hosts (a hostfile, or a host list when
// it names no file and holds '[' or ',', or names on several lines, as
// "$(scontrol show hostnames)" gives) or of --hosts-from-env, and names
// where they came from and, for the environment, where their slot counts
// came from.
func readHosts(f *planFlags) (hosts []plan.Host, name, slotsFrom string, err error) {
	if f.hostsFromEnv {
		list := os.Getenv("SLURM_JOB_NODELIST")
		if list == "" {
			return nil, "", "", fmt.Errorf("--hosts-from-env: SLURM_JOB_NODELIST is not set (not in a Slurm job's environment): give --hosts")
		}
		hosts, err := plan.HostsOfList("SLURM_JOB_NODELIST", list)
		if err != nil {
			return nil, "", "", err
		}
		slotsFrom, err = envSlots(hosts)
		return hosts, "SLURM_JOB_NODELIST=" + list, slotsFrom, err
	}
	if location.IsHostlist(f.hosts) || strings.ContainsAny(f.hosts, "\n\r") {
		if _, err := os.Stat(f.hosts); errors.Is(err, os.ErrNotExist) || err != nil && strings.ContainsAny(f.hosts, "\n\r") {
			// Names on lines (or blanks) in one argument: each a name or
			// a host list, in order.
			// A host list takes blanks and newlines as separators too;
			// its errors quote it as given, the reports one line of it.
			hosts, err := plan.HostsOfList("--hosts", f.hosts)
			return hosts, strings.Join(strings.Fields(f.hosts), ","), "", err
		}
	}
	hosts, err = plan.ReadHostfile(f.hosts)
	return hosts, f.hosts, "", err
}

// envSlots gives hosts the rank counts of this Slurm job's environment:
// SLURM_NTASKS_PER_NODE (one count), else SLURM_TASKS_PER_NODE ("32(x16)",
// "32,16(x2)": a count a host), and names the variable; a value that is
// not one is refused, naming it.
func envSlots(hosts []plan.Host) (string, error) {
	if v, ok := os.LookupEnv("SLURM_NTASKS_PER_NODE"); ok && v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > plan.MaxRanks {
			return "", fmt.Errorf("--hosts-from-env: SLURM_NTASKS_PER_NODE=%s is not a rank count in [1, %d]", quote.String(v), plan.MaxRanks)
		}
		for i := range hosts {
			hosts[i].Slots = n
		}
		// Slurm sets both alike; a job whose two disagree was not laid
		// out as either says, and a plan of one would be a guess.
		if t, ok := os.LookupEnv("SLURM_TASKS_PER_NODE"); ok && t != "" {
			counts, err := plan.TasksPerNode(t)
			if err == nil && len(counts) == len(hosts) {
				for i, c := range counts {
					if c != n {
						return "", fmt.Errorf("--hosts-from-env: SLURM_NTASKS_PER_NODE=%s and SLURM_TASKS_PER_NODE=%s disagree: host %d (%s) gets %d by the second (Slurm sets the two alike)", quote.String(v), quote.String(t), i+1, quote.String(hosts[i].Name), c)
					}
				}
			}
		}
		return "SLURM_NTASKS_PER_NODE=" + v, nil
	}
	if v, ok := os.LookupEnv("SLURM_TASKS_PER_NODE"); ok && v != "" {
		counts, err := plan.TasksPerNode(v)
		if err != nil {
			return "", fmt.Errorf("--hosts-from-env: SLURM_TASKS_PER_NODE=%s: %v", quote.String(v), err)
		}
		if len(counts) != len(hosts) {
			return "", fmt.Errorf("--hosts-from-env: SLURM_TASKS_PER_NODE=%s gives counts for %s, but SLURM_JOB_NODELIST lists %s", quote.String(v), count(len(counts), "host"), count(len(hosts), "host"))
		}
		for i := range hosts {
			hosts[i].Slots = counts[i]
		}
		return "SLURM_TASKS_PER_NODE=" + v, nil
	}
	return "", nil
}

// envValues says the values of the variables: NAME=VALUE, or NAME unset.
func envValues(names ...string) string {
	var said []string
	for _, n := range names {
		if v, ok := os.LookupEnv(n); ok {
			said = append(said, n+"="+quote.String(v))
		} else {
			said = append(said, n+" unset")
		}
	}
	return strings.Join(said, ", ")
}

// readLocations reads the --locations file: UTF-8 (a byte-order mark
// skipped, UTF-16 refused). A file it cannot read that is a topology
// (locate's source: EC2's JSON, a topology.conf) is said to be one.
func readLocations(path string) ([]location.Entry, error) {
	data, err := location.ReadFile(path)
	if err != nil {
		return nil, err
	}
	entries, err := location.ReadLocations(bytes.NewReader(data))
	if err == nil {
		return entries, nil
	}
	if e, ok := err.(*location.Error); ok {
		e.File = path
	}
	if source, derr := location.Detect(path, data); derr == nil {
		return nil, fmt.Errorf("--locations %s: this is a SOURCE file of locate (%s:, a topology), not HOST LOCATION lines: run nccom-rings locate --all %s > locations first, then give --locations locations", quote.String(path), source, quote.String(source+":"+path))
	}
	if bytes.Contains(data, []byte(`"Reservations"`)) {
		return nil, fmt.Errorf("--locations %s: this is the output of aws ec2 describe-instances, not HOST LOCATION lines: give it with --instances, and as --locations the output of nccom-rings locate --all ec2:TOPOLOGY.json", quote.String(path))
	}
	return nil, err
}

// writeUnlocated says why plan plans nothing: how many hosts of how many
// have a location, the first without one and why, and the one line that
// would join the hosts to the locations' names.
func writeUnlocated(w io.Writer, f *planFlags, hostsName string, hosts []plan.Host, entries []location.Entry, joins []*location.Instances, located, first int, why location.Joined) {
	h := hosts[first]
	where := ""
	if h.Line > 0 {
		where = fmt.Sprintf(" (line %d of %s)", h.Line, quote.String(hostsName))
	}
	reason := why.Reason
	if len(joins) == 0 {
		reason = "not in " + quote.String(f.locations)
	}
	fmt.Fprintf(w, "nccom-rings plan: %d of %d hosts located, so nothing planned; the first without a location, %s%s: %s\n",
		located, len(hosts), quote.String(h.Name), where, reason)
	ec2 := true // the locations name instances, and no describe-instances joins them
	for _, in := range joins {
		ec2 = ec2 && in.Kind != location.KindDescribeInstances
	}
	named := ""
	for _, e := range entries {
		switch k := location.Key(e.Host); {
		case strings.HasPrefix(k, "i-"):
			named = "EC2 instances"
		case strings.HasPrefix(k, "cr-") && named == "":
			named = "EC2 capacity reservations"
		}
	}
	ec2 = ec2 && named != ""
	for _, in := range joins {
		if in.Truncated {
			fmt.Fprintf(w, "nccom-rings plan: --instances %s: its last page has a NextToken, so the instances of the pages after it are missing\n", quote.String(in.File))
		}
	}
	const allow = " (or --allow-unlocated, to plan them without a location)"
	switch {
	case ec2:
		fmt.Fprintf(w, "nccom-rings plan: %s names %s; join the hosts to them: aws ec2 describe-instances --output json > instances.json and add --instances instances.json%s\n", quote.String(f.locations), named, allow)
	case len(joins) == 0:
		fmt.Fprintf(w, "nccom-rings plan: join the hosts to the names %s gives with --instances FILE: scontrol show nodes > FILE (Slurm), kubectl get pods -o json > FILE (Kubernetes), aws ec2 describe-instances --output json > FILE (EC2), or HOST NAME lines%s\n", quote.String(f.locations), allow)
	default:
		fmt.Fprintf(w, "nccom-rings plan: add the --instances FILE that names them, or locations that list them%s\n", allow)
	}
}

// writePlan prints the plans side by side: one row per order, one column
// per level.
func writePlan(w io.Writer, rep planReport) {
	fmt.Fprintf(w, "nccom-rings plan: %s x %s = %s; graph: %s\n",
		count(rep.NRanks/max(rep.RanksPerNode, 1), "host"), count(rep.RanksPerNode, "rank"), count(rep.NRanks, "rank"), rep.Graph)
	if len(rep.Instances) > 0 {
		fmt.Fprintf(w, "  %d of %d hosts located in %s, joined through --instances %s\n", rep.Located, rep.Located+len(rep.Unlocated), quote.String(rep.Locations), quote.List(rep.Instances))
	}
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
	simulated := len(rep.Plans) > 0 && len(rep.Plans[0].Predicted) > 0
	if simulated {
		fmt.Fprint(tw, "\tPREDICTED BUSBW 1:1/2:1/4:1 GBIT/S")
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
		if simulated {
			var bw []string
			for _, q := range p.Predicted {
				bw = append(bw, fmt.Sprintf("%.0f", q.BusbwGbps))
			}
			fmt.Fprintf(tw, "\t%s", strings.Join(bw, "/"))
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
	if rep.EmittedLocations != "" {
		fmt.Fprintf(w, "  locations by host name written to %s: score and report take it as --locations\n", quote.String(rep.EmittedLocations))
	}
}

// planSimulate is --simulate: simulate's prediction of one order's
// rings (quickAllReduce) at 1:1, 2:1 and 4:1.
func planSimulate(order string, job *score.Job) ([]simulate.Prediction, error) {
	preds, err := quickAllReduce(order, job, "1", "2", "4")
	if err != nil {
		return nil, fmt.Errorf("--simulate: %w", err)
	}
	return preds, nil
}

// head is the first n of v, space-separated, then "..." when there are more.
func head(v []int, n int) string {
	s := strings.Trim(fmt.Sprint(v[:min(len(v), n)]), "[]")
	if len(v) > n {
		s += fmt.Sprintf(" ... (%d more)", len(v)-n)
	}
	return s
}
