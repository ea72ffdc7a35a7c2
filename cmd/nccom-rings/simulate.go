package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/plan"
	"github.com/nccomring/libnccomring/cmd/nccom-rings/score"
	"github.com/nccomring/libnccomring/cmd/nccom-rings/simulate"
	"github.com/nccomring/libnccomring/internal/cli"
	"github.com/nccomring/libnccomring/internal/quote"
	"github.com/nccomring/libnccomring/layout"
)

type simulateFlags struct {
	locations, hosts, graph, routing string
	local                            int
	orders                           orders
	algorithms, oversub, sizes       repeated // values may be comma-separated too; an oversubscription "L1:2,L2:4" is one
	nicGbps                          float64
	latency                          time.Duration
	json                             bool
}

var simulateCommand = &cli.Command{
	Name:    "simulate",
	Summary: "predicted time and bus bandwidth of AllReduce, AllGather, ReduceScatter on a fat-tree model of the network (SimGrid), per order",
	Usage: []string{
		"DIR... [--locations FILE] [options]",
		"--locations FILE --hosts HOSTFILE|HOSTLIST [--ranks-per-node L] [--graph FILE] [--order rank|network]... [options]",
		"options: [--algorithm flat|hierarchical]... [--oversubscription R|L1:R,L2:R]... [--routing spray|static] [--nic-gbps G] [--latency D] [--bytes SIZE]... [--json]",
	},
	Doc: `Predicts what a job's rings are worth on its network: the time and bus
bandwidth (nccl-tests' busbw) of AllReduce, AllGather and ReduceScatter,
per order, algorithm, oversubscription and message size, and the most
loaded link of each level. The rings are a job's dumps (DIR, one order
each, named by DIR; locations from the dumps or --locations), or what
plan builds in memory for a described cluster (plan's inputs, up to
65,536 ranks), once per --order.

The network is a fat tree built from the nodes' locations (D25): node
NICs, then one switch group per location level, each group's uplinks
carrying what enters it over the level's oversubscription. Every
inter-node ring edge of every channel is a flow from its rank's NIC to
the next rank's (the dumps' netDev); SimGrid (the engine, build/` + simulate.EngineName + `)
solves all of them at once as one steady state, and a collective takes
its ring steps x (latency + its part of the message at the slowest
flow's rate). --algorithm flat is the rings as built; hierarchical is
Neuron's intra-node ReduceScatter, an inter-node ring per local index
(each rank on its own NIC), intra-node AllGather. Every guessed parameter is printed under
"assumptions". docs/simulate.md says how to read it.

Without the engine (SimGrid was not installed when make ran) simulate
exits 2 with the line that installs it.
`,
	Exits: cli.Exits("predicted", "", "unusable input or usage, or no engine: a bad directory, dump, hostfile, locations, graph or flag, more than 65,536 ranks, a single node, the engine missing or failing"),
	Setup: func(fs *flag.FlagSet) func(*cli.Invocation) int {
		var f simulateFlags
		fs.StringVar(&f.locations, "locations", "", `"HOST LOCATION" lines (nccom-rings locate --all) in `+"`FILE`"+`: the described cluster's, or with DIR matched by the dumps' host names`)
		fs.StringVar(&f.hosts, "hosts", "", "the described cluster's hosts, as plan --hosts: a `HOSTFILE` or a HOSTLIST")
		fs.IntVar(&f.local, "ranks-per-node", 0, "`L` ranks on each host, as plan's (default: --graph's, else the hosts' slots)")
		fs.StringVar(&f.graph, "graph", "", "an NCCL_GRAPH_FILE `FILE` every node has, as plan --graph (default: the embedded default cluster's)")
		fs.Var(&f.orders, "order", "with --hosts: NCCOM_RING_NODE_ORDER for every rank, `rank|network`; repeatable (default: rank, then network)")
		fs.Var(&f.algorithms, "algorithm", "`flat|hierarchical`; repeatable (default: both)")
		fs.Var(&f.oversub, "oversubscription", "`R` (every level R:1) or L1:R,L2:R (level 1 outermost; levels not named 1:1); repeatable, one row each (default: 1, 2, 4)")
		fs.StringVar(&f.routing, "routing", "spray", "`spray|static`: each flow spread over every uplink (EFA's SRD), or one uplink by destination (D-mod-k; depends on host numbering nobody publishes)")
		fs.Float64Var(&f.nicGbps, "nic-gbps", defaultNICGbps, "each NIC's rate, `G` Gbit/s each way (a guess: EFA on trn1 is 8 x 100 Gbit/s a node)")
		fs.DurationVar(&f.latency, "latency", defaultLatency, "latency of one inter-node ring hop, `D` a duration such as 15us (Neuron documents about 15us)")
		fs.Var(&f.sizes, "bytes", "message `SIZE` (nccl-tests' size: 1M, 256M, 4G, or bytes); repeatable (default: 1M, 16M, 256M)")
		fs.BoolVar(&f.json, "json", false, `{"predictions": [{"order", "algorithm", "collective", "oversubscription", "bytes", "seconds", "busbw_gbps"}], "bottlenecks": [{"order", "algorithm", "oversubscription", "level", "link", "flows", "used_gbps", "capacity_gbps"}], "assumptions": [...]}, or {"error"} on exit 2`)
		return func(inv *cli.Invocation) int { return runSimulate(inv, &f) }
	},
}

