package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/location"
	"github.com/nccomring/libnccomring/internal/cli"
)

type locateFlags struct {
	host, instance string
	all, json      bool
	instances      repeated
	from           string
	labels         string
	accelerator    bool
	topology       string
}

var locateCommand = &cli.Command{
	Name:    "locate",
	Summary: "a host's NCCOM_RING_LOCATION (or every host's) from the topology files operators have: EC2, EKS/Kubernetes, Slurm",
	Usage: []string{
		"[--host NAME | --instance ID] [--instances FILE]... [--json] [--from SOURCE] [--labels LABELS] [--accelerator] [--topology NAME] [SOURCE:]FILE",
		"--all [--json] [--from SOURCE] [--labels LABELS] [--accelerator] [--topology NAME] [SOURCE:]FILE",
		"[--all] [--json] --from slurm-env",
	},
	Doc: `Prints one host's NCCOM_RING_LOCATION (D25): where FILE places it in the
network, outermost name first, for a job script to export before the job
starts (the library itself reads no file):

  export NCCOM_RING_LOCATION=$(nccom-rings locate slurm:/etc/slurm/topology.conf)

SOURCE is the prefix of FILE or --from; without either, or with --from
auto, it is told from FILE's content:

  ec2:FILE    the JSON of "aws ec2 describe-instance-topology" (one response,
              pages one after another, or an array of pages): the instance's
              NetworkNodes, top layer first (nn-1/nn-2/nn-3). The instance is
              --instance ID (or --host ID), else this instance's own id, read from the DMI
              board asset tag of Nitro instances
              (/sys/devices/virtual/dmi/id/board_asset_tag).
  ec2-reservation:FILE
              the JSON of "aws ec2 describe-capacity-reservation-topology":
              each Capacity Reservation's NetworkNodes (1 to 3 layers),
              before instances are launched in it. The host is the
              reservation id (cr-...) or its CapacityBlockId (cb-...),
              --host ID.
  k8s:FILE    the JSON of "kubectl get nodes -o json": a node's labels,
              EKS's topology.k8s.aws/network-node-layer-1..4 (layer 1
              outermost), else Topograph's network.topology.nvidia.com/
              core, spine, leaf (and accelerator, with --accelerator), else
              its fabric.topograph.run/tier-N (the highest tier outermost),
              or the labels of --labels (a key no node has is an error, as
              is --accelerator when no node has the label). A node lacking
              a level that other nodes have has no location (exit 1): a
              shorter one would group it wrongly. The host is the node
              name, its InternalIP (status.addresses), or the instance id
              of its spec.providerID: --host NAME, --instance ID, else
              this instance's id (the DMI board asset tag).
  slurm:FILE  what Slurm says: a topology.conf of the topology/tree plugin
              (the switches from the top switch down to the leaf whose
              Nodes= lists the host: spine0/leaf1) or of topology/block
              (BlockName= lines: the host's block), a topology.yaml (Slurm
              25.05: its cluster_default topology, or --topology NAME; tree
              and block read, flat places no host, ring and torus3d are
              refused), or the output of "scontrol show topology" (or of
              "scontrol show topology NODE", which prints NODE's switches
              alone: a switch that a Switches= names and no line defines
              is one whose nodes are not known, skipped; a switch printed
              without the one above it, its chain not whole, leaves its
              hosts without a location). The host is --host NAME, else
              $SLURMD_NODENAME, else this host's name.
  --from slurm-env
              no file: this task's SLURM_TOPOLOGY_ADDR (top switch first,
              then the node, period-separated) with
              SLURM_TOPOLOGY_ADDR_PATTERN (switch.switch.node; block.node
              under topology/block), which Slurm sets in every task: the
              switches (the block). A pattern of "node" alone places the
              node nowhere (exit 1).

--labels and --accelerator apply to k8s only, --topology to slurm only,
--instance to ec2 and k8s: given with another source (as named, or as
told by content), each is a usage error (exit 2) naming the flag and the
source, not ignored. Blanks around --instance's id and --labels' keys are
cut.

Every source gives the same --all lines, "HOST LOCATION". FILE "-" is
standard input; a UTF-8 byte-order mark is skipped. Host names are
compared in lowercase up to the first dot (trn001.ec2.internal is
TRN001). A host listed under two leaf switches (or in two blocks), or
below a switch that two switches list, has no location (exit 1), as
has a Capacity Block id or a spec.providerID instance id that two hosts
of different locations share (both are named). A file
is read whole or refused: at most 64 MiB (a topology.yaml 1 MiB, read
without aliases), lines of a topology.conf at most 64 KiB, at most
65,536 switches (or blocks), at most 1,000,000 hosts once host lists like
trn[001-016,020] are expanded (commas and blanks separate a list's names,
skipped in a row, as Slurm reads them). A
host list is sized before it is expanded: names of at most 255 bytes (64
for a switch), and at most 64 MiB of names in the file, a list counted as
its names times its longest.

Names travel to the library as 32-bit hashes (D28): two names of one level
that share one are one name to it. --all says so on stderr, one line each
pair (both names, the level, the hash); the exit code does not change.
`,
	Exits: cli.Exits("the location was printed (--all: every host's)", "the host is not in FILE, or has no location there; --all: a host of FILE without a location, no host at all, or an EC2 file whose last page has a NextToken (instances not fetched)", "unusable input or usage: no such file, a file that is not what its source says (or of no source locate knows) (named with the line and byte, and what was expected), a file or line over the limits, no instance id (not a Nitro instance: pass --instance), a bad flag, a flag that does not apply to the source, a --labels key (or --accelerator's label) no node has"),
	Setup: func(fs *flag.FlagSet) func(*cli.Invocation) int {
		var f locateFlags
		fs.StringVar(&f.host, "host", "", "the host `NAME` to locate: a Slurm node, a Kubernetes node, a Capacity Reservation id")
		fs.StringVar(&f.instance, "instance", "", "the EC2 instance `ID` to locate (ec2, k8s)")
		fs.StringVar(&f.from, "from", "", "what FILE is, when it has no prefix: `SOURCE` ec2, ec2-reservation, k8s, slurm, auto (the default: told by content), or slurm-env (no FILE)")
		fs.StringVar(&f.labels, "labels", "", "k8s: the node `LABELS` that give the location, outermost first, separated by commas, in place of EKS's or Topograph's")
		fs.BoolVar(&f.accelerator, "accelerator", false, "k8s: Topograph's accelerator label (an NVLink domain) as the innermost level")
		fs.StringVar(&f.topology, "topology", "", "slurm: the topology `NAME` of a topology.yaml to read, in place of its cluster_default one")
		fs.Var(&f.instances, "instances", "join the host to the name FILE's topology knows it by (a host name to an EC2 instance id) through `FILE`, as plan --instances; repeatable. --host then names a host of an ec2: topology too")
		fs.BoolVar(&f.all, "all", false, `every host of FILE instead, one "HOST LOCATION" line each, in file order, after a "#" comment naming FILE: the locations file every tool of this project reads ("#" comments and blank lines allowed there). HOST is the node name, for ec2 the instance id (DescribeInstanceTopology gives no host names), for ec2-reservation the reservation id`)
		fs.BoolVar(&f.json, "json", false, `{"host", "from", "location", "source", "file", "line"}, with "reason" in place of "location" when the host has none; with --all {"source", "file", "hosts": [{"host", "location", "line"}], "unlocated": [{"host", "line", "reason"}], "truncated", "collisions": [{"level", "hash", "names"}]}`)
		return func(inv *cli.Invocation) int { return runLocate(inv, &f) }
	},
}

