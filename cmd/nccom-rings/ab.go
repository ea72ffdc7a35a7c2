package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/ab"
	"github.com/nccomring/libnccomring/cmd/nccom-rings/location"
	"github.com/nccomring/libnccomring/cmd/nccom-rings/plan"
	"github.com/nccomring/libnccomring/internal/cli"
	"github.com/nccomring/libnccomring/internal/quote"
	"github.com/nccomring/libnccomring/internal/safefile"
	"github.com/nccomring/libnccomring/layout"
)

type abFlags struct {
	locations, hosts, a, b, out string
	minBytes, maxBytes, tool    string
	predicted                   string
	local, repeats, factor      int
	force, json                 bool
}

// maxRepeats bounds --repeats: 100 runs of each order is days of an
// allocation already.
const maxRepeats = 100

// maxRunOutput bounds the read of one run's output file: a run with
// NCCL_DEBUG=INFO on thousands of ranks writes megabytes.
const maxRunOutput = 64 << 20

var abCommand = &cli.Command{
	Name:    "ab",
	Summary: "write an A/B kit that measures what node order is worth on your allocation (rank order against network order, interleaved), and compare its runs",
	Usage: []string{
		"--locations FILE --hosts HOSTFILE|HOSTLIST [--ranks-per-node L] -o DIR [--repeats N] [--min-bytes SIZE] [--max-bytes SIZE] [--step-factor F] [--tool nccl-tests|nccom-test|both] [--force] [--json]",
		"-a HOSTFILE -b HOSTFILE [--ranks-per-node L] -o DIR [--repeats N] [--min-bytes SIZE] [--max-bytes SIZE] [--step-factor F] [--tool nccl-tests|nccom-test|both] [--force] [--json]",
		"compare [--predicted FILE] [--ranks-per-node L] [--json] DIR|RUNFILE...",
	},
	Doc: `Writes, in DIR, what an operator runs on their own allocation to measure
the effect of the node order: two hostfiles, A.hosts and B.hosts, holding
the same hosts in two orders, and run-ab.sh, a POSIX sh script that runs
the same all-reduce benchmark on each, interleaved A B A B ..., N times
each (--repeats, at least 5), with nccl-tests' all_reduce_perf under Open
MPI's mpirun (-g 1: one process a device, L on each host, in the
hostfile's order) and Neuron's nccom-test (allr, fp32, -r and -N from the
hosts, --hosts in the variant's order). Each run's output goes to
DIR/runs/VARIANT-REPEAT-TOOL.out (A-01-nccl-tests.out, ...); the script's
comments say which environment variables change it (TOOLS, MPIRUN_FLAGS,
...). ab.json records the kit.

A is the hostfile's own order (rank order: a launcher that keeps it
numbers the ranks so); B is D25's network order of the same hosts, from
--locations, as plan --emit-hostfile writes it. Every host needs a
location (plan joins them, and --emit-locations writes them by host name).
With -a and -b the two hostfiles are given: the same hosts, each once.
Host names must be letters, digits, '.', '_' and '-': the script holds
them.

ab compare reads the runs' outputs (DIR, or its runs/ directory, or run
files named as the script names them; nccl-tests' table and nccom-test's
told apart by their headers, launcher labels such as "0: " skipped) and
prints, for each tool and message size, the median and min-max of each
variant's bus bandwidth (nccl-tests: out-of-place busbw, GB/s; nccom-test:
busbw, GiB/s as its guide defines it), B/A, and a verdict: "no measurable
difference" when A's and B's min-max ranges overlap, else "B faster" or
"B slower"; with fewer than 5 runs of either variant, none. With 5 each,
two orders that do not differ give ranges that do not overlap 2 times in
252. It names the algorithm each size used where nccom-test reported it
(--show-algorithm), else the one it likely used (see docs/node-order.md).
--predicted takes nccom-rings simulate --json's predictions: for each
size, algorithm and oversubscription, simulate's all-reduce bus bandwidth
of the rank order (against A) and the network order (against B), its B/A,
and whether that lies inside the measured B/A range (B's min over A's max
to B's max over A's min); then simulate's assumptions.
`,
	Exits: cli.Exits(
		"the kit was written; compare: no size showed a measurable difference",
		"the kit was written, but A and B are one order (the runs measure only run-to-run noise); compare: some size showed a measurable difference (B faster or slower, each said)",
		"unusable input or usage: a missing or bad hostfile or locations file, a host without a location, a host name the script cannot hold, two hostfiles of different hosts, DIR not empty (without --force), fewer than 5 repeats; compare: a run file that cannot be read or holds no table (named; the others are compared), a bad --predicted file, no run at all"),
	Setup: func(fs *flag.FlagSet) func(*cli.Invocation) int {
		var f abFlags
		fs.StringVar(&f.locations, "locations", "", `"HOST LOCATION" lines in `+"`FILE`"+` (nccom-rings plan --emit-locations writes them by host name): B is D25's network order of the hosts`)
		fs.StringVar(&f.hosts, "hosts", "", "the hosts, as plan --hosts reads them (a `HOSTFILE` or a HOSTLIST): A is their order")
		fs.StringVar(&f.a, "a", "", "variant A's hosts, a `HOSTFILE` in its order (with -b, instead of --locations and --hosts)")
		fs.StringVar(&f.b, "b", "", "variant B's hosts, a `HOSTFILE` of the same hosts in another order")
		fs.IntVar(&f.local, "ranks-per-node", 0, "`L` ranks (devices) on each host, 1 to 256; when not given, the slot count every host of the hostfile gives; compare: which algorithm a size likely used (default: ab.json's)")
		fs.StringVar(&f.out, "o", "", "write the kit into `DIR` (made when missing)")
		fs.IntVar(&f.repeats, "repeats", ab.MinRuns, "run each variant `N` times, 5 to 100")
		fs.StringVar(&f.minBytes, "min-bytes", "1M", "the smallest message `SIZE` (bytes, or with K, M or G)")
		fs.StringVar(&f.maxBytes, "max-bytes", "1G", "the largest message `SIZE`")
		fs.IntVar(&f.factor, "step-factor", 2, "each size `F` times the one before, 2 to 1024")
		fs.StringVar(&f.tool, "tool", "both", "the benchmarks the script runs: `nccl-tests|nccom-test|both` (the script's TOOLS changes it)")
		fs.BoolVar(&f.force, "force", false, "write into DIR even when it is not empty (the kit's files are replaced)")
		fs.StringVar(&f.predicted, "predicted", "", "compare: nccom-rings simulate --json's output in `FILE`")
		fs.BoolVar(&f.json, "json", false, `the kit: ab.json's document ({"version", "variants": [{"name", "order", "about", "hostfile", "hosts"}], "ranksPerNode", "repeats", "minBytes", "maxBytes", "stepFactor", "tools", "script"}) with "dir" and "sameOrder"; compare: {"inputs", "variants", "ranksPerNode", "predicted", "predictedAssumptions", "tools": [{"tool", "unit", "metric", "runsA", "runsB", "sizes": [{"bytes", "a", "b", "ratio", "ratioMin", "ratioMax", "verdict", "algorithm", "algorithmSource", "predicted"}]}], "measurable", "unusable": [{"file", "error"}], "rule"}`)
		return func(inv *cli.Invocation) int { return runAB(inv, &f) }
	},
}