func runSimulate(inv *cli.Invocation, f *simulateFlags) int {
	unusable := func(err error) int {
		if err != nil {
			fmt.Fprintf(inv.Stderr, "nccom-rings simulate: %v\n", err)
		}
		if f.json {
			writeJSON(inv.Stdout, map[string]string{"error": "unusable input (named on stderr)"})
		}
		return cli.ExitUnusable
	}
	usage := func(format string, a ...any) int {
		inv.UsageError(format, a...)
		return unusable(nil)
	}
	opt, err := simulateOptions(f)
	if err != nil {
		return usage("%v", err)
	}
	var ords []simulate.Order
	switch {
	case len(inv.Operands) > 0 && f.hosts != "":
		return usage("DIR and --hosts exclude each other")
	case len(inv.Operands) > 0:
		for _, dir := range inv.Operands {
			files, bad, err := readDumpDir(dir)
			for _, b := range bad {
				inv.Errorf("%v", b)
			}
			if err == nil && len(bad) > 0 {
				err = fmt.Errorf("%s: %d unusable dump files", quote.String(dir), len(bad))
			}
			if err != nil {
				return unusable(err)
			}
			job, err := dumpedJob(dir, files, f.locations)
			if err != nil {
				return unusable(err)
			}
			ords = append(ords, simulate.Order{Name: dir, Job: job})
		}
	case f.locations == "" || f.hosts == "":
		return usage("give DIR, or --locations and --hosts")
	default:
		if ords, err = plannedOrders(f); err != nil {
			return unusable(err)
		}
	}
	if opt.Engine, err = simulate.FindEngine(); err != nil {
		return unusable(err)
	}
	rep, err := simulate.Simulate(ords, opt)
	if err != nil {
		return unusable(err)
	}
	if f.json {
		writeJSON(inv.Stdout, rep)
	} else {
		writeSimulate(inv.Stdout, rep)
	}
	return cli.ExitOK
}

// The model's defaults: simulate's flags', and those plan --simulate and
// report --simulate use (quickAllReduce).
const (
	defaultNICGbps = 100
	defaultLatency = 15 * time.Microsecond
)

// quickBytes is plan --simulate's and report --simulate's message size:
// 256 MiB, simulate's largest default, where the ring's bandwidth and not
// the latency of its 2(N-1) steps sets the time (at 1 MiB a 512-rank
// AllReduce is 1,022 steps of 15 us and 128-byte parts: the latency guess
// alone).
const quickBytes = 256 << 20

// quickOptions is plan --simulate's and report --simulate's model:
// AllReduce of quickBytes on the flat rings (as built) at each
// oversubscription given, with spray routing and simulate's default NIC
// rate and latency, read as simulate reads its flags; no engine yet.
func quickOptions(oversub ...string) (simulate.Options, error) {
	return simulateOptions(&simulateFlags{routing: "spray", nicGbps: defaultNICGbps, latency: defaultLatency,
		algorithms: repeated{"flat"}, oversub: oversub, sizes: repeated{strconv.Itoa(quickBytes)}})
}

// quickAllReduce is one job's predicted AllReduce under quickOptions, one
// per oversubscription, the engine found as simulate finds it
// (simulate.ErrNoEngine when it is not built).
func quickAllReduce(name string, job *score.Job, oversub ...string) ([]simulate.Prediction, error) {
	opt, err := quickOptions(oversub...)
	if err != nil {
		return nil, err
	}
	if opt.Engine, err = simulate.FindEngine(); err != nil {
		return nil, err
	}
	rep, err := simulate.Simulate([]simulate.Order{{Name: name, Job: job}}, opt)
	if err != nil {
		return nil, err
	}
	var out []simulate.Prediction
	for _, p := range rep.Predictions {
		if p.Collective == "allreduce" {
			out = append(out, p)
		}
	}
	return out, nil
}

