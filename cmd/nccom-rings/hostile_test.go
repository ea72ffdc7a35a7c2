package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/verify"
	"github.com/nccomring/libnccomring/internal/asuser"
	"github.com/nccomring/libnccomring/internal/cli"
	"github.com/nccomring/libnccomring/internal/cputime"
	"github.com/nccomring/libnccomring/internal/fuzzseed"
	"github.com/nccomring/libnccomring/internal/hiddentext"
	"github.com/nccomring/libnccomring/ringdump"
)

// Crafted dumps (docs/security.md): the tool's work follows the files
// present, it reads regular files of dump size only, it goes on past a bad
// file, and what a file says is printed as text.

// A 115-byte dump claiming 2^31-1 ranks once ended in "fatal error: out of
// memory": now it is a finding naming the missing ranks, without
// allocating for them.
func TestVerifySizesItsWorkByTheFilesPresent(t *testing.T) {
	dir := hugeJobDump(t)
	cpu := cputime.Process()
	code, out, _ := runTool("verify", dir)
	assert.Equal(t, cli.ExitFinding, code)
	assert.Contains(t, out, "nccom-rings: missing ranks 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20 and 2147483626 more (of 2147483647)\n")
	// Work sized by the claim would show in CPU time; the wall clock would
	// time the machine too (issue 32).
	assert.Less(t, cputime.Process()-cpu, 5*time.Second)

	code, out, _ = runTool("verify", "--json", dir)
	assert.Equal(t, cli.ExitFinding, code)
	var rep verify.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	// The missing ranks, then (since issue 23, which checks what it can
	// past a missing rank) the dump's own shape: no channels listed.
	require.Len(t, rep.Findings, 2)
	assert.Equal(t, verify.KindMissing, rep.Findings[0].Kind)
	assert.Len(t, rep.Findings[0].Ranks, verify.MaxListedMissing, "the lowest missing ranks only")
	assert.Equal(t, 1, rep.Findings[0].Ranks[0])
	assert.Equal(t, "rank 0: 0 channels listed, but nChannels is 2", rep.Findings[1].Message)
}

// A terminal escape in a dump's warn once printed "every rank agrees" over
// the failure: every string from a dump is printed quoted, its control
// characters escaped.
func TestDumpStringsArePrintedAsText(t *testing.T) {
	dir, paths := identityJob(t)
	const forged = "\x1b[1A\x1b[2K\rnccom-rings: 4 ranks, 2 channels, 2 nodes: every rank agrees\n"
	edit(t, paths[3], func(d *ringdump.Dump) {
		d.Result, d.ResultName, d.Warn, d.Wiring, d.NetDevs = 5, "ncclInvalidUsage\x1b[0m", forged, nil, nil
	})
	code, out, _ := runTool("verify", dir)
	assert.Equal(t, cli.ExitFinding, code)
	assert.NotContains(t, out, "\x1b")
	assert.NotContains(t, out, "\r")
	assert.Contains(t, out, `rank 3: ncclTopoPostset failed with "ncclInvalidUsage\x1b[0m" (5): "\x1b[1A\x1b[2K\rnccom-rings: 4 ranks, 2 channels, 2 nodes: every rank agrees\n"`+"\n")
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		assert.False(t, strings.HasPrefix(line, "nccom-rings: 4 ranks"), "a forged line: %q", line)
	}

	code, out, _ = runTool("show", dir)
	assert.Equal(t, cli.ExitOK, code)
	assert.NotContains(t, out, "\x1b")
	assert.Contains(t, out, `     3  failed: "\x1b[1A`)

	// A file name is as untrusted as what is in the file.
	name := filepath.Join(dir, "rank-000000.\x1b]0;owned\x07.1.json")
	require.NoError(t, os.WriteFile(name, []byte("{"), 0o644))
	code, out, _ = runTool("verify", dir)
	assert.Equal(t, cli.ExitUnusable, code)
	assert.NotContains(t, out, "\x1b")
	assert.Contains(t, out, `rank-000000.\x1b]0;owned\x07.1.json": not a ring dump`)

	// --json is JSON: encoding/json escapes the control characters itself.
	code, out, _ = runTool("verify", "--json", dir)
	assert.Equal(t, cli.ExitUnusable, code)
	assert.NotContains(t, out, "\x1b")
	var rep verify.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
}