func runAB(inv *cli.Invocation, f *abFlags) int {
	code := runABMode(inv, f)
	if f.json && code == cli.ExitUnusable && !(len(inv.Operands) > 0 && inv.Operands[0] == "compare") {
		// One document whatever the exit, as plan's (compare writes its own).
		writeJSON(inv.Stdout, struct {
			Error string `json:"error"`
		}{"unusable input or usage (named on stderr)"})
	}
	return code
}

// runABMode runs ab compare, or writes the kit.
func runABMode(inv *cli.Invocation, f *abFlags) int {
	if len(inv.Operands) > 0 && inv.Operands[0] == "compare" {
		for _, name := range []string{"locations", "hosts", "a", "b", "o", "repeats", "min-bytes", "max-bytes", "step-factor", "tool", "force"} {
			if inv.Given(name) {
				return inv.UsageError("ab compare takes no --%s", name)
			}
		}
		return runABCompare(inv, f, inv.Operands[1:])
	}
	switch {
	case len(inv.Operands) > 0:
		return inv.UsageError("no operand expected but compare, got %s", quote.String(inv.Operands[0]))
	case inv.Given("predicted"):
		return inv.UsageError("--predicted is ab compare's")
	case f.out == "":
		return inv.UsageError("-o DIR is needed")
	case (f.a != "" || f.b != "") && (f.locations != "" || f.hosts != ""):
		return inv.UsageError("-a and -b exclude --locations and --hosts")
	case (f.a == "") != (f.b == ""):
		return inv.UsageError("-a and -b go together")
	case f.a == "" && (f.locations == "" || f.hosts == ""):
		return inv.UsageError("--locations and --hosts (or -a and -b) are needed")
	case f.repeats < ab.MinRuns || f.repeats > maxRepeats:
		return inv.UsageError("--repeats %d: %d to %d (fewer than %d runs of each order give no spread to judge a difference by)", f.repeats, ab.MinRuns, maxRepeats, ab.MinRuns)
	case f.factor < 2 || f.factor > 1024:
		return inv.UsageError("--step-factor %d: 2 to 1024", f.factor)
	}
	kit := ab.Kit{Version: inv.Tool.Version, RanksPerNode: f.local, Repeats: f.repeats, StepFactor: f.factor, Script: ab.ScriptName}
	var err error
	if kit.MinBytes, err = ab.ParseSize(f.minBytes); err != nil {
		return inv.UsageError("--min-bytes: %v", err)
	}
	if kit.MaxBytes, err = ab.ParseSize(f.maxBytes); err != nil {
		return inv.UsageError("--max-bytes: %v", err)
	}
	if kit.MinBytes > kit.MaxBytes {
		return inv.UsageError("--min-bytes %d is more than --max-bytes %d", kit.MinBytes, kit.MaxBytes)
	}
	switch f.tool {
	case "both":
		kit.Tools = []string{ab.NCCLTests, ab.NccomTest}
	case ab.NCCLTests, ab.NccomTest:
		kit.Tools = []string{f.tool}
	default:
		return inv.UsageError("--tool %s: nccl-tests, nccom-test or both", quote.String(f.tool))
	}
	var hosts [2][]plan.Host
	var order [2][]int
	var sources [2]string
	if f.a != "" {
		sources = [2]string{f.a, f.b}
		for i, path := range sources {
			if hosts[i], err = plan.ReadHostfile(path); err != nil {
				inv.Errorf("%v", err)
				return cli.ExitUnusable
			}
			order[i] = identity(len(hosts[i]))
		}
		if err := sameHosts(f.a, hosts[0], f.b, hosts[1]); err != nil {
			inv.Errorf("%v", err)
			return cli.ExitUnusable
		}
		kit.Variants = []ab.Variant{
			{Name: "A", About: "the order of " + quote.String(f.a)},
			{Name: "B", About: "the order of " + quote.String(f.b)},
		}
	} else {
		hs, name, _, err := readHosts(&planFlags{hosts: f.hosts})
		var locs []string
		if err == nil {
			locs, err = abLocate(hs, name, f.locations)
		}
		if err == nil {
			order[1], err = plan.NetworkOrder(locs)
		}
		if err != nil {
			inv.Errorf("%v", err)
			return cli.ExitUnusable
		}
		hosts = [2][]plan.Host{hs, hs}
		order[0] = identity(len(hs))
		sources = [2]string{name, name}
		kit.Variants = []ab.Variant{
			{Name: "A", Order: "rank", About: "rank order: the hosts as " + quote.String(name) + " lists them"},
			{Name: "B", Order: "network", About: "network order (D25): the same hosts grouped by " + quote.String(f.locations) + "'s locations"},
		}
	}
	if kit.RanksPerNode == 0 {
		n, ok := plan.CommonSlots(hosts[0])
		if m, okB := plan.CommonSlots(hosts[1]); !ok || !okB || m != n {
			return inv.UsageError("--ranks-per-node is needed: the hostfile does not give one slot count for every host")
		}
		kit.RanksPerNode = n
	}
	if kit.RanksPerNode < 1 || kit.RanksPerNode > layout.MaxLocalRanks {
		return inv.UsageError("--ranks-per-node %d: 1 to %d", kit.RanksPerNode, layout.MaxLocalRanks)
	}
	for i := range kit.Variants {
		v := &kit.Variants[i]
		v.Hostfile = v.Name + ".hosts"
		for _, m := range order[i] {
			if err := ab.CheckHostName(hosts[i][m].Name); err != nil {
				inv.Errorf("%s: %v", quote.String(sources[i]), err)
				return cli.ExitUnusable
			}
			v.Hosts = append(v.Hosts, hosts[i][m].Name)
		}
	}
	if err := writeKit(f.out, f.force, kit, hosts, order); err != nil {
		inv.Errorf("%v", err)
		return cli.ExitUnusable
	}
	same := slices.Equal(kit.Variants[0].Hosts, kit.Variants[1].Hosts)
	if f.json {
		writeJSON(inv.Stdout, struct {
			Dir string `json:"dir"`
			ab.Kit
			SameOrder bool `json:"sameOrder"`
		}{f.out, kit, same})
	} else {
		w := inv.Stdout
		fmt.Fprintf(w, "nccom-rings ab: wrote %s: %s, A.hosts, B.hosts, %s\n", quote.String(f.out), ab.ScriptName, ab.ManifestName)
		for _, v := range kit.Variants {
			fmt.Fprintf(w, "  %s: %s: %s\n", v.Name, v.About, headNames(v.Hosts, 8))
		}
		fmt.Fprintf(w, "  %s x %s; sizes %s to %s, x%d; %d repeats of %s, interleaved A B A B ...\n",
			count(len(kit.Variants[0].Hosts), "host"), count(kit.RanksPerNode, "rank"), ab.Bytes(kit.MinBytes), ab.Bytes(kit.MaxBytes), kit.StepFactor, kit.Repeats, strings.Join(kit.Tools, " and "))
		fmt.Fprintf(w, "  on the allocation: sh %s; then: nccom-rings ab compare %s\n", quote.String(filepath.Join(f.out, ab.ScriptName)), quote.String(f.out))
	}
	if same {
		inv.Errorf("A and B are one order: %s is in network order already, so the runs measure only run-to-run noise", quote.String(sources[0]))
		return cli.ExitFinding
	}
	return cli.ExitOK
}