// simulateOptions reads the model's flags, with their defaults.
func simulateOptions(f *simulateFlags) (simulate.Options, error) {
	opt := simulate.Options{Model: simulate.Model{NICGbps: f.nicGbps, LatencySeconds: f.latency.Seconds()}}
	switch f.routing {
	case "spray":
	case "static":
		opt.Model.Static = true
	default:
		return opt, fmt.Errorf("--routing %s: spray or static", quote.String(f.routing))
	}
	if f.nicGbps <= 0 || f.nicGbps > 1e6 {
		return opt, fmt.Errorf("--nic-gbps %g: outside (0, 1e6]", f.nicGbps)
	}
	if f.latency < 0 {
		return opt, fmt.Errorf("--latency %v: negative", f.latency)
	}
	opt.Algorithms = f.algorithms
	if len(opt.Algorithms) == 0 {
		opt.Algorithms = simulate.Algorithms
	}
	for _, a := range opt.Algorithms {
		if a != "flat" && a != "hierarchical" {
			return opt, fmt.Errorf("--algorithm %s: flat or hierarchical", quote.String(a))
		}
	}
	over := []string(f.oversub)
	if len(over) == 0 {
		over = []string{"1", "2", "4"}
	}
	for _, s := range over {
		o, err := simulate.ParseOversubscription(s)
		if err != nil {
			return opt, fmt.Errorf("--oversubscription: %v", err)
		}
		opt.Oversubscriptions = append(opt.Oversubscriptions, o)
	}
	sizes := []string(f.sizes)
	if len(sizes) == 0 {
		sizes = []string{"1M", "16M", "256M"}
	}
	for _, s := range sizes {
		n, err := parseSize(s)
		if err != nil {
			return opt, fmt.Errorf("--bytes: %v", err)
		}
		opt.Bytes = append(opt.Bytes, n)
	}
	return opt, nil
}

// parseSize reads a size: bytes, or a number with K, M or G (binary).
func parseSize(s string) (int64, error) {
	mult := int64(1)
	num := s
	switch {
	case strings.HasSuffix(s, "K"):
		mult, num = 1<<10, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		mult, num = 1<<20, strings.TrimSuffix(s, "M")
	case strings.HasSuffix(s, "G"):
		mult, num = 1<<30, strings.TrimSuffix(s, "G")
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 1 || n > (1<<40)/mult {
		return 0, fmt.Errorf("%s is not a size from 1 byte to 1T", quote.String(s))
	}
	return n * mult, nil
}

// plannedOrders builds a described cluster's rings in memory, once per
// --order, with the code plan runs (plan.Rings).
func plannedOrders(f *simulateFlags) ([]simulate.Order, error) {
	var graph *plan.GraphFile
	if f.graph != "" {
		var err error
		if graph, err = plan.ReadGraphFile(f.graph); err != nil {
			return nil, err
		}
		if f.local == 0 {
			f.local = graph.LocalRanks
		}
	}
	hosts, hostsName, _, err := readHosts(&planFlags{hosts: f.hosts})
	if err != nil {
		return nil, err
	}
	if f.local == 0 {
		n, ok := plan.CommonSlots(hosts)
		if !ok {
			return nil, fmt.Errorf("--ranks-per-node is needed: neither --graph nor the same slot count on every host of %s gives it", quote.String(hostsName))
		}
		f.local = n
	}
	if f.local < 1 || f.local > layout.MaxLocalRanks {
		return nil, fmt.Errorf("--ranks-per-node %d: 1 to %d ranks on a host", f.local, layout.MaxLocalRanks)
	}
	entries, err := readLocations(f.locations)
	if err != nil {
		return nil, err
	}
	locs, _ := plan.LocateJoined(hosts, entries, nil)
	cl := plan.Cluster{RanksPerNode: f.local, Locations: locs, Graph: graph}
	for _, h := range hosts {
		cl.Hosts = append(cl.Hosts, h.Name)
	}
	ords := f.orders
	if len(ords) == 0 {
		ords = orders{"rank", "network"}
	}
	var out []simulate.Order
	for _, o := range ords {
		res, err := plan.Rings(cl, o == "network")
		if err != nil {
			var stage *plan.StageError
			if errors.As(err, &stage) {
				return nil, fmt.Errorf("order %s: the ring stage refused: %w", o, err)
			}
			return nil, err
		}
		out = append(out, simulate.Order{Name: o, Job: res.Job})
	}
	return out, nil
}

// writeSimulate prints the predictions, one row each, then the
// bottlenecks and the assumptions.
func writeSimulate(w io.Writer, rep *simulate.Report) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "ORDER\tALGORITHM\tCOLLECTIVE\tOVERSUB\tBYTES\tSECONDS\tBUSBW GBIT/S\t\n")
	for _, p := range rep.Predictions {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%.6f\t%.1f\t\n", p.Order, p.Algorithm, p.Collective, ratioText(p.Oversubscription), p.Bytes, p.Seconds, p.BusbwGbps)
	}
	tw.Flush()
	fmt.Fprintln(w, "most loaded link of each level (ORDER ALGORITHM OVERSUB: LEVEL LINK used/capacity Gbit/s, flows):")
	for _, b := range rep.Bottlenecks {
		fmt.Fprintf(w, "  %s %s %s: %s %s %.1f/%.1f, %s\n", b.Order, b.Algorithm, ratioText(b.Oversubscription), b.Level, b.Link, b.UsedGbps, b.CapacityGbps, count(b.Flows, "flow"))
	}
	fmt.Fprintln(w, "assumptions:")
	for _, a := range rep.Assumptions {
		fmt.Fprintf(w, "  - %s\n", a)
	}
}

// ratioText shows an oversubscription as given, "R" as "R:1".
func ratioText(o string) string {
	if strings.HasPrefix(o, "L") || strings.HasSuffix(o, ":1") {
		return o
	}
	return o + ":1"
}