// dmiAssetTag is where locate reads this instance's id; hostname is how
// it learns this host's name. Tests replace both.
var (
	dmiAssetTag = location.DMIAssetTag
	hostname    = os.Hostname
)

// located is locate's --json report of one host.
type located struct {
	Host     string `json:"host"`
	From     string `json:"from"`
	Location string `json:"location,omitempty"`
	Source   string `json:"source"`
	File     string `json:"file"`
	Line     int    `json:"line,omitempty"`
	Reason   string `json:"reason,omitempty"`
}

// unlocated is a host of --all without a location.
type unlocated struct {
	Host   string `json:"host"`
	Line   int    `json:"line"`
	Reason string `json:"reason"`
}

// locatedAll is locate --all --json's report.
type locatedAll struct {
	Source    string           `json:"source"`
	File      string           `json:"file"`
	Hosts     []location.Entry `json:"hosts"`
	Unlocated []unlocated      `json:"unlocated"`
	Truncated bool             `json:"truncated"`
	// Collisions are the names of one level that share a hash (D28).
	Collisions []location.Collision `json:"collisions"`
}

// maxUnlocatedLines bounds the lines --all prints about hosts without a
// location.
const maxUnlocatedLines = 20

func runLocate(inv *cli.Invocation, f *locateFlags) int {
	operands, stdout, stderr := inv.Operands, inv.Stdout, inv.Stderr
	given, usage := inv.Given, inv.UsageError
	known := func(s string) bool { return slices.Contains(location.Sources, s) }
	// An id pasted with a blank is the id: an instance id holds none.
	f.instance = strings.TrimSpace(f.instance)
	source, path := f.from, ""
	switch {
	case f.from == "slurm-env":
		if len(operands) != 0 {
			return usage("--from slurm-env reads no file (SLURM_TOPOLOGY_ADDR), got %d operands", len(operands))
		}
	case f.from != "" && f.from != "auto" && !known(f.from):
		return usage("--from %s: want ec2, ec2-reservation, k8s, slurm, slurm-env or auto", strconv.QuoteToASCII(f.from))
	case len(operands) != 1:
		return usage("want one [SOURCE:]FILE, got %d operands", len(operands))
	default:
		path = operands[0]
		if s, p, ok := strings.Cut(path, ":"); ok && known(s) {
			if f.from != "" && f.from != s {
				return usage("--from %s and the prefix %s: name the source once", f.from, s)
			}
			source, path = s, p
		} else if ok && isWord(s) {
			// A file name may hold ':', so a prefix no source has is
			// the file's name only when that file is there.
			if _, err := os.Lstat(path); err != nil {
				return usage("%s: no source %s (want ec2, ec2-reservation, k8s or slurm before ':', lower case), and no file of that name", strconv.QuoteToASCII(operands[0]), strconv.QuoteToASCII(s))
			}
		}
		if source == "slurm-env" {
			return usage("slurm-env reads no file: use --from slurm-env alone")
		}
		if path == "" {
			return usage("%s: want [SOURCE:]FILE, a file after the prefix", strconv.QuoteToASCII(operands[0]))
		}
		if source == "" {
			source = "auto"
		}
	}
	switch {
	case f.all && (given("host") || given("instance")):
		return usage("--all lists every host of the file; --host and --instance name one")
	case given("host") && given("instance"):
		return usage("--host and --instance exclude each other")
	case f.all && len(f.instances) > 0:
		return usage("--all lists the file's own names; --instances joins one host (plan --instances joins a hostfile's)")
	case given("host") && f.host == "", given("instance") && f.instance == "":
		return usage("--host and --instance need a name")
	}
	if code, bad := sourceFlags(inv, f, source); bad {
		return code
	}
	opts := location.Options{K8s: location.K8sOptions{Accelerator: f.accelerator}, Slurm: location.SlurmOptions{Topology: f.topology}}
	if given("labels") {
		// Blanks around a key are cut, as kubectl's -L a,b reads them: a
		// label key holds none, so "a, b" can only mean a and b.
		for _, l := range strings.Split(f.labels, ",") {
			l = strings.TrimSpace(l)
			if l == "" || strings.ContainsAny(l, " \t\n\r\v\f") {
				return usage("--labels %s: want label keys separated by commas, outermost first", strconv.QuoteToASCII(f.labels))
			}
			opts.K8s.Labels = append(opts.K8s.Labels, l)
		}
	}

	var topo *location.Topology
	var err error
	if source == "slurm-env" {
		path = location.SlurmTopologyAddr
		topo, err = location.FromSlurmEnv(os.Getenv(location.SlurmTopologyAddr), os.Getenv(location.SlurmTopologyAddrPattern))
	} else {
		var data []byte
		if data, err = location.ReadFile(path); err == nil {
			if source == "auto" {
				if source, err = location.Detect(path, data); err == nil {
					if code, bad := sourceFlags(inv, f, source); bad {
						return code
					}
				}
			}
			if err == nil {
				topo, err = location.Parse(source, path, data, opts)
			}
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "nccom-rings locate: %v\n", err)
		return cli.ExitUnusable
	}
	if f.all {
		return locateAll(topo, f.json, stdout, stderr)
	}

	name, from, err := whichHost(source, f.host, f.instance, topo)
	if err != nil {
		fmt.Fprintf(stderr, "nccom-rings locate: %v\n", err)
		return cli.ExitUnusable
	}
	rep := located{Host: name, From: from, Source: source, File: path}
	const truncated = "its last page has a NextToken, so the instances of the pages after it are missing (the AWS CLI fetches every page unless given --max-items or --no-paginate)"
	key, joinWhy, err := joinedName(f.instances, name, topo)
	if err != nil {
		fmt.Fprintf(stderr, "nccom-rings locate: --instances: %v\n", err)
		return cli.ExitUnusable
	}
	h, found := topo.Lookup(key)
	switch {
	case !found:
		rep.Reason = "not in the file"
		if joinWhy != "" {
			rep.Reason += "; --instances joins it to none: " + joinWhy
		}
		if topo.Reason != "" {
			rep.Reason += ": " + topo.Reason
		}
		if topo.Truncated {
			rep.Reason += "; " + truncated
		}
	case h.Location == "":
		rep.Line, rep.Reason = h.Line, h.Reason
	default:
		rep.Line, rep.Location = h.Line, h.Location
	}
	switch {
	case f.json:
		writeJSON(stdout, rep)
	case rep.Location != "":
		fmt.Fprintln(stdout, rep.Location)
	default:
		// A --host joined through --instances is a host, though the
		// file names instances.
		what := "host"
		if source == "ec2" && (len(f.instances) == 0 || location.IsInstanceID(name)) || from == "--instance" || from == "the DMI board asset tag" {
			what = "instance"
		}
		who := fmt.Sprintf("%s %s (from %s)", what, strconv.QuoteToASCII(name), from)
		where := source + ":" + strconv.QuoteToASCII(path)
		switch {
		case found:
			fmt.Fprintf(stderr, "nccom-rings locate: %s has no location in %s: %s\n", who, where, rep.Reason)
		case joinWhy != "":
			fmt.Fprintf(stderr, "nccom-rings locate: %s is not in %s, and --instances joins it to none of its names: %s\n", who, where, joinWhy)
		case topo.Reason != "":
			fmt.Fprintf(stderr, "nccom-rings locate: %s is not in %s: %s\n", who, where, topo.Reason)
		case topo.Truncated:
			fmt.Fprintf(stderr, "nccom-rings locate: %s is not in %s: %s\n", who, where, truncated)
		default:
			fmt.Fprintf(stderr, "nccom-rings locate: %s is not in %s\n", who, where)
		}
	}
	if rep.Location == "" {
		return cli.ExitFinding
	}
	return cli.ExitOK
}