func identity(n int) []int {
	o := make([]int, n)
	for i := range o {
		o[i] = i
	}
	return o
}

// headNames is the first n names, then "... (k more)".
func headNames(names []string, n int) string {
	s := strings.Join(names[:min(n, len(names))], " ")
	if len(names) > n {
		s += fmt.Sprintf(" ... (%d more)", len(names)-n)
	}
	return s
}

// sameHosts refuses two hostfiles that do not hold the same hosts: the
// kit measures order, not another set of machines.
func sameHosts(pathA string, a []plan.Host, pathB string, b []plan.Host) error {
	inA := map[string]bool{}
	for _, h := range a {
		inA[location.Key(h.Name)] = true
	}
	inB := map[string]bool{}
	for _, h := range b {
		inB[location.Key(h.Name)] = true
		if !inA[location.Key(h.Name)] {
			return fmt.Errorf("host %s of %s is not in %s: -a and -b must hold the same hosts", quote.String(h.Name), quote.String(pathB), quote.String(pathA))
		}
	}
	for _, h := range a {
		if !inB[location.Key(h.Name)] {
			return fmt.Errorf("host %s of %s is not in %s: -a and -b must hold the same hosts", quote.String(h.Name), quote.String(pathA), quote.String(pathB))
		}
	}
	return nil
}