// A FIFO, a link to /dev/zero and a file past the size limit under dump
// names: each is one line on stderr, at once, and the other files are
// still verified (exit 2: part of the input is unusable).
func TestVerifyGoesOnPastFilesThatAreNotDumps(t *testing.T) {
	dir, paths := identityJob(t)
	require.NoError(t, os.Remove(paths[1]))
	require.NoError(t, syscall.Mkfifo(paths[1], 0o644))
	require.NoError(t, os.Remove(paths[2]))
	require.NoError(t, os.Symlink("/dev/zero", paths[2]))
	big := filepath.Join(dir, ringdump.FileName(3, "big", 1))
	require.NoError(t, os.WriteFile(big, nil, 0o644))
	require.NoError(t, os.Truncate(big, ringdump.MaxFileSize+1))

	// A verify that waited on the FIFO would never return: the watchdog
	// make test runs go test under ends it (its blocked limit, every
	// goroutine's stack from SIGQUIT), or go test's -timeout does.
	code, out, errOut := runTool("verify", dir)
	// Each is a finding on stdout (issue 23), named by the rank in its
	// name: ranks 1 and 2 are not also missing; ranks 0 and 3 (its real
	// file) are verified, and agree.
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Empty(t, errOut)
	assert.Contains(t, out, `nccom-rings: rank 1: "`+paths[1]+`": is a FIFO, not a regular file`+"\n")
	assert.Contains(t, out, `nccom-rings: rank 2: "`+paths[2]+`": is a symbolic link, not a regular file`+"\n")
	assert.Contains(t, out, `nccom-rings: rank 3: "`+big+`": is 67108865 bytes, more than the 64 MiB a dump may have`+"\n")
	assert.NotContains(t, out, "missing")
	assert.Contains(t, out, ": 3 findings, 3 inputs unusable\n")

	code, out, errOut = runTool("show", dir)
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Contains(t, out, "channel 0 of 2, 2 ranks\n")
	assert.Contains(t, errOut, "is a FIFO")
}

// FuzzVerify: any two files' contents, as the dumps of one directory, are
// verified and shown without a crash, a hang, or work sized by what they
// claim.
func FuzzVerify(f *testing.F) {
	good := func(r int) []byte {
		d := &ringdump.Dump{Rank: r, NRanks: 2, ResultName: "ncclSuccess", Version: "x", Host: "h", PID: 1,
			Wiring: &ringdump.Wiring{NNodes: 1, NodesFirstRank: []int{0}, GraphChannels: 1, NChannels: 2,
				Channels: []ringdump.Channel{{Channel: 0, Prev: 1 - r, Next: 1 - r, UserRanks: []int{r, 1 - r}}, {Channel: 1, Prev: 1 - r, Next: 1 - r, UserRanks: []int{r, 1 - r}}}}}
		head, tail, _ := ringdump.Encode(d)
		return append(head, tail...)
	}
	c := fuzzseed.New(f)
	c.Add(good(0), good(1))
	c.Add(good(0), []byte(`{"format":1,"rank":1,"nRanks":2147483647,"result":0,"resultName":"ncclSuccess","nChannels":32,"graphChannels":16,"channels":[]}`))
	c.Add([]byte(`{"format":1,"rank":0,"nRanks":1000000000,"result":0,"resultName":"ncclSuccess","nNodes":1,"nodesFirstRank":[0],"graphChannels":1,"nChannels":2,"channels":[{"channel":0,"prev":0,"next":0,"userRanks":[0]}]}`), good(1))
	c.Add([]byte(`{"format":1,"rank":0,"nRanks":2,"result":4,"warn":"\u001b[2J"}`), good(1))
	c.Fuzz(func(t *testing.T, a, b []byte) {
		var files []ringdump.File
		for i, data := range [][]byte{a, b} {
			d, err := ringdump.Decode("f", data)
			if err != nil {
				continue
			}
			files = append(files, ringdump.File{Path: ringdump.FileName(i, "h", 1), Dump: d})
		}
		if len(files) == 0 {
			return
		}
		if files[len(files)-1].Dump.Rank < files[0].Dump.Rank {
			files[0], files[len(files)-1] = files[len(files)-1], files[0]
		}
		rep := verify.Check("dir", files, nil)
		if rep.OK && rep.Ranks > len(files) {
			t.Fatalf("%d ranks agree from %d files", rep.Ranks, len(files))
		}
		for _, f := range rep.Findings {
			if len(f.Ranks) > verify.MaxListedMissing {
				t.Fatalf("a finding lists %d ranks", len(f.Ranks))
			}
		}
		for c := range 3 {
			if shown, err := channelOf(files, c); err == nil {
				var sb strings.Builder
				writeTable(&sb, shown)
				writeDot(&sb, shown)
			}
		}
	})
}

