// Package hosts runs the C hosts of tests/c in subprocesses (never loading
// the Go library into this test process) and checks what they and the
// library print: logging (D21, P14, P15), the environment (D14) and the
// fault behaviour seen from a host. make test sets NCCOMRING_BUILD.
package hosts

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/version"
)

func buildDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("NCCOMRING_BUILD")
	if dir == "" {
		t.Skip("NCCOMRING_BUILD is not set; make test sets it to the build directory")
	}
	return dir
}

func repoFile(parts ...string) string {
	return filepath.Join(append([]string{"..", ".."}, parts...)...)
}

type run struct {
	stdout, log string
	exit        int
}

// ringstage runs build/ringstage with args and extra environment, logging
// to a file it returns the contents of.
func ringstage(t *testing.T, env []string, args ...string) run {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), "nccl.log")
	cmd := exec.Command(filepath.Join(buildDir(t), "ringstage"), args...)
	cmd.Env = append(cleanEnv(), "NCCL_DEBUG_FILE="+logPath)
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.Output()
	r := run{stdout: string(out)}
	if exit, ok := err.(*exec.ExitError); ok {
		r.exit = exit.ExitCode()
	} else {
		require.NoError(t, err)
	}
	if b, err := os.ReadFile(logPath); err == nil {
		r.log = string(b)
	}
	return r
}

// cleanEnv is this process's environment without the variables the library
// reads, so the developer's shell cannot change a test's outcome, and with
// the line style these tests read, NCCL's (D21), chosen rather than left
// to whether a libnccom is loaded (D26).
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "NCCL_") || strings.HasPrefix(kv, "NCCOM_RING_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "NCCOM_RING_LOG_STYLE=nccl")
}

var linePrefix = regexp.MustCompile(`^[^:]+:\d+:\d+ \[(-?\d+)\] NCCL (WARN|INFO) (.*)$`)

// lines returns the text of each log line of the given kind ("WARN" or
// "INFO"), checking every line has the NCCL prefix (P14).
func lines(t *testing.T, log, kind string) []string {
	t.Helper()
	var out []string
	for _, l := range strings.Split(strings.TrimRight(log, "\n"), "\n") {
		if l == "" {
			continue
		}
		m := linePrefix.FindStringSubmatch(l)
		require.NotNil(t, m, "not an NCCL log line: %q", l)
		if m[2] == kind {
			out = append(out, m[3])
		}
	}
	return out
}

// D21: with NCCL_DEBUG unset nothing is printed, not even the WARN of a
// failing call; the return code carries the error (the host exits 1). The
// successful run alone would not show it: it has nothing to WARN about.
func TestNothingIsPrintedWithoutNCCLDebug(t *testing.T) {
	r := ringstage(t, nil, "--quiet")
	assert.Zero(t, r.exit)
	assert.Empty(t, r.log, "D21: nothing is printed while NCCL_DEBUG is unset")
	assert.NotContains(t, r.stdout, "NCCL")

	r = ringstage(t, nil, "--graph", repoFile("testdata", "faults", "nchannels0_graph.xml"), "--nodes", "2")
	assert.Equal(t, 1, r.exit, "the failure reaches the host through the return code")
	assert.Empty(t, r.log, "D21: no WARN while NCCL_DEBUG is unset")
	assert.NotContains(t, r.stdout, "NCCL")
}

// D21's levels: WARN prints WARN lines only (a successful run prints
// nothing, though at INFO it prints the platform, channel-count and Channel
// lines); VERSION prints no WARN, only the line saying who serves the ring
// stage; TRACE includes INFO.
func TestDebugLevelsFilterLines(t *testing.T) {
	r := ringstage(t, []string{"NCCL_DEBUG=WARN"}, "--quiet")
	require.Zero(t, r.exit)
	assert.Empty(t, r.log, "NCCL_DEBUG=WARN: no INFO line")

	r = ringstage(t, []string{"NCCL_DEBUG=VERSION"}, "--graph", repoFile("testdata", "faults", "nchannels0_graph.xml"), "--nodes", "2")
	assert.Equal(t, 1, r.exit)
	assert.Empty(t, lines(t, r.log, "WARN"), "NCCL_DEBUG=VERSION: no WARN line")
	assert.Equal(t, []string{servedLine(t)}, lines(t, r.log, "INFO"), "NCCL_DEBUG=VERSION: the version line alone")
	assert.NotContains(t, r.stdout, "NCCL")

	r = ringstage(t, []string{"NCCL_DEBUG=TRACE"}, "--quiet")
	require.Zero(t, r.exit)
	var channelLines int
	for _, l := range lines(t, r.log, "INFO") {
		if strings.HasPrefix(l, "Channel ") {
			channelLines++
		}
	}
	assert.Equal(t, 16, channelLines, "NCCL_DEBUG=TRACE prints the INFO lines")
}

