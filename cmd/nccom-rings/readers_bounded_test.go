package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 34, F1, F2 and F9: three readers of files another user can hand
// over, each run as the built tool on the attack input and on one half
// its size, in a child under ulimit -v 2000000 (KiB) and a CPU-time cap.
// The child must end by itself with the exit code the tool promises (no
// Go "fatal error"), and its CPU time on the full input must be at most
// 3x the half's: linear work gives 2x, quadratic 4x. Both limits count
// work, not the wall clock (issue 32): the CPU-time cap (RLIMIT_CPU, a
// SIGKILL when reached) only ends a run that would take minutes, and the
// ratio compares two runs of one machine. Below boundedFloor of CPU for
// both runs the ratio is noise (a process's start), and the pair passes.
//
// On the code before issue 34 each failed: F1's 60 KB and 30 KB
// topology.conf died in "fatal error: out of memory" (a million names of
// 60 KB or 30 KB made before their length was checked); F2's 2.4 MB
// one-line JSON took over 4x the 1.2 MB one's CPU (a line count from the
// file's start per instance: 3.9 s for 1.2 MB, about 16 s for 2.4 MB),
// ended by the cap when slower; F9's 60 MB and 30 MB graph files died in
// "fatal error: out of memory" (the whole document decoded as a tree).

const (
	boundedLimitKiB = 2000000
	boundedFloor    = 50 * time.Millisecond
	boundedRounds   = 3
	// boundedResidentMB is issue 36's memory bound for every reader.
	boundedResidentMB = 512
)

// buildRingsTool builds nccom-rings into dir without -race (make test-go
// runs the tests with it, and the race detector's shadow memory does not
// fit under ulimit -v).
func buildRingsTool(t *testing.T, dir string) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	tool := filepath.Join(dir, "nccom-rings")
	cmd := exec.Command(goTool, "build", "-trimpath", "-buildvcs=false", "-o", tool, ".")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	return tool
}

// boundedRun is one run of the tool in a child.
type boundedRun struct {
	code           int // -1: ended by a signal
	signal         string
	stdout, stderr string
	cpu            time.Duration // user and system
	heapMB         int           // the largest Go heap a collection saw (gctrace)
	residentMB     int           // the largest resident set (the tool's own ru_maxrss)
}

// gcLine is a line of GODEBUG=gctrace=1: "gc 7 @0.1s 2%: ..., 4->5->1 MB,
// 5 MB goal, ...": the heap when the collection began, when it ended,
// and what was live.
var gcLine = regexp.MustCompile(`^gc \d+ @.* (\d+)->(\d+)->\d+ MB, `)

// boundedRunner starts the tool for runBounded: it forks, sets the
// limits in the child and execs the tool there, then writes the child's
// own wait4 figures to descriptor 3: "CODE MAXRSS_KIB USER_S SYS_S"
// (CODE the exit code, or minus the signal). A child that Go starts is
// made with vfork and so shares this test's memory until it execs, and
// the kernel keeps that high-water mark in its ru_maxrss (600 MB of a
// -race test binary, over the tool's own); a child of fork() is charged
// only from its own copy of this small parent.
const boundedRunner = `import os, resource, sys
as_kib, cpu = int(sys.argv[1]), int(sys.argv[2])
pid = os.fork()
if pid == 0:
    resource.setrlimit(resource.RLIMIT_AS, (as_kib * 1024, as_kib * 1024))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
    os.execv(sys.argv[3], sys.argv[3:])
_, status, ru = os.wait4(pid, 0)
os.write(3, b"%d %d %f %f\n" % (os.waitstatus_to_exitcode(status), ru.ru_maxrss, ru.ru_utime, ru.ru_stime))
`

