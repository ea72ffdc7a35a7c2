package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/location"
	"github.com/nccomring/libnccomring/internal/cli"
)

type locateFlags struct {
	host, instance string
	all, json      bool
	instances      files
}

var locateCommand = &cli.Command{
	Name:    "locate",
	Summary: "a host's NCCOM_RING_LOCATION (or every host's) from an EC2 instance-topology JSON or a Slurm topology.conf",
	Usage: []string{
		"[--host NAME | --instance ID] [--json] ec2:FILE | slurm:FILE",
		"--all [--json] ec2:FILE | slurm:FILE",
		"[--host NAME | --instance ID] --instances FILE... [--json] ec2:FILE | slurm:FILE",
	},
	Doc: `Prints one host's NCCOM_RING_LOCATION (D25): where FILE places it in the
network, outermost name first, for a job script to export before the job
starts (the library itself reads no file):

  export NCCOM_RING_LOCATION=$(nccom-rings locate slurm:/etc/slurm/topology.conf)

  ec2:FILE    the JSON of "aws ec2 describe-instance-topology" (one response,
              pages one after another, or an array of pages): the instance's
              NetworkNodes, top layer first (nn-1/nn-2/nn-3). The instance is
              --instance ID, else this instance's own id, read from the DMI
              board asset tag of Nitro instances
              (/sys/devices/virtual/dmi/id/board_asset_tag).
  slurm:FILE  a topology.conf of Slurm's topology/tree plugin: the switches
              from the top switch (one no other switch lists) down to the
              leaf whose Nodes= lists the host (spine0/leaf1). The host is
              --host NAME, else $SLURMD_NODENAME, else this host's name.

FILE "-" is standard input. Host names are compared in lowercase up to the
first dot (trn001.ec2.internal is TRN001). A host listed under two leaf
switches, or below a switch that two switches list, has no location (exit
1). A file is read whole or refused: at most 64 MiB, lines of a
topology.conf at most 64 KiB, at most 1,000,000 hosts once host lists like
trn[001-016,020] are expanded. A host list is sized before it is
expanded: names of at most 255 bytes (64 for a switch), and at most 64 MiB
of names in the file, a list counted as its names times its longest.

Names travel to the library as 32-bit hashes (D28): two names of one level
that share one are one name to it. --all says so on stderr, one line each
pair (both names, the level, the hash); the exit code does not change.
`,
	Exits: cli.Exits("the location was printed (--all: every host's)", "the host is not in FILE, or has no location there; --all: a host of FILE without a location, no host at all, or an EC2 file whose last page has a NextToken (instances not fetched)", "unusable input or usage: no such file, a file that is not what its prefix says (named with the line and byte, and what was expected), a file or line over the limits, no instance id (not a Nitro instance: pass --instance), a bad flag"),
	Setup: func(fs *flag.FlagSet) func(*cli.Invocation) int {
		var f locateFlags
		fs.StringVar(&f.host, "host", "", "the Slurm node `NAME` to locate")
		fs.StringVar(&f.instance, "instance", "", "the EC2 instance `ID` to locate")
		fs.Var(&f.instances, "instances", "join the host to the name FILE's topology knows it by (a host name to an EC2 instance id) through `FILE`, as plan --instances; repeatable. --host then names a host of an ec2: topology too")
		fs.BoolVar(&f.all, "all", false, `every host of FILE instead, one "HOST LOCATION" line each, in file order, after a "#" comment naming FILE: the locations file every tool of this project reads ("#" comments and blank lines allowed there). HOST is the node name, or for ec2 the instance id: DescribeInstanceTopology gives no host names`)
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
	if len(operands) != 1 {
		return usage("want one ec2:FILE or slurm:FILE, got %d operands", len(operands))
	}
	source, path, _ := strings.Cut(operands[0], ":")
	switch {
	case source != "ec2" && source != "slurm" || path == "":
		return usage("%s: want ec2:FILE (an EC2 instance-topology JSON) or slurm:FILE (a topology.conf)", strconv.QuoteToASCII(operands[0]))
	case f.all && (given("host") || given("instance")):
		return usage("--all lists every host of the file; --host and --instance name one")
	case given("host") && given("instance"):
		return usage("--host and --instance exclude each other")
	case f.all && len(f.instances) > 0:
		return usage("--all lists the file's own names; --instances joins one host (plan --instances joins a hostfile's)")
	case source == "ec2" && given("host") && len(f.instances) == 0:
		return usage("an EC2 instance-topology file names instances, not hosts: use --instance ID")
	case source == "slurm" && given("instance") && len(f.instances) == 0:
		return usage("a topology.conf names hosts, not instances: use --host NAME")
	case given("host") && f.host == "", given("instance") && f.instance == "":
		return usage("--host and --instance need a name")
	}

	data, err := location.ReadFile(path)
	if err != nil {
		fmt.Fprintf(stderr, "nccom-rings locate: %v\n", err)
		return cli.ExitUnusable
	}
	parse := location.ParseSlurm
	if source == "ec2" {
		parse = location.ParseEC2
	}
	topo, err := parse(path, data)
	if err != nil {
		fmt.Fprintf(stderr, "nccom-rings locate: %v\n", err)
		return cli.ExitUnusable
	}
	if f.all {
		return locateAll(topo, f.json, stdout, stderr)
	}

	name, from, err := whichHost(source, f.host, f.instance)
	if err != nil {
		fmt.Fprintf(stderr, "nccom-rings locate: %v\n", err)
		return cli.ExitUnusable
	}
	rep := located{Host: name, From: from, Source: source, File: path}
	const truncated = "its last page has a NextToken, so the instances of the pages after it are missing (the AWS CLI fetches every page unless given --max-items or --no-paginate)"
	key, err := joinedName(f.instances, name, topo)
	if err != nil {
		fmt.Fprintf(stderr, "nccom-rings locate: --instances: %v\n", err)
		return cli.ExitUnusable
	}
	h, found := topo.Lookup(key)
	switch {
	case !found:
		rep.Reason = "not in the file"
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
		what := "host"
		if source == "ec2" {
			what = "instance"
		}
		who := fmt.Sprintf("%s %s (from %s)", what, strconv.QuoteToASCII(name), from)
		where := source + ":" + strconv.QuoteToASCII(path)
		switch {
		case found:
			fmt.Fprintf(stderr, "nccom-rings locate: %s has no location in %s: %s\n", who, where, rep.Reason)
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

// whichHost is the host (or instance) to locate, and where its name came
// from.
func whichHost(source, host, instance string) (name, from string, err error) {
	switch {
	case instance != "":
		return instance, "--instance", nil
	case source == "ec2" && host == "":
		id, err := location.ReadInstanceID(dmiAssetTag)
		return id, "the DMI board asset tag", err
	case host != "":
		return host, "--host", nil
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
	var locs []string
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
		var b strings.Builder
		fmt.Fprintf(&b, "# HOST LOCATION of every host of %s:%s (nccom-rings locate --all)\n", topo.Source, strconv.QuoteToASCII(topo.File))
		if topo.Source == "ec2" {
			b.WriteString("# HOST is the EC2 instance id: DescribeInstanceTopology gives no host names\n")
		}
		for _, e := range rep.Hosts {
			b.WriteString(e.Host + " " + e.Location + "\n")
		}
		io.WriteString(stdout, b.String())
		for i, u := range rep.Unlocated {
			if i == maxUnlocatedLines {
				fmt.Fprintf(stderr, "nccom-rings locate: and %d more hosts without a location\n", len(rep.Unlocated)-i)
				break
			}
			fmt.Fprintf(stderr, "nccom-rings locate: %s (line %d) has no location: %s\n", u.Host, u.Line, u.Reason)
		}
	}
	finding := len(rep.Unlocated) > 0 || len(topo.Hosts) == 0 || topo.Truncated
	if !asJSON {
		if len(topo.Hosts) == 0 {
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