func TestInfoPrintsRankZeroChannelLines(t *testing.T) {
	r := ringstage(t, []string{"NCCL_DEBUG=INFO"}, "--full")
	require.Zero(t, r.exit)
	info := lines(t, r.log, "INFO")
	var channelLines []string
	for _, l := range info {
		if strings.HasPrefix(l, "Channel ") {
			channelLines = append(channelLines, l)
		}
	}
	// The host prints rank 0's userRanks itself in NCCL's format (whole
	// with --full): the library's lines (D17) must be the same 16 lines.
	require.Len(t, channelLines, 16)
	assert.Equal(t, hostChannelLines(r.stdout), channelLines)
	assert.True(t, strings.HasPrefix(channelLines[0], "Channel 00/16 :    0   1   2   3"), channelLines[0])
	for _, l := range strings.Split(strings.TrimSpace(r.log), "\n") {
		if strings.Contains(l, "Channel ") {
			assert.Contains(t, l, "[0] NCCL INFO Channel", "Channel lines come from rank 0 only")
		}
	}
	assert.Empty(t, lines(t, r.log, "WARN"))
}

// hostChannelLines returns the Channel lines of ringstage's stdout.
func hostChannelLines(stdout string) []string {
	var out []string
	for _, l := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(l, "Channel ") {
			out = append(out, l)
		}
	}
	return out
}

// By default ringstage cuts each Channel line after 16 ranks and says how
// many there are (a whole line of 128 ranks is 528 characters); --full
// prints them whole, and the rest of stdout is the same either way.
func TestChannelLinesAreCutUnlessFull(t *testing.T) {
	short := ringstage(t, nil)
	full := ringstage(t, nil, "--full")
	require.Zero(t, short.exit)
	require.Zero(t, full.exit)
	shortLines, fullLines := hostChannelLines(short.stdout), hostChannelLines(full.stdout)
	require.Len(t, fullLines, 16)
	require.Len(t, shortLines, 16)
	for c, l := range fullLines {
		assert.Len(t, l, len("Channel 00/16 : ")+128*4, "channel %d: 128 ranks of 4 characters", c)
		// "Channel NN/16 : " and 16 ranks of 4 characters, then the count.
		assert.Equal(t, l[:len("Channel 00/16 : ")+16*4]+" ... (128 ranks)", shortLines[c], "channel %d", c)
	}
	assert.Equal(t, "Channel 00/16 :    0   1   2   3   4   5   6   7   8   9  10  11  12  13  14  15 ... (128 ranks)", shortLines[0])
	assert.True(t, strings.HasPrefix(short.stdout, strings.Join(shortLines, "\n")+"\n"), "the Channel lines come first")
	assert.True(t, strings.HasPrefix(full.stdout, strings.Join(fullLines, "\n")+"\n"), "the Channel lines come first")
	summary := func(stdout string) (out []string) {
		for _, l := range strings.Split(stdout, "\n") {
			if !strings.HasPrefix(l, "Channel ") {
				out = append(out, l)
			}
		}
		return out
	}
	assert.Len(t, summary(short.stdout), 3, "two lines and the final newline")
	assert.Equal(t, summary(full.stdout), summary(short.stdout))

	// Up to 16 ranks a line is whole either way.
	small := ringstage(t, nil, "--graph", repoFile("testdata", "graphs", "03_nccl524_4gpu_4nic_graph.xml"), "--nodes", "1")
	require.Zero(t, small.exit)
	assert.Equal(t, "Channel 00/04 :    0   1   2   3", hostChannelLines(small.stdout)[0])

	q := ringstage(t, nil, "--quiet", "--full")
	assert.Equal(t, 2, q.exit, "--quiet and --full are exclusive")
}