// abLocate is each host's location in the file at locationsPath, by
// its name; it refuses hosts of which some have none: B would put them
// last, and the kit would measure a half-grouped order.
func abLocate(hosts []plan.Host, hostsName, locationsPath string) ([]string, error) {
	entries, err := readLocations(locationsPath)
	if err != nil {
		return nil, err
	}
	locs, _ := plan.LocateJoined(hosts, entries, nil)
	missing := 0
	first := ""
	for m, l := range locs {
		if l == "" {
			if missing++; first == "" {
				first = hosts[m].Name
			}
		}
	}
	if missing > 0 {
		return nil, fmt.Errorf("%d of %d hosts of %s have no location in %s (first %s): write the locations by host name with nccom-rings plan --emit-locations (which joins them through --instances) and give that file", missing, len(hosts), quote.String(hostsName), quote.String(locationsPath), quote.String(first))
	}
	return locs, nil
}

// writeKit makes dir (or takes an empty one, or any with force) and writes
// the kit's files into it through safefile.
func writeKit(dir string, force bool, kit ab.Kit, hosts [2][]plan.Host, order [2][]int) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	case err != nil:
		return err
	case len(entries) > 0 && !force:
		return fmt.Errorf("-o %s is not empty: give an empty or new directory, or --force to replace the kit's files in it", quote.String(dir))
	}
	for i, v := range kit.Variants {
		text := plan.WriteHostfile([]string{
			fmt.Sprintf("variant %s of nccom-rings ab: %s", v.Name, v.About),
		}, hosts[i], order[i])
		if err := safefile.WriteFile(filepath.Join(dir, v.Hostfile), text, 0o644); err != nil {
			return err
		}
	}
	if err := safefile.WriteFile(filepath.Join(dir, ab.ScriptName), []byte(ab.Script(kit)), 0o755); err != nil {
		return err
	}
	manifest, err := json.MarshalIndent(kit, "", "  ")
	if err != nil {
		return err
	}
	return safefile.WriteFile(filepath.Join(dir, ab.ManifestName), append(manifest, '\n'), 0o644)
}