// hidden is what every value of these tests carries.
const hidden = hiddentext.Chars

// Issue 34, F7: values carrying C1 controls and bidirectional overrides
// (host names, WARN texts, result names, the order's location and note,
// file names; host names and locations in the files locate, score and plan
// read) go through every command's text, --json and --dot output, stdout
// and stderr, and none of the three comes out as itself: the text quotes
// them (\xc2\x9b...), --json writes them as \u escapes.
func TestHiddenCharactersAreEscapedInEveryOutput(t *testing.T) {
	good, paths := identityJob(t)
	for r, p := range paths {
		edit(t, p, func(d *ringdump.Dump) {
			d.Host = "host" + hidden + string(rune('a'+r/2))
			d.Order = &ringdump.Order{Asked: "rank", Location: "loc" + hidden, Note: "note" + hidden}
		})
	}
	bad, paths := identityJob(t)
	edit(t, paths[3], func(d *ringdump.Dump) {
		d.Result, d.ResultName, d.Warn, d.Wiring, d.NetDevs = 5, "ncclInvalidUsage"+hidden, "warn"+hidden, nil, nil
	})
	require.NoError(t, os.WriteFile(filepath.Join(bad, "rank-000001.x"+hidden+".1.json"), []byte("{"), 0o644))

	files := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(files, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	locations := write("locations", "host"+hidden+"a leaf"+hidden+"/x\nhost"+hidden+"b leaf/y\n")
	hosts := write("hosts", "host"+hidden+"a slots=2\nhost"+hidden+"b slots=2\n")
	slurm := write("topology.conf", "SwitchName=leaf"+hidden+" Nodes=trn"+hidden+"[1-2]\n")
	ec2 := write("ec2.json", `{"Instances":[{"InstanceId":"i-1`+hidden+`","NetworkNodes":["nn-1`+hidden+`","nn-2"]}]}`)
	// Issue 36: a host plan cannot locate, and an instances file.
	clean, cleanHosts := write("locations-clean", "hosta leaf/x\n"), write("hosts-clean", "hosta slots=2\n")
	unlocated := write("hosts-unlocated", "host"+hidden+"c slots=2\n")
	instances := write("instances", "host"+hidden+"c i-1\n")

	page, junit := filepath.Join(t.TempDir(), "page.html"), filepath.Join(t.TempDir(), "junit.xml")
	// The values are there, escaped: as text (quote) or as \u escapes
	// (--json, the page).
	const text, escaped = `\xc2\x9b\xe2\x80\xae\xe2\x81\xa6`, `\u009b\u202e\u2066`
	want := map[string]string{
		"verify " + bad:                 `rank-000001.x` + text + `.1.json": not a ring dump`,
		"verify --json " + bad:          `rank-000001.x` + escaped + `.1.json`,
		"show " + bad:                   `failed: "warn` + text + `"`,
		"show --json " + bad:            `"warn": "warn` + escaped + `"`,
		"show --json " + good:           `"host": "host` + escaped + `a"`,
		"show --dot " + good:            `host` + strings.ReplaceAll(text, `\`, `\\`) + `a`, // dot's string escapes
		"score " + good:                 `(host "host` + text + `a" first)`,
		"report -o - " + good:           `<td>host` + escaped + `a</td>`,
		"report -o - " + bad:            `ncclInvalidUsage` + text,
		"plan --locations " + locations: `host name "host` + text + `a"`,
		"locate --all ec2:" + ec2:       `host name "i-1` + text + `"`,
		"locate --all slurm:" + slurm:   `"leaf` + text + `"`,
		"plan --locations " + clean + " --hosts " + unlocated:                                `host name "host` + text + `c" has "\xc2" at byte 5`,
		"plan --locations " + clean + " --hosts " + cleanHosts + " --instances " + instances: `host name "host` + text + `c"`,
	}
	for _, args := range [][]string{
		{"verify", good}, {"verify", "--json", good}, {"verify", bad}, {"verify", "--json", bad},
		{"show", good}, {"show", "--json", good}, {"show", "--dot", good},
		{"show", bad}, {"show", "--json", bad}, {"show", "--dot", bad},
		{"score", good}, {"score", "--json", good}, {"score", "--locations", locations, good},
		{"score", "--json", "--locations", locations, good}, {"score", bad}, {"score", "--json", bad},
		{"diff", good, bad}, {"diff", "--json", good, bad},
		{"report", "-o", page, good}, {"report", "-o", page, bad},
		{"report", "-o", "-", good}, {"report", "--redact", "-o", "-", good}, {"report", "-o", "-", bad},
		{"verify", "--junit", junit, bad},
		{"locate", "--all", "slurm:" + slurm}, {"locate", "--all", "--json", "slurm:" + slurm},
		{"locate", "--host", "trn" + hidden + "1", "slurm:" + slurm}, {"locate", "--json", "--host", "trn" + hidden + "1", "slurm:" + slurm},
		{"locate", "--all", "ec2:" + ec2}, {"locate", "--all", "--json", "ec2:" + ec2},
		{"plan", "--locations", locations, "--hosts", hosts}, {"plan", "--json", "--locations", locations, "--hosts", hosts},
		{"plan", "--locations", clean, "--hosts", unlocated}, {"plan", "--locations", clean, "--hosts", cleanHosts, "--instances", instances},
	} {
		code, out, errOut := runTool(args...)
		name := strings.Join(args, " ")
		outputs := map[string]string{"stdout": out, "stderr": errOut}
		if args[1] == "--junit" {
			b, err := os.ReadFile(junit)
			require.NoError(t, err)
			outputs["--junit"] = string(b)
		}
		for prefix, w := range want {
			if strings.HasPrefix(name, prefix) {
				assert.True(t, strings.Contains(out+errOut, w), "%s: want %q in\n%.1500s%.500s", name, w, out, errOut)
				delete(want, prefix)
			}
		}
		for what, s := range outputs {
			if r, found := hiddentext.Raw(s); found {
				t.Errorf("%s: %s holds %U as itself (exit %d):\n%.1500s", name, what, r, code, s)
			}
		}
	}
	assert.Empty(t, want, "outputs not run")
}

// F8 of issue 34: the files the tool writes where the operator says (-o,
// --junit, --emit-hostfile, --dump), in a directory another user can
// write into. The job's user (asuser.Victim) runs the tool; the attacker
// (asuser.Attacker) has planted, under the output's name, a link to a
// file of the victim's (before: written through) or a FIFO (before: the
// tool waited to open it for ever).
func TestOutputFilesFollowNoLinkAndWaitOnNoFIFO(t *testing.T) {
	base, self := asuser.Prepare(t)
	in := filepath.Join(base, "in")
	require.NoError(t, os.Mkdir(in, 0o755))
	for _, f := range []string{d25Hosts, d25Locations} {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(in, filepath.Base(f)), b, 0o644))
	}
	hosts, locations := filepath.Join(in, "hosts"), filepath.Join(in, "locations")
	dumps := filepath.Join(base, "dumps")
	code, _, errOut := runTool("plan", "--locations", locations, "--hosts", hosts, "--ranks-per-node", "4", "--dump", dumps)
	require.Equal(t, cli.ExitOK, code, errOut)
	rank := filepath.Join(dumps, "rank")

	// The victim's own files and a directory another user can write into
	// (a group share, not sticky).
	home, precious, shared := asuser.Share(t, base)

	outputs := []struct {
		name string
		args func(target string) []string
	}{
		{"report -o", func(target string) []string { return []string{"report", rank, "-o", target} }},
		{"verify --junit", func(target string) []string { return []string{"verify", "--junit", target, rank} }},
		{"plan --emit-hostfile", func(target string) []string {
			return []string{"plan", "--locations", locations, "--hosts", hosts, "--ranks-per-node", "4", "--emit-hostfile", target}
		}},
		{"plan --emit-locations", func(target string) []string {
			return []string{"plan", "--locations", locations, "--hosts", hosts, "--ranks-per-node", "4", "--emit-locations", target}
		}},
	}
	for i, o := range outputs {
		t.Run(o.name+" over a link", func(t *testing.T) {
			target := filepath.Join(shared, "link"+string(rune('0'+i)))
			require.NoError(t, os.Symlink(precious, target))
			asuser.Chown(t, asuser.Attacker, target)
			r := asuser.Tool(t, self, asuser.Victim, o.args(target)...)
			assert.Equal(t, cli.ExitOK, r.Code, r.Stderr)
			b, err := os.ReadFile(precious)
			require.NoError(t, err)
			assert.Equal(t, "precious\n", string(b), "the victim's file, which the planted link names, was written through it")
			fi, err := os.Lstat(target)
			require.NoError(t, err)
			require.True(t, fi.Mode().IsRegular(), "%s is %v, want the output as a regular file in the link's place", target, fi.Mode())
			assert.Equal(t, uint32(asuser.Victim), fi.Sys().(*syscall.Stat_t).Uid)
			assert.NotZero(t, fi.Size())
		})
		t.Run(o.name+" over a FIFO", func(t *testing.T) {
			target := filepath.Join(shared, "fifo"+string(rune('0'+i)))
			asuser.PlantFIFO(t, target)
			// No reader ever comes: an open for writing would wait for
			// ever (asuser.Tool's minute ends it, and fails).
			r := asuser.Tool(t, self, asuser.Victim, o.args(target)...)
			assert.Equal(t, cli.ExitUnusable, r.Code)
			assert.Contains(t, r.Stderr, target+": is a FIFO, not a regular file")
			fi, err := os.Lstat(target)
			require.NoError(t, err)
			assert.Equal(t, os.ModeNamedPipe, fi.Mode().Type(), "the FIFO was replaced")
		})
	}

	// plan --dump DIR through a link the attacker planted to the victim's
	// home: before, the dumps went into it (DIR/rank, DIR/network made
	// there); now the link on the path is refused.
	t.Run("plan --dump through a link", func(t *testing.T) {
		link := filepath.Join(shared, "dumps")
		require.NoError(t, os.Symlink(home, link))
		asuser.Chown(t, asuser.Attacker, link)
		r := asuser.Tool(t, self, asuser.Victim, "plan", "--locations", locations, "--hosts", hosts, "--ranks-per-node", "4", "--dump", link)
		assert.Equal(t, cli.ExitUnusable, r.Code)
		assert.Contains(t, r.Stderr, `"`+link+`" is a symbolic link on the dump directory's path`)
		entries, err := os.ReadDir(home)
		require.NoError(t, err)
		require.Len(t, entries, 1, "something was made in the victim's home through the link")
		assert.Equal(t, "precious", entries[0].Name())
	})
}

// TestHelperTool is the tool's process of the tests that run it as
// another user (asuser.Tool).
func TestHelperTool(t *testing.T) {
	args, ok := asuser.HelperArgs()
	if !ok {
		t.Skip("the tool's process of tests that run it as another user")
	}
	os.Exit(run(args, os.Stdout, os.Stderr))
}