// D23: every rank's Postset prints the channel count it uses, once, with its
// own rank in the prefix. The default cluster is 4 nodes x 32 ranks, every
// rank with the same 8-channel graph, so n = 8, first held by rank 0.
func TestEveryRankLogsTheChannelCountOnce(t *testing.T) {
	r := ringstage(t, []string{"NCCL_DEBUG=INFO", "NCCL_DEBUG_SUBSYS=INIT"}, "--quiet")
	require.Zero(t, r.exit)
	const want = "ncclTopoPostset: 8 channels, the smallest channel count of any fragment, first held by rank 0 (D23)"
	onceOnEveryRank(t, r.log, 128, want, func(text string) bool {
		return strings.HasPrefix(text, "ncclTopoPostset: ") && strings.Contains(text, "(D23)")
	})
	assert.Empty(t, lines(t, r.log, "WARN"))
}

// onceOnEveryRank checks that each of the nRanks ranks logs one INFO line
// whose text matches, and that each is want; every line of log must be an
// NCCL log line.
func onceOnEveryRank(t *testing.T, log string, nRanks int, want string, match func(text string) bool) {
	t.Helper()
	seen := map[string]int{}
	for _, l := range strings.Split(strings.TrimRight(log, "\n"), "\n") {
		m := linePrefix.FindStringSubmatch(l)
		require.NotNil(t, m, "not an NCCL log line: %q", l)
		if m[2] == "INFO" && match(m[3]) {
			assert.Equal(t, want, m[3])
			seen[m[1]]++
		}
	}
	require.Len(t, seen, nRanks, "one line per rank: %s", want)
	for rank := range nRanks {
		assert.Equal(t, 1, seen[strconv.Itoa(rank)], "rank %d", rank)
	}
}

func TestSubsysFilterHidesInitLines(t *testing.T) {
	r := ringstage(t, []string{"NCCL_DEBUG=INFO", "NCCL_DEBUG_SUBSYS=^INIT"}, "--quiet")
	require.Zero(t, r.exit)
	assert.Equal(t, []string{servedLine(t), defaultsLine, "ncclTopoPreset: the ring-stage layout in use was not verified against libnccom's DWARF: no libnccom.so.2 is mapped in this process"}, lines(t, r.log, "INFO"), "only the ENV lines: who serves the ring stage, the variables, and the self-check")
	r = ringstage(t, []string{"NCCL_DEBUG=INFO", "NCCL_DEBUG_SUBSYS=NET,BOGUS"}, "--quiet")
	assert.Equal(t, []string{`NCCL_DEBUG_SUBSYS: unknown subsystem "BOGUS" ignored`}, lines(t, r.log, "WARN"))
	assert.Empty(t, lines(t, r.log, "INFO"))
}

// defaultsLine is the ENV line of the library's variables when none is set.
const defaultsLine = "libnccomring environment: NCCOM_RING_PLATFORM unset (generic), NCCOM_RING_POD_ORDER unset (pods refused), " +
	"NCCOM_RING_LAYOUT unset (D3's offsets), NCCOM_RING_ABI_CHECK unset (enforce), NCCOM_RING_GOMAXPROCS unset (2), NCCOM_RING_DUMP unset (no dumps), NCCOM_RING_NODE_ORDER unset (rank), NCCOM_RING_LOCATION unset (no location)"