// runBounded runs tool with args under RLIMIT_AS boundedLimitKiB and
// RLIMIT_CPU cpuCap (soft and hard: the kernel's SIGKILL ends a run that
// reaches it), with GOMAXPROCS=1: on a second CPU the garbage collector's
// idle workers burn what is free, CPU time that says how busy the
// machine was, not how much work the tool did (up to 2x on F9's files);
// and with GODEBUG=gctrace=1, whose lines say how large its heap grew
// (taken out of stderr). Its CPU time and resident set are the tool
// process's own (boundedRunner).
func runBounded(t *testing.T, tool string, cpuCap time.Duration, args ...string) boundedRun {
	t.Helper()
	figures, w, err := os.Pipe()
	require.NoError(t, err)
	defer figures.Close()
	cmd := exec.Command("python3", append([]string{"-c", boundedRunner, strconv.Itoa(boundedLimitKiB), strconv.Itoa(int(cpuCap.Seconds())), tool}, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.ExtraFiles = []*os.File{w}
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1", "GODEBUG=gctrace=1")
	err = cmd.Run()
	w.Close()
	require.NoError(t, err, "python3 -c boundedRunner: %s", errOut.String())
	line, err := io.ReadAll(figures)
	require.NoError(t, err)
	var code, rssKiB int
	var user, sys float64
	_, err = fmt.Sscanf(string(line), "%d %d %f %f", &code, &rssKiB, &user, &sys)
	require.NoError(t, err, "boundedRunner's figures: %q", line)
	r := boundedRun{code: code, stdout: out.String(), stderr: errOut.String(),
		cpu: time.Duration((user + sys) * float64(time.Second)), residentMB: rssKiB / 1024}
	if code < 0 {
		r.code, r.signal = -1, syscall.Signal(-code).String()
	}
	var kept []string
	for _, line := range strings.SplitAfter(r.stderr, "\n") {
		m := gcLine.FindStringSubmatch(line)
		if m == nil {
			kept = append(kept, line)
			continue
		}
		for _, v := range m[1:] {
			n, _ := strconv.Atoi(v)
			r.heapMB = max(r.heapMB, n)
		}
	}
	r.stderr = strings.Join(kept, "")
	return r
}

// checkBounded runs the tool on the half and the full input and checks
// how each ended and what the two cost; check looks at each run's output.
// The cost is each input's least CPU time over up to boundedRounds rounds
// of the two runs, alternated, ending as soon as the full input's is
// within 3x the half's: another tenant of a shared machine only ever adds
// CPU time to a run (a half input once took 1.33 s and once 1.90 s on
// one idle machine), and a parser that is not linear is over 3x in every
// round (4x for a quadratic one).
func checkBounded(t *testing.T, tool string, cpuCap time.Duration, half, full []string, check func(t *testing.T, which string, r boundedRun)) {
	t.Helper()
	least := map[string]time.Duration{}
	for round := 0; round < boundedRounds; round++ {
		for _, c := range []struct {
			which string
			args  []string
		}{{"half", half}, {"full", full}} {
			r := runBounded(t, tool, cpuCap, c.args...)
			if old, ok := least[c.which]; !ok || r.cpu < old {
				least[c.which] = r.cpu
			}
			t.Logf("%s input, round %d: exit %d, %v CPU, a heap of %d MB and %d MB resident at most", c.which, round+1, r.code, r.cpu, r.heapMB, r.residentMB)
			if !assert.NotEqual(t, -1, r.code, "%s input: ended by signal %s after %v CPU (the cap, RLIMIT_CPU, is %v); stderr: %.300s", c.which, r.signal, r.cpu, cpuCap, r.stderr) {
				return
			}
			if i := strings.Index(r.stderr, "fatal error"); i >= 0 {
				assert.Fail(t, "the Go runtime gave up", "%s input: after %v CPU, under ulimit -v %d: %.200s", c.which, r.cpu, boundedLimitKiB, r.stderr[max(0, i-100):])
				return
			}
			// Issue 36, item 4: within 512 MB.
			assert.Less(t, r.residentMB, boundedResidentMB, "%s input: the largest resident set, in MB", c.which)
			check(t, c.which, r)
		}
		h, f := least["half"], least["full"]
		if h < boundedFloor && f < boundedFloor || f <= 3*max(h, boundedFloor) {
			return
		}
	}
	h, f := least["half"], least["full"]
	assert.LessOrEqual(t, f, 3*max(h, boundedFloor), "CPU %v on the full input, %v on the half (the least of %d rounds each): more than 3x, so not linear", f, h, boundedRounds)
}

// writeGenerated writes what gen writes to a new file of dir.
func writeGenerated(t *testing.T, path string, gen func(w *bufio.Writer)) {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	w := bufio.NewWriterSize(f, 1<<20)
	gen(w)
	require.NoError(t, w.Flush())
	require.NoError(t, f.Close())
}

// writeJSONPair writes the half and the full input, one-line JSON of
// 1.2 MB and of 2.4 MB, to dir/half<suffix> and dir/full<suffix>: head,
// then elem(0), elem(1), ... comma-separated while the file stays within
// its size, then "]}". It returns their paths and how many elements each
// holds.
func writeJSONPair(t *testing.T, dir, suffix, head string, elem func(n int) string) (paths map[string]string, count map[string]int) {
	t.Helper()
	paths, count = map[string]string{}, map[string]int{}
	for which, size := range map[string]int{"half": 1_200_000, "full": 2_400_000} {
		paths[which] = filepath.Join(dir, which+suffix)
		writeGenerated(t, paths[which], func(w *bufio.Writer) {
			w.WriteString(head)
			written := len(head) + len(`]}`)
			for n := 0; ; n++ {
				e := elem(n)
				if written+len(e)+1 > size {
					count[which] = n
					break
				}
				if n > 0 {
					w.WriteString(",")
				}
				w.WriteString(e)
				written += len(e) + 1
			}
			w.WriteString(`]}`)
		})
	}
	return paths, count
}

// locatedEach checks locate --all's output on writeJSONPair's input: exit
// 0, two "#" lines, then an element a line, first and last(n) (of n
// elements) the first and the last.
func locatedEach(count map[string]int, first string, last func(n int) string) func(t *testing.T, which string, r boundedRun) {
	return func(t *testing.T, which string, r boundedRun) {
		assert.Equal(t, 0, r.code, "%s: %s", which, r.stderr)
		lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
		n := count[which]
		require.Len(t, lines, 2+n, which)
		assert.Equal(t, first, lines[2], which)
		assert.Equal(t, last(n), lines[len(lines)-1], which)
	}
}

func TestReadersStayBoundedOnHostileInputs(t *testing.T) {
	dir := t.TempDir()
	tool := buildRingsTool(t, dir)

	// F1: Nodes= with a 60,000-byte prefix and a million-name range
	// would be 60 GB of names; sized before it is expanded, it is refused
	// (exit 2) naming the line, the byte and the sizes.
	t.Run("F1 locate slurm: 60 KB topology.conf", func(t *testing.T) {
		paths := map[string]string{}
		for which, n := range map[string]int{"half": 30_000, "full": 60_000} {
			paths[which] = filepath.Join(dir, which+".conf")
			writeGenerated(t, paths[which], func(w *bufio.Writer) {
				fmt.Fprintf(w, "SwitchName=leaf0 Nodes=%s[0-999998]\nSwitchName=top Switches=leaf0\n", strings.Repeat("n", n))
			})
		}
		checkBounded(t, tool, 10*time.Second,
			[]string{"locate", "--all", "slurm:" + paths["half"]}, []string{"locate", "--all", "slurm:" + paths["full"]},
			func(t *testing.T, which string, r boundedRun) {
				bytes := map[string]int{"half": 30_006, "full": 60_006}[which]
				want := fmt.Sprintf(`nccom-rings locate: %s:1:24: Nodes="%s"... gives names of %d bytes, more than the 255 a name may have (refused before it is expanded)`+"\n",
					paths[which], strings.Repeat("n", 40), bytes)
				assert.Equal(t, 2, r.code, "%s: %s", which, r.stderr)
				assert.Equal(t, want, r.stderr, which)
				assert.Empty(t, r.stdout, which)
			})
	})

	// F2: a one-line DescribeInstanceTopology JSON of 2.4 MB, 40,677
	// instances; every one is located (exit 0), each on line 1.
	t.Run("F2 locate ec2: 2.4 MB one-line JSON", func(t *testing.T) {
		paths, count := writeJSONPair(t, dir, ".json", `{"Instances":[`, func(n int) string {
			return fmt.Sprintf(`{"InstanceId":"i-%08x","NetworkNodes":["nn-1","nn-%d"]}`, n, n%10)
		})
		for which, size := range map[string]int{"half": 1_200_000, "full": 2_400_000} {
			fi, err := os.Stat(paths[which])
			require.NoError(t, err)
			require.InDelta(t, size, fi.Size(), 100)
		}
		checkBounded(t, tool, 10*time.Second,
			[]string{"locate", "--all", "ec2:" + paths["half"]}, []string{"locate", "--all", "ec2:" + paths["full"]},
			locatedEach(count, "i-00000000 nn-1/nn-0", func(n int) string { return fmt.Sprintf("i-%08x nn-1/nn-%d", n-1, (n-1)%10) }))
		assert.Equal(t, 40_677, count["full"])
	})

	// Issue 36: the instances files of --instances, each kind.
	t.Run("instances files", func(t *testing.T) { checkInstancesBounded(t, dir, tool) })
	t.Run("more readers", func(t *testing.T) { checkMoreReadersBounded(t, dir, tool) })

	// Issue 36: kubectl's nodes as one line of 2.4 MB (14,000 nodes with
	// EKS's labels and a label nested 60 deep each, skipped), every node
	// located (exit 0) in CPU time linear in the file.
	t.Run("issue 36 locate k8s: 2.4 MB one-line nodes JSON", func(t *testing.T) {
		paths, count := writeJSONPair(t, dir, "-nodes.json", `{"items":[`, func(n int) string {
			return fmt.Sprintf(`{"metadata":{"name":"n%d","labels":{"topology.k8s.aws/network-node-layer-1":"nn-1","topology.k8s.aws/network-node-layer-2":"nn-%d"}},"spec":{"providerID":"aws:///z/i-%017x","x":%s%s}}`,
				n, n%10, n, strings.Repeat("[", 60), strings.Repeat("]", 60))
		})
		checkBounded(t, tool, 10*time.Second,
			[]string{"locate", "--all", paths["half"]}, []string{"locate", "--all", paths["full"]},
			func(t *testing.T, which string, r boundedRun) {
				assert.Equal(t, 0, r.code, "%s: %s", which, r.stderr)
				assert.Equal(t, count[which]+1, strings.Count(r.stdout, "\n"), which) // a "#" line, then a host a line
				assert.Less(t, r.heapMB, 512, "%s: the largest heap, in MB", which)
			})
	})

	// Issue 36: one node of 30 MB of labels none of which says where it
	// sits: they are read and let go, not kept (a 64 MiB file of them
	// kept would take gigabytes).
	t.Run("issue 36 locate k8s: 30 MB of labels", func(t *testing.T) {
		path := filepath.Join(dir, "labels-nodes.json")
		writeGenerated(t, path, func(w *bufio.Writer) {
			w.WriteString(`{"items":[{"metadata":{"name":"n1","labels":{"topology.k8s.aws/network-node-layer-1":"nn-1"`)
			for i := 0; i < 1_500_000; i++ {
				fmt.Fprintf(w, `,"l%07d":"v"`, i)
			}
			w.WriteString(`}}}]}`)
		})
		r := runBounded(t, tool, 10*time.Second, "locate", "--all", "k8s:"+path)
		assert.Equal(t, 0, r.code, r.stderr)
		assert.True(t, strings.HasSuffix(r.stdout, "\nn1 nn-1\n"), r.stdout)
		assert.Less(t, r.heapMB, 100, "the largest heap, in MB: the file, 30 MB, and little more (200 MB with every label kept)")
	})

	// Issue 36: scontrol show topology's lines for 20,000 and 40,000 leaf
	// switches under 200 and 400 upper ones, each upper listing every
	// node below it: read (exit 0) in CPU time linear in the file.
	t.Run("issue 36 locate slurm: scontrol show topology", func(t *testing.T) {
		paths := map[string]string{}
		for which, leaves := range map[string]int{"half": 20_000, "full": 40_000} {
			paths[which] = filepath.Join(dir, which+"-scontrol.txt")
			writeGenerated(t, paths[which], func(w *bufio.Writer) {
				for i := range leaves {
					fmt.Fprintf(w, "SwitchName=leaf%d Level=0 LinkSpeed=1 Nodes=n%d-[0-1]\n", i, i)
				}
				for u := range leaves / 100 {
					fmt.Fprintf(w, "SwitchName=up%d Level=1 LinkSpeed=1 Nodes=n[%d-%d] Switches=leaf[%d-%d]\n", u, 100*u, 100*u+99, 100*u, 100*u+99)
				}
			})
		}
		checkBounded(t, tool, 10*time.Second,
			[]string{"locate", "--all", paths["half"]}, []string{"locate", "--all", paths["full"]},
			func(t *testing.T, which string, r boundedRun) {
				assert.Equal(t, 0, r.code, "%s: %s", which, r.stderr)
				assert.Equal(t, map[string]int{"half": 40_001, "full": 80_001}[which], strings.Count(r.stdout, "\n"), which)
				assert.Contains(t, r.stdout, "\nn0-0 up0/leaf0\n", which)
				assert.Less(t, r.heapMB, 512, "%s: the largest heap, in MB", which)
			})
	})

	// Issue 36: a topology.yaml of 0.5 and 1 MB (its limit), a tree of
	// 9,000 and 18,000 leaves under one switch, read (exit 0) in CPU
	// time linear in the file; one of 100 MB is refused from its size.
	t.Run("issue 36 locate slurm: 1 MB topology.yaml", func(t *testing.T) {
		paths := map[string]string{}
		for which, leaves := range map[string]int{"half": 9_000, "full": 18_000} {
			paths[which] = filepath.Join(dir, which+"-topology.yaml")
			writeGenerated(t, paths[which], func(w *bufio.Writer) {
				fmt.Fprintf(w, "- topology: t\n  tree:\n    switches:\n      - switch: top\n        children: leaf[0-%d]\n", leaves-1)
				for i := range leaves {
					fmt.Fprintf(w, "      - switch: leaf%d\n        nodes: n%d-[0-1]\n", i, i)
				}
			})
			fi, err := os.Stat(paths[which])
			require.NoError(t, err)
			require.LessOrEqual(t, fi.Size(), int64(1<<20))
		}
		checkBounded(t, tool, 10*time.Second,
			[]string{"locate", "--all", paths["half"]}, []string{"locate", "--all", paths["full"]},
			func(t *testing.T, which string, r boundedRun) {
				assert.Equal(t, 0, r.code, "%s: %s", which, r.stderr)
				assert.Equal(t, map[string]int{"half": 18_001, "full": 36_001}[which], strings.Count(r.stdout, "\n"), which)
				assert.Less(t, r.heapMB, 512, "%s: the largest heap, in MB", which)
			})
		huge := filepath.Join(dir, "huge-topology.yaml")
		require.NoError(t, os.WriteFile(huge, []byte("- topology: t\n"), 0o644))
		require.NoError(t, os.Truncate(huge, 100<<20)) // sparse: 100 MB read as zeros
		r := runBounded(t, tool, 10*time.Second, "locate", "--all", "slurm:"+huge)
		assert.Equal(t, 2, r.code, r.stderr)
		assert.Equal(t, fmt.Sprintf("nccom-rings locate: %s: has 104857600 bytes, more than the 64 MiB a file may have\n", huge), r.stderr)
	})

	// F9: a 60 MB graph file whose RING graph's first channel holds 8.6
	// million small elements the reader skips (<skip/>); streamed, it is
	// read in memory that does not grow with them, and planned (exit 0).
	t.Run("F9 plan --graph: 60 MB graph file", func(t *testing.T) {
		paths := map[string]string{}
		for which, size := range map[string]int{"half": 30_000_000, "full": 60_000_000} {
			paths[which] = filepath.Join(dir, which+".xml")
			writeGenerated(t, paths[which], func(w *bufio.Writer) {
				head := `<graphs version="1"><graph id="0" pattern="4" crossnic="0" nchannels="2"><channel><net dev="0"/><gpu dev="0"/><gpu dev="1"/>`
				tail := `<gpu dev="2"/><gpu dev="3"/><net dev="1"/></channel>` +
					`<channel><net dev="1"/><gpu dev="3"/><gpu dev="2"/><gpu dev="1"/><gpu dev="0"/><net dev="0"/></channel></graph></graphs>` + "\n"
				w.WriteString(head)
				w.WriteString(strings.Repeat("<skip/>", (size-len(head)-len(tail))/len("<skip/>")))
				w.WriteString(tail)
			})
		}
		locs, hosts := filepath.Join(dir, "locations"), filepath.Join(dir, "hosts")
		require.NoError(t, os.WriteFile(locs, []byte("h1 spine0/leaf0\nh2 spine0/leaf1\n"), 0o644))
		require.NoError(t, os.WriteFile(hosts, []byte("h1\nh2\n"), 0o644))
		args := func(which string) []string {
			return []string{"plan", "--locations", locs, "--hosts", hosts, "--order", "rank", "--graph", paths[which]}
		}
		checkBounded(t, tool, 60*time.Second, args("half"), args("full"),
			func(t *testing.T, which string, r boundedRun) {
				assert.Equal(t, 0, r.code, "%s: %s", which, r.stderr)
				first, _, _ := strings.Cut(r.stdout, "\n")
				assert.Equal(t, fmt.Sprintf(`nccom-rings plan: 2 hosts x 4 ranks = 8 ranks; graph: "%s"'s RING graph (4 ranks a node, 2 channels)`, paths[which]), first, which)
				// Streamed: it never held the file, let alone a tree of it.
				assert.Less(t, r.heapMB, 16, "%s: the largest heap, in MB", which)
			})
	})
}