// sourceFlags refuses the flags that do not apply to source (as given,
// or as told by the file's content): a flag silently ignored would leave
// the operator believing it was read. bad is false when all apply, and
// for source "auto", which is checked again once told.
func sourceFlags(inv *cli.Invocation, f *locateFlags, source string) (code int, bad bool) {
	given, usage := inv.Given, inv.UsageError
	if source == "auto" {
		return 0, false
	}
	for _, flag := range []string{"labels", "accelerator"} {
		if given(flag) && source != "k8s" {
			return usage("--%s does not apply to the %s source: it reads k8s nodes' labels", flag, source), true
		}
	}
	switch {
	case given("topology") && source != "slurm":
		return usage("--topology does not apply to the %s source: it names a topology of a Slurm topology.yaml", source), true
	case source == "ec2" && given("host") && len(f.instances) == 0 && !location.IsInstanceID(f.host):
		return usage("an EC2 instance-topology file names instances, not hosts: use --instance ID (or --instances FILE to join a host name to its instance)"), true
	case (source == "slurm" || source == "ec2-reservation" || source == "slurm-env") && given("instance") && len(f.instances) == 0:
		return usage("--instance does not apply to the %s source: it names hosts, not instances: use --host NAME", source), true
	}
	return 0, false
}

// whichHost is the host (or instance) to locate, and where its name came
// from.
func whichHost(source, host, instance string, topo *location.Topology) (name, from string, err error) {
	switch {
	case instance != "":
		return instance, "--instance", nil
	case host != "":
		return host, "--host", nil
	case source == "ec2" || source == "k8s":
		id, err := location.ReadInstanceID(dmiAssetTag)
		return id, "the DMI board asset tag", err
	case source == "slurm-env" && len(topo.Hosts) == 1:
		return topo.Hosts[0].Name, location.SlurmTopologyAddr, nil
	case source == "ec2-reservation":
		return "", "", fmt.Errorf("a Capacity Reservation topology names reservations: pass --host ID (cr-... or cb-...), or --all")
	case os.Getenv("SLURMD_NODENAME") != "":
		return os.Getenv("SLURMD_NODENAME"), "SLURMD_NODENAME", nil
	}
	name, err = hostname()
	if err != nil || name == "" {
		return "", "", fmt.Errorf("cannot tell this host's name (%v) and SLURMD_NODENAME is unset: pass --host NAME", err)
	}
	return name, "the host name", nil
}

