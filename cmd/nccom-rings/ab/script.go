package ab

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Variant is one host order the kit measures.
type Variant struct {
	Name     string   `json:"name"`     // "A" or "B"
	Order    string   `json:"order"`    // "rank" or "network"; "" for a hostfile given (--a, --b)
	About    string   `json:"about"`    // what the order is, in words, for the script's comments
	Hostfile string   `json:"hostfile"` // its hostfile in the kit's directory: "A.hosts", "B.hosts"
	Hosts    []string `json:"hosts"`    // the hosts in its order
}

// Kit is what nccom-rings ab writes, and its ab.json: the two variants
// and how each run runs.
type Kit struct {
	Version      string    `json:"version"` // nccom-rings' --version
	Variants     []Variant `json:"variants"`
	RanksPerNode int       `json:"ranksPerNode"`
	Repeats      int       `json:"repeats"`
	MinBytes     int64     `json:"minBytes"`
	MaxBytes     int64     `json:"maxBytes"`
	StepFactor   int       `json:"stepFactor"`
	Tools        []string  `json:"tools"` // NCCLTests, NccomTest, in the order each repeat runs them
	Script       string    `json:"script"`
}

// The names of the files a kit's directory holds.
const (
	ScriptName   = "run-ab.sh"
	ManifestName = "ab.json"
	RunsDir      = "runs"
)

// RunFile is the name of one run's output in RunsDir: variant, repeat
// index (from 1, two digits at least) and tool, as the script writes it.
func RunFile(variant string, repeat int, tool string) string {
	return fmt.Sprintf("%s-%02d-%s.out", variant, repeat, tool)
}

// runFileRE reads RunFile's names back.
var runFileRE = regexp.MustCompile(`^([AB])-([0-9]{2,})-(nccl-tests|nccom-test)\.out$`)

// ParseRunFile is the variant, repeat and tool a run file's name gives;
// false when it is not such a name.
func ParseRunFile(name string) (variant string, repeat int, tool string, ok bool) {
	m := runFileRE.FindStringSubmatch(name)
	if m == nil {
		return "", 0, "", false
	}
	repeat, err := strconv.Atoi(m[2])
	return m[1], repeat, m[3], err == nil
}

// hostNameRE is a host name the script may hold unquoted: letters,
// digits, '.', '_' and '-', not beginning with '-'. Every host of a kit
// must be one (CheckHostName): the names come from a hostfile, and one
// like "$(reboot)" must never reach a shell.
var hostNameRE = regexp.MustCompile(`^[A-Za-z0-9_.][A-Za-z0-9_.-]*$`)

// CheckHostName refuses a host name the run script cannot hold as is.
func CheckHostName(name string) error {
	if !hostNameRE.MatchString(name) {
		return fmt.Errorf("host name %q holds a character other than letters, digits, '.', '_' and '-' (or begins with '-'): the run script will not put it on a command line", name)
	}
	return nil
}