// abCompareReport is ab compare's --json document.
type abCompareReport struct {
	Inputs       []string     `json:"inputs"`
	Variants     []ab.Variant `json:"variants"` // ab.json's, when read
	RanksPerNode int          `json:"ranksPerNode"`
	Predicted    string       `json:"predicted,omitempty"`
	// PredictedAssumptions are simulate's: every parameter it guessed.
	PredictedAssumptions []string        `json:"predictedAssumptions,omitempty"`
	Tools                []ab.ToolResult `json:"tools"`
	Measurable           int             `json:"measurable"` // sizes judged B faster or B slower
	Unusable             []unusableFile  `json:"unusable"`
	Rule                 string          `json:"rule"`
}

type unusableFile struct {
	File  string `json:"file"`
	Error string `json:"error"`
}

// compareRule is the verdict's rule, as the output states it.
var compareRule = fmt.Sprintf("a difference is measurable when A's and B's min-max ranges of bus bandwidth do not overlap, with at least %d runs of each", ab.MinRuns)

func runABCompare(inv *cli.Invocation, f *abFlags, operands []string) int {
	if len(operands) == 0 {
		return inv.UsageError("ab compare wants DIR or run files")
	}
	rep := abCompareReport{Inputs: operands, RanksPerNode: f.local, Variants: []ab.Variant{}, Unusable: []unusableFile{}, Tools: []ab.ToolResult{}, Rule: compareRule}
	bad := func(file string, err error) {
		inv.Errorf("%s: %v", quote.String(file), err)
		rep.Unusable = append(rep.Unusable, unusableFile{file, err.Error()})
	}
	var paths []string
	follow := safefile.FollowLinks // files the operator named
	if st, err := os.Stat(operands[0]); len(operands) == 1 && err == nil && st.IsDir() {
		dir := operands[0]
		manifest := filepath.Join(dir, ab.ManifestName)
		data, err := safefile.Read(manifest, safefile.NoLinks, 1<<20)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			bad(manifest, err)
		}
		if err == nil {
			var kit ab.Kit
			if err := json.Unmarshal(data, &kit); err != nil {
				bad(manifest, err)
			} else {
				rep.Variants = kit.Variants
				if rep.RanksPerNode == 0 {
					rep.RanksPerNode = kit.RanksPerNode
				}
			}
		}
		if st, err := os.Stat(filepath.Join(dir, ab.RunsDir)); err == nil && st.IsDir() {
			dir = filepath.Join(dir, ab.RunsDir)
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			inv.Errorf("%v", err)
			return cli.ExitUnusable
		}
		for _, e := range entries {
			if _, _, _, ok := ab.ParseRunFile(e.Name()); ok {
				paths = append(paths, filepath.Join(dir, e.Name()))
			}
		}
		follow = safefile.NoLinks // files in a directory another user may write
	} else {
		paths = operands
	}
	var runs []ab.Run
	for _, p := range paths {
		variant, repeat, _, ok := ab.ParseRunFile(filepath.Base(p))
		if !ok {
			bad(p, fmt.Errorf("not named as the kit names a run (VARIANT-REPEAT-TOOL.out, as A-01-nccl-tests.out)"))
			continue
		}
		data, err := safefile.Read(p, follow, maxRunOutput)
		if err != nil {
			bad(p, err)
			continue
		}
		out, err := ab.Parse(data)
		if err != nil {
			bad(p, err)
			continue
		}
		runs = append(runs, ab.Run{File: p, Variant: variant, Repeat: repeat, Output: out})
	}
	var pred *ab.Predictions
	if f.predicted != "" {
		data, err := safefile.Read(f.predicted, safefile.FollowLinks, ab.MaxPredictedSize)
		if err == nil {
			pred, err = ab.ParsePredictions(data)
		}
		if err != nil {
			bad(f.predicted, fmt.Errorf("--predicted: %v", err))
		} else {
			rep.Predicted, rep.PredictedAssumptions = f.predicted, pred.Assumptions
		}
	}
	if len(runs) == 0 {
		inv.Errorf("no usable run output in %s", quote.List(operands))
		if f.json {
			writeJSON(inv.Stdout, rep)
		}
		return cli.ExitUnusable
	}
	rep.Tools, rep.Measurable = ab.Compare(runs, rep.RanksPerNode, pred)
	if pred != nil && !anyPredicted(rep.Tools) {
		inv.Errorf("note: %s predicts no all-reduce of a measured size for both orders (rank and network): simulate the same sizes", quote.String(f.predicted))
	}
	if f.json {
		writeJSON(inv.Stdout, rep)
	} else {
		w := inv.Stdout
		fmt.Fprintf(w, "nccom-rings ab compare: %s\n", quote.List(operands))
		for _, v := range rep.Variants {
			fmt.Fprintf(w, "  %s: %s (%s)\n", v.Name, v.About, v.Hostfile)
		}
		fmt.Fprintln(w)
		ab.WriteText(w, rep.Tools)
		if len(rep.PredictedAssumptions) > 0 {
			fmt.Fprintf(w, "simulate's assumptions (%s):\n", quote.String(rep.Predicted))
			for _, a := range rep.PredictedAssumptions {
				fmt.Fprintf(w, "  - %s\n", quote.Visible(a))
			}
		}
		sizes := 0
		for _, t := range rep.Tools {
			sizes += len(t.Sizes)
		}
		fmt.Fprintf(w, "\n%d of %d sizes show a measurable difference (%s)\n", rep.Measurable, sizes, compareRule)
	}
	switch {
	case len(rep.Unusable) > 0:
		return cli.ExitUnusable
	case rep.Measurable > 0:
		return cli.ExitFinding
	}
	return cli.ExitOK
}

// anyPredicted says whether some size of tools has a prediction.
func anyPredicted(tools []ab.ToolResult) bool {
	for _, t := range tools {
		for _, s := range t.Sizes {
			if len(s.Predicted) > 0 {
				return true
			}
		}
	}
	return false
}