// locateAll prints every host of topo as a locations file (or JSON).
func locateAll(topo *location.Topology, asJSON bool, stdout, stderr io.Writer) int {
	rep := locatedAll{Source: topo.Source, File: topo.File, Hosts: []location.Entry{}, Unlocated: []unlocated{}, Truncated: topo.Truncated,
		Collisions: []location.Collision{}}
	locs := make([]string, 0, len(topo.Hosts))
	rep.Hosts = slices.Grow(rep.Hosts, len(topo.Hosts))
	for _, h := range topo.Hosts {
		locs = append(locs, h.Location)
		if h.Location == "" {
			rep.Unlocated = append(rep.Unlocated, unlocated{Host: h.Name, Line: h.Line, Reason: h.Reason})
			continue
		}
		rep.Hosts = append(rep.Hosts, location.Entry{Host: h.Name, Location: h.Location, Line: h.Line})
	}
	rep.Collisions = append(rep.Collisions, location.Collisions(locs)...)
	if asJSON {
		writeJSON(stdout, rep)
	} else {
		// On stderr: standard output stays a locations file.
		for _, c := range rep.Collisions {
			fmt.Fprintf(stderr, "nccom-rings locate: %s\n", c)
		}
		// Written as it goes: a million hosts' lines are not held twice.
		b := bufio.NewWriterSize(stdout, 64<<10)
		fmt.Fprintf(b, "# HOST LOCATION of every host of %s:%s (nccom-rings locate --all)\n", topo.Source, strconv.QuoteToASCII(topo.File))
		switch topo.Source {
		case "ec2":
			b.WriteString("# HOST is the EC2 instance id: DescribeInstanceTopology gives no host names\n")
		case "ec2-reservation":
			b.WriteString("# HOST is the Capacity Reservation id: no instance is named before launch\n")
		}
		for _, e := range rep.Hosts {
			b.WriteString(e.Host)
			b.WriteByte(' ')
			b.WriteString(e.Location)
			b.WriteByte('\n')
		}
		b.Flush()
		for i, u := range rep.Unlocated {
			if i == maxUnlocatedLines {
				fmt.Fprintf(stderr, "nccom-rings locate: and %d more hosts without a location\n", len(rep.Unlocated)-i)
				break
			}
			at := fmt.Sprintf(" (line %d)", u.Line)
			if u.Line == 0 { // a variable's, not a file's
				at = ""
			}
			fmt.Fprintf(stderr, "nccom-rings locate: %s%s has no location: %s\n", u.Host, at, u.Reason)
		}
	}
	finding := len(rep.Unlocated) > 0 || len(topo.Hosts) == 0 || topo.Truncated
	if !asJSON {
		if len(topo.Hosts) == 0 && topo.Reason != "" {
			fmt.Fprintf(stderr, "nccom-rings locate: %s:%s places no host: %s\n", topo.Source, strconv.QuoteToASCII(topo.File), topo.Reason)
		} else if len(topo.Hosts) == 0 {
			fmt.Fprintf(stderr, "nccom-rings locate: %s:%s places no host\n", topo.Source, strconv.QuoteToASCII(topo.File))
		}
		if topo.Truncated {
			fmt.Fprintf(stderr, "nccom-rings locate: %s: the last page has a NextToken, so the instances of the pages after it are missing (the AWS CLI fetches every page unless given --max-items or --no-paginate)\n", strconv.QuoteToASCII(topo.File))
		}
	}
	if finding {
		return cli.ExitFinding
	}
	return cli.ExitOK
}

// isWord reports whether s could be meant as a source: letters, digits
// and '-', starting with a letter.
func isWord(s string) bool {
	for i, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && (c >= '0' && c <= '9' || c == '-')) {
			return false
		}
	}
	return s != ""
}