// Issue 20: the process's first call prints one INFO line (ENV) with the
// library's own variables, in the registry's order: NAME=VALUE for each one
// set, its default for each one unset. Not at WARN, not without ENV.
func TestInfoLineListsTheLibrarysVariables(t *testing.T) {
	dump := t.TempDir()
	r := ringstage(t, []string{"NCCL_DEBUG=INFO", "NCCL_DEBUG_SUBSYS=ENV", "NCCOM_RING_PLATFORM=trn3-switchv1",
		"NCCOM_RING_ABI_CHECK=off", "NCCOM_RING_GOMAXPROCS=3", "NCCOM_RING_DUMP=" + dump, "NCCOM_RING_LOCATION=spine0/leafA"}, "--quiet", "--nodes", "1")
	require.Zero(t, r.exit)
	want := `libnccomring environment: NCCOM_RING_PLATFORM="trn3-switchv1", NCCOM_RING_POD_ORDER unset (pods refused), ` +
		`NCCOM_RING_LAYOUT unset (D3's offsets), NCCOM_RING_ABI_CHECK="off", NCCOM_RING_GOMAXPROCS="3", NCCOM_RING_DUMP="` + dump + `"` +
		`, NCCOM_RING_NODE_ORDER unset (rank), NCCOM_RING_LOCATION="spine0/leafA"`
	assert.Equal(t, []string{servedLine(t), want}, lines(t, r.log, "INFO"), "who serves the ring stage, then the variables, once")
	assert.Empty(t, lines(t, r.log, "WARN"))

	r = ringstage(t, []string{"NCCL_DEBUG=INFO", "NCCL_DEBUG_SUBSYS=ENV", "NCCOM_RING_ABI_CHECK=off"}, "--quiet")
	require.Zero(t, r.exit)
	assert.Equal(t, []string{servedLine(t), strings.Replace(defaultsLine, "NCCOM_RING_ABI_CHECK unset (enforce)", `NCCOM_RING_ABI_CHECK="off"`, 1)},
		lines(t, r.log, "INFO"))

	for _, env := range [][]string{{"NCCL_DEBUG=INFO", "NCCL_DEBUG_SUBSYS=INIT"}, {"NCCL_DEBUG=WARN", "NCCL_DEBUG_SUBSYS=ENV"}} {
		r = ringstage(t, env, "--quiet", "--nodes", "1")
		require.Zero(t, r.exit)
		assert.NotContains(t, r.log, "libnccomring environment", "%v", env)
	}
}

func TestUnknownDebugLevelWarnsOnce(t *testing.T) {
	r := ringstage(t, []string{"NCCL_DEBUG=LOUD"}, "--quiet")
	require.Zero(t, r.exit)
	assert.Equal(t, []string{`NCCL_DEBUG="LOUD" is not one of VERSION, WARN, INFO, ABORT, TRACE; using WARN`}, lines(t, r.log, "WARN"))
}

func TestDebugFileExpandsHostAndPid(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(filepath.Join(buildDir(t), "ringstage"), "--quiet")
	cmd.Env = append(cleanEnv(), "NCCL_DEBUG=INFO", "NCCL_DEBUG_FILE="+filepath.Join(dir, "log.%h.%p.%%"))
	require.NoError(t, cmd.Run())
	host, err := os.Hostname()
	require.NoError(t, err)
	host, _, _ = strings.Cut(host, ".")
	// ringstage is the process itself (no shell): %p is its pid.
	want := filepath.Join(dir, "log."+host+"."+strconv.Itoa(cmd.Process.Pid)+".%")
	matches, err := filepath.Glob(filepath.Join(dir, "*"))
	require.NoError(t, err)
	assert.Equal(t, []string{want}, matches)
}

func TestUnopenableDebugFileFallsBackToStdout(t *testing.T) {
	cmd := exec.Command(filepath.Join(buildDir(t), "ringstage"), "--quiet")
	cmd.Env = append(cleanEnv(), "NCCL_DEBUG=WARN", "NCCL_DEBUG_FILE=/nonexistent/dir/log")
	out, err := cmd.Output()
	require.NoError(t, err)
	assert.Contains(t, string(out), `NCCL WARN NCCL_DEBUG_FILE="/nonexistent/dir/log" cannot be opened (No such file or directory); logging to stdout`)
}

func TestGraphWithNoChannelsFailsWithOneWarn(t *testing.T) {
	r := ringstage(t, []string{"NCCL_DEBUG=WARN"}, "--graph", repoFile("testdata", "faults", "nchannels0_graph.xml"), "--nodes", "2")
	assert.Equal(t, 1, r.exit)
	assert.Equal(t, []string{"ncclTopoPreset: graph->nChannels 0 is outside [1, 32]"}, lines(t, r.log, "WARN"))
}

// D28: an unknown NCCOM_RING_PLATFORM no longer fails Preset; its record
// says "unknown" (one WARN per process), and Postset refuses the job from
// the records, the same on every rank.
func TestUnknownPlatformFailsWithOneWarn(t *testing.T) {
	r := ringstage(t, []string{"NCCL_DEBUG=WARN", "NCCOM_RING_PLATFORM=trn9"}, "--quiet")
	assert.Equal(t, 1, r.exit)
	assert.Equal(t, []string{
		"ncclTopoPreset: NCCOM_RING_PLATFORM=\"trn9\" is not one of generic, trn3-switchv1: this rank's record says its platform is unknown, and every rank's ncclTopoPostset will refuse the job (D28)",
		"ncclTopoPostset: rank 0's NCCOM_RING_PLATFORM named no platform (128 of 128 valid records say so): set it to generic or trn3-switchv1 on every rank (D28)",
	}, lines(t, r.log, "WARN"))
}