// Script is the POSIX sh script that runs the kit: each repeat, each tool
// runs A then B, so the runs interleave A B A B ...; each run's output
// (stdout and stderr) goes to runs/RunFile, and runs/runs.log gets a line
// per run with its exit status. Its comments say what it does and which
// environment variables change it.
func Script(k Kit) string {
	var b strings.Builder
	a, bv := k.Variants[0], k.Variants[1]
	nodes := len(a.Hosts)
	ranks := nodes * k.RanksPerNode
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	p("#!/bin/sh")
	p("# An A/B kit of nccom-rings ab (%s):", k.Version)
	p("# what node order is worth on this allocation, measured.")
	p("# The same all-reduce benchmark on the same %d hosts", nodes)
	p("# (%d ranks each, %d ranks) in two host orders:", k.RanksPerNode, ranks)
	p("#   A: %s (%s)", a.About, a.Hostfile)
	p("#   B: %s (%s)", bv.About, bv.Hostfile)
	p("# %d times each, interleaved: each repeat runs every tool on A, then on B", k.Repeats)
	p("# (A B A B ...), so what drifts while it runs (other jobs, the fabric's")
	p("# load) falls on both orders alike. Sizes %d to %d bytes, times %d.", k.MinBytes, k.MaxBytes, k.StepFactor)
	p("#")
	p("# Each run's output goes to runs/VARIANT-REPEAT-TOOL.out and a line with its")
	p("# exit status to runs/runs.log; a run that fails is logged and the others go")
	p("# on. Afterwards: nccom-rings ab compare DIR (this directory), and share the")
	p("# directory (tar czf ab.tgz DIR) with what compare printed.")
	p("#")
	p("# Environment:")
	p("#   TOOLS             the benchmarks to run (default: %q)", strings.Join(k.Tools, " "))
	p("#   MPIRUN            Open MPI's mpirun (default: mpirun)")
	p("#   MPIRUN_FLAGS      more mpirun flags, e.g. \"-x FI_PROVIDER=efa -x NCCL_DEBUG=WARN\"")
	p("#                     (default: --bind-to none)")
	p("#   ALL_REDUCE_PERF   nccl-tests' all_reduce_perf (default: all_reduce_perf)")
	p("#   NCCOM_TEST        Neuron's nccom-test (default: nccom-test)")
	p("#   NCCOM_TEST_FLAGS  more nccom-test flags; newer releases take")
	p("#                     --show-algorithm, whose column compare reports")
	p("#   NCCOM_PORT        the port of NEURON_RT_ROOT_COMM_ID (default: 44444)")
	p("set -u")
	p("")
	p("here=$(cd \"$(dirname \"$0\")\" && pwd)")
	p("TOOLS=${TOOLS:-%s}", strings.Join(k.Tools, " "))
	p("MPIRUN=${MPIRUN:-mpirun}")
	p("MPIRUN_FLAGS=${MPIRUN_FLAGS:---bind-to none}")
	p("ALL_REDUCE_PERF=${ALL_REDUCE_PERF:-all_reduce_perf}")
	p("NCCOM_TEST=${NCCOM_TEST:-nccom-test}")
	p("NCCOM_TEST_FLAGS=${NCCOM_TEST_FLAGS:-}")
	p("NCCOM_PORT=${NCCOM_PORT:-44444}")
	p("REPEATS=%d", k.Repeats)
	p("A_HOSTS=%q", strings.Join(a.Hosts, " "))
	p("B_HOSTS=%q", strings.Join(bv.Hosts, " "))
	p("runs=$here/%s", RunsDir)
	p("")
	p("# Refuse to mix two campaigns' outputs, and to start without a tool.")
	p("mkdir -p \"$runs\" || exit 2")
	p("for f in \"$runs\"/*.out; do")
	p("  if [ -e \"$f\" ]; then")
	p("    echo \"$0: $runs holds the outputs of an earlier run: move them away first\" >&2")
	p("    exit 2")
	p("  fi")
	p("done")
	p("need() {")
	p("  command -v \"$1\" >/dev/null 2>&1 && return 0")
	p("  echo \"$0: $1 not found: set $2, or TOOLS to the tools this cluster has\" >&2")
	p("  exit 2")
	p("}")
	p("for t in $TOOLS; do")
	p("  case $t in")
	p("  %s) need \"$MPIRUN\" MPIRUN; need \"$ALL_REDUCE_PERF\" ALL_REDUCE_PERF ;;", NCCLTests)
	p("  %s) need \"$NCCOM_TEST\" NCCOM_TEST ;;", NccomTest)
	p("  *) echo \"$0: TOOLS: $t is not %s or %s\" >&2; exit 2 ;;", NCCLTests, NccomTest)
	p("  esac")
	p("done")
	p("")
	p("# nccl-tests: one process a device (-g 1), %d on each host in the hostfile's", k.RanksPerNode)
	p("# order (Open MPI's ppr mapping), so rank order is the hostfile's order.")
	p("nccl_tests() { # VARIANT")
	p("  # shellcheck disable=SC2086 # MPIRUN_FLAGS is words")
	p("  \"$MPIRUN\" -np %d --hostfile \"$here/$1.hosts\" --map-by ppr:%d:node $MPIRUN_FLAGS \\", ranks, k.RanksPerNode)
	p("    \"$ALL_REDUCE_PERF\" -b %d -e %d -f %d -g 1", k.MinBytes, k.MaxBytes, k.StepFactor)
	p("}")
	p("")
	p("# nccom-test: %d ranks on %d hosts (-r, -N), fp32 all-reduce, the hosts in the", ranks, nodes)
	p("# variant's order; NEURON_RT_ROOT_COMM_ID is the first host's address.")
	p("root_comm_id() { # HOST")
	p("  addr=$(getent hosts \"$1\" 2>/dev/null | awk '{ print $1; exit }')")
	p("  echo \"${addr:-$1}:$NCCOM_PORT\"")
	p("}")
	p("nccom_test() { # VARIANT")
	p("  if [ \"$1\" = A ]; then hosts=$A_HOSTS; else hosts=$B_HOSTS; fi")
	p("  # shellcheck disable=SC2086 # the host list and NCCOM_TEST_FLAGS are words")
	p("  NEURON_RT_ROOT_COMM_ID=$(root_comm_id ${hosts%%%% *}) \\")
	p("    \"$NCCOM_TEST\" -r %d -N %d -b %d -e %d -f %d -d fp32 $NCCOM_TEST_FLAGS allr --hosts $hosts", ranks, nodes, k.MinBytes, k.MaxBytes, k.StepFactor)
	p("}")
	p("")
	p("failed=0")
	p("run() { # TOOL VARIANT REPEAT")
	p("  out=$runs/$2-$3-$1.out")
	p("  echo \"$(date -u +%%Y-%%m-%%dT%%H:%%M:%%SZ) $2 $3 $1: running\"")
	p("  case $1 in")
	p("  %s) nccl_tests \"$2\" ;;", NCCLTests)
	p("  %s) nccom_test \"$2\" ;;", NccomTest)
	p("  esac >\"$out\" 2>&1")
	p("  status=$?")
	p("  echo \"$(date -u +%%Y-%%m-%%dT%%H:%%M:%%SZ) $2 $3 $1 exit $status $out\" >>\"$runs/runs.log\"")
	p("  if [ \"$status\" -ne 0 ]; then")
	p("    failed=$((failed + 1))")
	p("    echo \"$0: $2 $3 $1 exited $status: see $out\" >&2")
	p("  fi")
	p("}")
	p("")
	p("r=1")
	p("while [ \"$r\" -le \"$REPEATS\" ]; do")
	p("  rr=$(printf %%02d \"$r\")")
	p("  for t in $TOOLS; do")
	p("    run \"$t\" A \"$rr\"")
	p("    run \"$t\" B \"$rr\"")
	p("  done")
	p("  r=$((r + 1))")
	p("done")
	p("echo \"done, $failed runs failed; now: nccom-rings ab compare $here\"")
	p("[ \"$failed\" -eq 0 ]")
	return b.String()
}