func TestSwitchV1FromEnvironmentLogsKangaRing(t *testing.T) {
	r := ringstage(t, []string{"NCCL_DEBUG=INFO", "NCCOM_RING_PLATFORM=trn3-switchv1"}, "--quiet")
	require.Zero(t, r.exit)
	assert.Contains(t, lines(t, r.log, "INFO"), "built 0 kangaring paths", "P13: printed on SwitchV1 even for 0 paths")
}

// D15 through the export: with enablePod on 4 nodes, Postset is refused
// with P12's WARN unless NCCOM_RING_POD_ORDER=node; with it, every rank's
// Postset prints the fallback line once and the rings hold their invariants.
func TestPodsNeedNodeOrderAndSaySo(t *testing.T) {
	r := ringstage(t, []string{"NCCL_DEBUG=WARN"}, "--quiet", "--pod")
	assert.Equal(t, 1, r.exit)
	assert.Equal(t, []string{"ncclTopoPostset: comm->enablePod is set on 4 nodes: UltraServer pod ordering (ncclTopoGetP2pPodInterNodeGraph) is not reimplemented; set NCCOM_RING_POD_ORDER=node on every rank to stitch in node order (rank 0 did not)"},
		lines(t, r.log, "WARN"))

	r = ringstage(t, []string{"NCCL_DEBUG=INFO", "NCCL_DEBUG_SUBSYS=INIT", "NCCOM_RING_POD_ORDER=node"}, "--quiet", "--pod")
	require.Zero(t, r.exit)
	const want = "ncclTopoPostset: enablePod set on 4 nodes: stitching in node order (NCCOM_RING_POD_ORDER=node)"
	onceOnEveryRank(t, r.log, 128, want, func(text string) bool {
		return strings.Contains(text, "stitching in node order")
	})
	assert.Empty(t, lines(t, r.log, "WARN"))
}

func TestJSONAndDotOutputs(t *testing.T) {
	r := ringstage(t, nil, "--json", "--graph", repoFile("testdata", "graphs", "03_nccl524_4gpu_4nic_graph.xml"), "--nodes", "2")
	require.Zero(t, r.exit)
	assert.Contains(t, r.stdout, `"invariantsHeld": true`)
	// Rank 0 heads node 0 on both channels: it enters on NIC 3 (inter[2c]).
	assert.Contains(t, r.stdout, `{"channel": 0, "prev": 7, "next": 1, "netDev": 3, "userRanks": [0, 1, 2, 3, 4, 5, 6, 7]}`)
	// Rank 3 is the tail: it leaves on NIC 0 (inter[2c+1]).
	assert.Contains(t, r.stdout, `{"channel": 1, "prev": 2, "next": 4, "netDev": 0, "userRanks": [3, 4, 5, 6, 7, 0, 1, 2]}`)

	d := ringstage(t, nil, "--dot", "--nodes", "1")
	require.Zero(t, d.exit)
	assert.True(t, strings.HasPrefix(d.stdout, "digraph rings {"))
	assert.Equal(t, 8*32, strings.Count(d.stdout, " -> "), "8 graph channels x 32 ranks")
}

// servedLine is the line that says which library serves the ring stage.
func servedLine(t *testing.T) string {
	t.Helper()
	return "libnccomring " + version.Library + " serves the ring stage (ncclTopoPreset, ncclTopoPostset, ncclBuildRings, ncclTopoGetNetDev), loaded from " +
		filepath.Join(buildDir(t), "libnccomring.so.0")
}

// Issue 10, "say who you are": NCCL_DEBUG=VERSION prints one line naming the
// library, its version and the path it was loaded from; INFO prints it as an
// ENV line (so an operator sees the preload took effect); WARN does not.
func TestVersionLineSaysWhoServesTheRingStage(t *testing.T) {
	r := ringstage(t, []string{"NCCL_DEBUG=VERSION"}, "--quiet")
	require.Zero(t, r.exit)
	all := lines(t, r.log, "INFO")
	assert.Equal(t, []string{servedLine(t)}, all, "one line: the library, its version, the path it was loaded from")
	assert.Empty(t, lines(t, r.log, "WARN"))

	r = ringstage(t, []string{"NCCL_DEBUG=INFO"}, "--quiet")
	assert.Equal(t, 1, strings.Count(r.log, "serves the ring stage"))
	r = ringstage(t, []string{"NCCL_DEBUG=WARN"}, "--quiet")
	assert.Empty(t, r.log)

	r = ringstage(t, nil, "--version")
	assert.Equal(t, "ringstage "+version.Library+" (libnccomring "+version.Library+")\n", r.stdout)
}

// ringstageStderr runs build/ringstage with no logging variables set, as a
// user would first try it, and returns its stderr and exit status.
func ringstageStderr(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(filepath.Join(buildDir(t), "ringstage"), args...)
	cmd.Env = cleanEnv()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	code := 0
	if exit, ok := err.(*exec.ExitError); ok {
		code = exit.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return stderr.String(), code
}

// Issue 11: a missing file and a malformed one are different mistakes, and
// a failing call is reported with the library's own WARN, not with a hint
// to rerun under NCCL_DEBUG.
func TestRingstageSaysWhatIsWrong(t *testing.T) {
	out, code := ringstageStderr(t, "--graph", "/nonexistent/graph.xml")
	assert.Equal(t, 1, code)
	assert.Equal(t, "ringstage: /nonexistent/graph.xml: cannot be read: No such file or directory\n", out)

	truncated := filepath.Join(t.TempDir(), "truncated.xml")
	require.NoError(t, os.WriteFile(truncated, []byte(`<graphs version="1"><graph id="0" pattern="4"`), 0o644))
	out, code = ringstageStderr(t, "--graph", truncated)
	assert.Equal(t, 1, code)
	assert.Regexp(t, `^ringstage: .*truncated\.xml:1:\d+: not well-formed XML: `, out)

	out, code = ringstageStderr(t, "--graph", repoFile("testdata", "faults", "nchannels0_graph.xml"), "--nodes", "2", "--quiet")
	assert.Equal(t, 1, code)
	assert.Equal(t, "ringstage: ncclTopoPreset on rank 0 returned 4\n"+
		"ringstage: the library's WARN: ncclTopoPreset: graph->nChannels 0 is outside [1, 32]\n", out)
}

// Issue 22: ringstage with --order network and --locations over D25's
// example (the embedded cluster on 8 nodes alternating between two
// leaves): the rings visit the nodes grouped by leaf and cross between the
// leaves twice per ring instead of 8 times; rank 0's INFO line says so;
// every invariant holds. Without --order, rank order.
func TestRingstageOrdersNodesByLocation(t *testing.T) {
	locs := repoFile("testdata", "locations", "8-nodes-alternating-leaves.txt")
	r := ringstage(t, []string{"NCCL_DEBUG=INFO", "NCCL_DEBUG_SUBSYS=INIT"}, "--quiet", "--nodes", "8", "--order", "network", "--locations", locs)
	require.Zero(t, r.exit, r.stdout)
	assert.Contains(t, r.stdout, "ringstage: node order network: ring 0 visits nodes 0 2 4 6 1 3 5 7; crossings per ring: level 1: 0, level 2: 2\n")
	assert.Contains(t, r.stdout, "ringstage: every invariant held")
	assert.Contains(t, lines(t, r.log, "INFO"),
		"ncclTopoPostset: NCCOM_RING_NODE_ORDER=network: nodes 0:0 2:64 4:128 6:192 1:32 3:96 5:160 7:224; per ring, level 1: 0 crossings of 1 groups, level 2: 2 crossings of 2 groups")
	assert.Empty(t, lines(t, r.log, "WARN"))

	r = ringstage(t, nil, "--quiet", "--nodes", "8", "--locations", locs)
	require.Zero(t, r.exit)
	assert.Contains(t, r.stdout, "ringstage: node order rank: ring 0 visits nodes 0 1 2 3 4 5 6 7; crossings per ring: level 1: 0, level 2: 8\n")

	bad := filepath.Join(t.TempDir(), "bad.txt")
	require.NoError(t, os.WriteFile(bad, []byte("0 spine0/leafA\n9 spine0/leafB\n"), 0o644))
	out, code := ringstageStderr(t, "--nodes", "8", "--locations", bad)
	assert.Equal(t, 2, code)
	assert.Equal(t, "ringstage: "+bad+":2: expected \"NODE LOCATION\" with NODE in [0, 8)\n", out)
}

// ccomLine is a line in libnccom's form (D26): the local time to a
// ten-thousandth of a second, pid:tid, the rank, the library's file:line,
// CCOM and the level, and the text after "libnccomring: ".
var ccomLine = regexp.MustCompile(`^\d{4}-(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)-\d{2} \d{2}:\d{2}:\d{2}\.\d{4} \d+:\d+ \[(-?\d+)\] [a-z_]+\.go:\d+ CCOM (WARN|INFO) libnccomring: (.*)$`)

// D26 chosen by the variable, in a process with no libnccom: with
// NCCOM_RING_LOG_STYLE=ccom and NCCL_DEBUG unset, a failing Postset's WARN
// is printed, in libnccom's form; no line is in NCCL's.
func TestCcomStylePrintsAFailingPostsetsWarnWithoutNCCLDebug(t *testing.T) {
	r := ringstage(t, []string{"NCCOM_RING_LOG_STYLE=ccom"}, "--quiet", "--pod")
	assert.Equal(t, 1, r.exit)
	var warns []string
	for _, l := range strings.Split(strings.TrimSuffix(r.log, "\n"), "\n") {
		m := ccomLine.FindStringSubmatch(l)
		require.NotNil(t, m, "not a CCOM line: %q", l)
		assert.Equal(t, "WARN", m[3], "NCCL_DEBUG unset: WARN lines only: %q", l)
		warns = append(warns, m[4])
	}
	require.NotEmpty(t, warns)
	assert.Equal(t, "ncclTopoPostset: comm->enablePod is set on 4 nodes: UltraServer pod ordering (ncclTopoGetP2pPodInterNodeGraph) is not reimplemented; set NCCOM_RING_POD_ORDER=node on every rank to stitch in node order (rank 0 did not)", warns[0])
	assert.NotContains(t, r.log, " NCCL WARN ")
}

// Long runs say on stderr how far the per-rank calls are, at most every 2
// seconds: 512 ranks with NCCOM_RING_DUMP set (each rank's Postset writes
// its dump, each GetNetDev rewrites it) take 3 to 5 s on a 2-core
// machine. stdout is the same as without the dumps.
func TestLongRunsPrintProgressOnStderr(t *testing.T) {
	plain := ringstage(t, nil, "--nodes", "16")
	require.Zero(t, plain.exit)

	cmd := exec.Command(filepath.Join(buildDir(t), "ringstage"), "--nodes", "16")
	cmd.Env = append(cleanEnv(), "NCCOM_RING_DUMP="+t.TempDir())
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	require.NoError(t, cmd.Run())
	elapsed := time.Since(start)
	assert.Equal(t, plain.stdout, stdout.String())

	progress := regexp.MustCompile(`^ringstage: (Preset|Postset|GetNetDev) (\d+) of 512 ranks( \(writing dumps\))?$`)
	var got []string
	for _, l := range strings.Split(strings.TrimRight(stderr.String(), "\n"), "\n") {
		if l == "" {
			continue
		}
		m := progress.FindStringSubmatch(l)
		require.NotNil(t, m, "not a progress line: %q", l)
		assert.Equal(t, m[1] != "Preset", m[3] != "", "Postset and GetNetDev write the dumps: %q", l)
		got = append(got, l)
	}
	t.Logf("%v: %q", elapsed, got)
	// ringstage paces its progress by the wall clock, so these bounds are
	// on it, and they scale with the run: a run slowed by a busy machine
	// may print more lines, and must print one only once it ran long.
	assert.LessOrEqual(t, len(got), int(elapsed/(2*time.Second)), "at most one line every 2 s in %v: %q", elapsed, got)
	// The calls are all but the invariant check (a fraction of a second
	// quiet): a run this long has spent more than 2 s in them, even if a
	// busy machine slowed the check ten times.
	if elapsed > 10*time.Second {
		assert.NotEmpty(t, got, "no progress line in %v", elapsed)
	}
}
