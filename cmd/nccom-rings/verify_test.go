package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/verify"
	"github.com/nccomring/libnccomring/internal/cli"
	"github.com/nccomring/libnccomring/internal/junit"
	"github.com/nccomring/libnccomring/nodeorder"
	"github.com/nccomring/libnccomring/ringdump"
)

// Issue 23: verify blames by plurality, says what to check next, reports
// stale userRanks, and goes on past unusable files. The counts in the
// expected messages are worked out by hand from the views of one rank's
// next or prev (views): the rank's own field, the field of the rank it
// names that points back, and every checked rank's userRanks.

// finding is one finding as verify prints it: its line and its hint's.
func finding(kind, message string) string {
	return "nccom-rings: " + message + "\n  check: " + verify.Hint(kind) + "\n"
}

// Rank 3's channel-0 next moved from 0 to 1. Before issue 23 the first
// line blamed rank 0 ("rank 0: channel 0 prev is 3, but rank 3's next is
// 1"), the first rank in file order. Succ(3) has 6 views: rank 3's next
// (1), rank 0's prev (3, so 0 follows 3) and the 4 userRanks (0 follows
// 3): 5 hold 0, and rank 3 is the only rank they contradict.
func TestVerifyNamesTheCorruptedRankFirst(t *testing.T) {
	dir, paths := identityJob(t)
	edit(t, paths[3], func(d *ringdump.Dump) { d.Channels[0].Next = 1 })
	code, out, errOut := runTool("verify", dir)
	assert.Equal(t, cli.ExitFinding, code)
	assert.Empty(t, errOut)
	assert.Equal(t,
		finding(verify.KindNext, "rank 3: channel 0 next is 1, but rank 1's prev is 0; 5 of 6 views have 0 after 3")+
			finding(verify.KindDoubling, "rank 3: channel 1 (prev 2, next 0) differs from channel 0 (prev 2, next 1), which it repeats (D10)")+
			`nccom-rings: "`+dir+`": 2 findings`+"\n", out)
}

// Rank 3 holds a stale view of channel 0 (prev 1, userRanks 3 0 2 1, as
// if the ring were 0 2 1 3). Before issue 23 the first line blamed rank 2
// ("rank 2: channel 0 next is 3, but rank 3's prev is 1") and the stale
// userRanks were not reported. Pred(3): rank 2's next, rank 3's prev (1)
// and the 4 userRanks (rank 3's wraps 1 -> 3): 4 of 6 hold 2. Succ(0):
// rank 0's next, rank 1's prev and the userRanks (rank 3's: 0 -> 2): 5 of
// 6 hold 1.
func TestVerifyReportsStaleUserRanks(t *testing.T) {
	dir, paths := identityJob(t)
	edit(t, paths[3], func(d *ringdump.Dump) {
		d.Channels[0].Prev, d.Channels[0].UserRanks = 1, []int{3, 0, 2, 1}
	})
	code, out, _ := runTool("verify", dir)
	assert.Equal(t, cli.ExitFinding, code)
	assert.Equal(t,
		finding(verify.KindPrev, "rank 3: channel 0 prev is 1, but rank 1's next is 2; 4 of 6 views have 2 before 3")+
			finding(verify.KindUserRanks, "rank 3: channel 0 userRanks[2] is 2, but 5 of 6 views have 1 after 0 (stale userRanks)")+
			finding(verify.KindDoubling, "rank 3: channel 1 (prev 2, next 0) differs from channel 0 (prev 1, next 0), which it repeats (D10)")+
			`nccom-rings: "`+dir+`": 3 findings`+"\n", out)

	// userRanks that do not start at the rank.
	dir, paths = identityJob(t)
	edit(t, paths[2], func(d *ringdump.Dump) {
		for c := range 2 {
			d.Channels[c].UserRanks = []int{3, 0, 1, 2}
		}
	})
	code, out, _ = runTool("verify", dir)
	assert.Equal(t, cli.ExitFinding, code)
	assert.Equal(t,
		finding(verify.KindUserRanks, "rank 2: channel 0 userRanks starts with 3, not with the rank (stale userRanks)")+
			finding(verify.KindUserRanks, "rank 2: channel 1 userRanks starts with 3, not with the rank (stale userRanks)")+
			`nccom-rings: "`+dir+`": 2 findings`+"\n", out)
}

// A job of 2 nodes x 4 ranks whose rank 5 file was cut after 100 bytes and
// whose rank 3 has channel-0 next 5 (for 4). Before issue 23 verify said
// "missing rank 5 (of 8)" and checked no ring. Now the cut file is one
// finding and ranks 0-4, 6 and 7 are checked: succ(3) has 9 views (rank
// 3's next, rank 4's prev, 7 userRanks), 8 hold 4; rank 5 has no file to
// point back. Exit 2: part of the input could not be used.
func TestVerifyGoesOnPastACutFile(t *testing.T) {
	dir, paths := ringJob(t, 2, 4)
	edit(t, paths[3], func(d *ringdump.Dump) { d.Channels[0].Next = 5 })
	data, err := os.ReadFile(paths[5])
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(paths[5], data[:100], 0o644))

	code, out, errOut := runTool("verify", dir)
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Empty(t, errOut)
	assert.Equal(t,
		finding(verify.KindUnusable, `rank 5: "`+paths[5]+`": not a ring dump: at byte 100: unexpected end of JSON input`)+
			finding(verify.KindNext, "rank 3: channel 0 next is 5, but 8 of 9 views have 4 after 3")+
			finding(verify.KindDoubling, "rank 3: channel 1 (prev 2, next 4) differs from channel 0 (prev 2, next 5), which it repeats (D10)")+
			`nccom-rings: "`+dir+`": 3 findings, 1 input unusable`+"\n", out)

	code, out, _ = runTool("verify", "--json", dir)
	assert.Equal(t, cli.ExitUnusable, code)
	var rep verify.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	assert.Equal(t, verify.Report{Dir: dir, Files: 7, Unusable: 1, Ranks: 8, Channels: 2, Nodes: 2, OK: false, Findings: []verify.Finding{
		{Kind: verify.KindUnusable, Rank: 5, Channel: -1, Other: -1, Files: []string{paths[5]},
			Message: `rank 5: "` + paths[5] + `": not a ring dump: at byte 100: unexpected end of JSON input`, Hint: verify.Hint(verify.KindUnusable)},
		{Kind: verify.KindNext, Rank: 3, Channel: 0, Other: -1, Message: "rank 3: channel 0 next is 5, but 8 of 9 views have 4 after 3", Hint: verify.Hint(verify.KindNext)},
		{Kind: verify.KindDoubling, Rank: 3, Channel: 1, Other: -1, Message: "rank 3: channel 1 (prev 2, next 4) differs from channel 0 (prev 2, next 5), which it repeats (D10)", Hint: verify.Hint(verify.KindDoubling)},
	}}, rep)
}

// --json prints one document whatever the input: every file unusable, no
// such directory, a directory without dumps (exit 2 each).
func TestVerifyJSONIsAlwaysADocument(t *testing.T) {
	cut, paths := identityJob(t)
	for _, p := range paths {
		require.NoError(t, os.WriteFile(p, []byte(`{"format":1,`), 0o644))
	}
	for _, tc := range []struct {
		dir      string
		findings int
		first    string
	}{
		{cut, 4, `rank 0: "` + paths[0] + `": not a ring dump: at byte 12: unexpected end of JSON input`},
		{filepath.Join(cut, "nonexistent"), 1, `"` + filepath.Join(cut, "nonexistent") + `": no such file or directory`},
		{t.TempDir(), 1, ""},
	} {
		code, out, _ := runTool("verify", tc.dir, "--json")
		assert.Equal(t, cli.ExitUnusable, code, tc.dir)
		var rep verify.Report
		require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
		assert.False(t, rep.OK)
		assert.Equal(t, tc.dir, rep.Dir)
		assert.Positive(t, rep.Unusable)
		require.Len(t, rep.Findings, tc.findings)
		assert.Equal(t, verify.KindUnusable, rep.Findings[0].Kind)
		assert.NotEmpty(t, rep.Findings[0].Hint)
		if tc.first != "" {
			assert.Equal(t, tc.first, rep.Findings[0].Message)
		} else {
			assert.Contains(t, rep.Findings[0].Message, "holds no rank-NNNNNN.HOST.PID.json dump files")
		}
	}
}

// The job's nRanks, channel count and nodes are the ones most files give:
// one file that differs is named, not every other one.
func TestVerifyTakesTheJobsShapeFromMostFiles(t *testing.T) {
	dir, paths := identityJob(t)
	edit(t, paths[0], func(d *ringdump.Dump) { d.NRanks = 5 })
	code, out, _ := runTool("verify", dir)
	assert.Equal(t, cli.ExitFinding, code)
	assert.Equal(t,
		finding(verify.KindNRanks, `rank 0: nRanks is 5 ("`+paths[0]+`"), but 3 of 4 files say 4`)+
			finding(verify.KindMissing, "missing rank 0 (of 4)")+
			`nccom-rings: "`+dir+`": 2 findings`+"\n", out)

	dir, paths = identityJob(t)
	edit(t, paths[0], func(d *ringdump.Dump) { d.NodesFirstRank = []int{0, 3} })
	code, out, _ = runTool("verify", dir)
	assert.Equal(t, cli.ExitFinding, code)
	assert.Equal(t,
		finding(verify.KindShape, "rank 0: nodes' first ranks [0 3], but 3 of 4 ranks have [0 2]")+
			`nccom-rings: "`+dir+`": 1 finding`+"\n", out)
}

// Exit codes when findings and unusable files come together: 2 wins.
func TestVerifyExitCodeIsTheWorst(t *testing.T) {
	assert.Equal(t, cli.ExitOK, verifyExit(verify.Report{OK: true}))
	assert.Equal(t, cli.ExitFinding, verifyExit(verify.Report{OK: false}))
	assert.Equal(t, cli.ExitUnusable, verifyExit(verify.Report{OK: false, Unusable: 1}))
}

// Every finding carries its kind's hint (the kinds' hints themselves:
// package verify's TestEveryKindHasAHint).
func TestEveryFindingCarriesItsKindsHint(t *testing.T) {
	dir, paths := identityJob(t)
	edit(t, paths[1], func(d *ringdump.Dump) { d.Channels[0].Next, d.Channels[1].Prev = 7, -2 })
	edit(t, paths[2], func(d *ringdump.Dump) { d.Result, d.ResultName, d.Warn, d.Wiring = 3, "ncclInternalError", "x", nil })
	rep := verify.Check(dir, readAll(t, dir), nil)
	require.NotEmpty(t, rep.Findings)
	for _, f := range rep.Findings {
		assert.Equal(t, verify.Hint(f.Kind), f.Hint, f.Message)
	}
	assert.Equal(t, []string{"rank 2: ncclTopoPostset failed with \"ncclInternalError\" (3): \"x\"",
		"rank 1: channel 0 next is 7, outside [0, 4)", "rank 1: channel 1 prev is -2, outside [0, 4)",
		"rank 1: channel 1 (prev -2, next 2) differs from channel 0 (prev 0, next 7), which it repeats (D10)"}, messages(rep))
}

// Where no value has a majority, a next and a prev that disagree name both
// ranks (D24's vote for each rank that could explain a contradiction).
func TestVerifyWithoutAMajorityNamesBothRanks(t *testing.T) {
	// A job of two ranks whose rank 1 has channel-0 prev 1 and userRanks
	// 1 1 (not a permutation: not a view). Pred(1): rank 0's next and
	// userRanks (0), rank 1's prev (1): 2 of 3 hold 0. Succ(1): rank 1's
	// next, rank 0's prev and userRanks (0), rank 1's prev (1): 3 of 4.
	// Rank 1's prev names itself, so what points back is its own next.
	dir, paths := ringJob(t, 1, 2)
	edit(t, paths[1], func(d *ringdump.Dump) { d.Channels[0].Prev, d.Channels[0].UserRanks = 1, []int{1, 1} })
	rep := verify.Check(dir, readAll(t, dir), nil)
	assert.Equal(t, []string{
		"rank 1: channel 0 prev is 1, but rank 1's next is 0; 2 of 3 views have 0 before 1",
		"rank 1: channel 0 userRanks[1] is 1, but 3 of 4 views have 0 after 1 (stale userRanks)",
		"rank 1: channel 1 (prev 0, next 0) differs from channel 0 (prev 1, next 0), which it repeats (D10)"}, messages(rep))

	// 4 ranks whose userRanks are r r r r (no views: only next and prev
	// vote), rank 1's prev 3 on both channels. Views of each channel:
	// the nexts 0->1, 1->2, 2->3, 3->0 and the prevs 3->0, 3->1, 1->2,
	// 2->3. Pred(1) has 0->1 and 3->1: no majority, so rank 1's prev
	// against rank 3's next is a link finding weighing on both (1 each).
	// Succ(3): 3->0 twice, 3->1 once: 0, so rank 3's next stands. Each
	// userRanks[1] is stale: succ(0) is 1 by 1 of 1 view, succ(1) 2 by 2
	// of 2, succ(2) 3 by 2 of 2, succ(3) 0 by 2 of 3. Blame: rank 1 1+2
	// per channel = 6, rank 3 1+2 per channel = 6 (tie: rank 1 first),
	// rank 2 2+2, rank 0 1+1.
	dir, paths = identityJob(t)
	for r, p := range paths {
		edit(t, p, func(d *ringdump.Dump) {
			for c := range 2 {
				d.Channels[c].UserRanks = []int{r, r, r, r}
				if r == 1 {
					d.Channels[c].Prev = 3
				}
			}
		})
	}
	rep = verify.Check(dir, readAll(t, dir), nil)
	var lines []string
	for c := range 2 {
		lines = append(lines, fmt.Sprintf("rank 1: channel %d prev is 3, but rank 3's next is 0", c),
			fmt.Sprintf("rank 1: channel %d userRanks[1] is 1, but 2 of 2 views have 2 after 1 (stale userRanks)", c))
	}
	for _, r := range []struct{ rank, want, views, of int }{{3, 0, 2, 3}, {2, 3, 2, 2}, {0, 1, 1, 1}} {
		for c := range 2 {
			lines = append(lines, fmt.Sprintf("rank %d: channel %d userRanks[1] is %d, but %d of %d views have %d after %d (stale userRanks)", r.rank, c, r.rank, r.views, r.of, r.want, r.rank))
		}
	}
	assert.Equal(t, lines, messages(rep))
	assert.Equal(t, verify.Finding{Kind: verify.KindLink, Rank: 1, Channel: 0, Other: 3, Message: lines[0], Hint: verify.Hint(verify.KindLink)}, rep.Findings[0])
}

func readAll(t *testing.T, dir string) []ringdump.File {
	t.Helper()
	files, bad, err := ringdump.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, bad)
	return files
}

func messages(rep verify.Report) []string {
	var m []string
	for _, f := range rep.Findings {
		m = append(m, f.Message)
	}
	return m
}

// runVerifyJUnit runs verify --junit FILE DIR and reads FILE back: the
// exit code, the suite, its counts (tests, failures, errors) and the
// testcases that did not pass.
func runVerifyJUnit(t *testing.T, dir string) (int, junit.Suite, [3]int, []string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "verify.xml")
	code, _, errOut := runTool("verify", "--junit", path, dir)
	b, err := os.ReadFile(path)
	require.NoError(t, err, errOut)
	s, err := junit.Parse(b)
	require.NoError(t, err, "%s", b)
	var bad []string
	for _, c := range s.Cases {
		if c.Failure != "" || c.Error != "" {
			bad = append(bad, c.Name)
		}
	}
	tests, failures, errors := s.Counts()
	return code, s, [3]int{tests, failures, errors}, bad
}

// "job", then one testcase per rank; a changed next fails its rank, a cut
// file is an error on its rank and the others are still testcases; the
// exit codes are verify's.
func TestVerifyJUnit(t *testing.T) {
	dir, paths := ringJob(t, 2, 4)
	code, _, counts, bad := runVerifyJUnit(t, dir)
	assert.Equal(t, cli.ExitOK, code)
	assert.Equal(t, [3]int{9, 0, 0}, counts)
	assert.Empty(t, bad)

	edit(t, paths[3], func(d *ringdump.Dump) { d.Channels[0].Next = 5 })
	code, _, counts, bad = runVerifyJUnit(t, dir)
	assert.Equal(t, cli.ExitFinding, code)
	assert.Equal(t, [3]int{9, 1, 0}, counts)
	assert.Equal(t, []string{"rank 3"}, bad)

	data, err := os.ReadFile(paths[5])
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(paths[5], data[:100], 0o644))
	code, s, counts, bad := runVerifyJUnit(t, dir)
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Equal(t, [3]int{9, 1, 1}, counts)
	assert.Equal(t, []string{"rank 3", "rank 5"}, bad)
	assert.Contains(t, s.Cases[6].Error, "not a ring dump: at byte 100")

	// No dumps at all: the one "job" testcase, errored.
	code, _, counts, bad = runVerifyJUnit(t, t.TempDir())
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Equal(t, [3]int{1, 0, 1}, counts)
	assert.Equal(t, []string{"job"}, bad)
}

// identityJob with the order every rank recorded (D25): both asked for the
// network order with their node's location, and the sequence 0 1 (what the
// identity rings visit).
func orderedJob(t *testing.T) (string, []string) {
	t.Helper()
	dir, paths := identityJob(t)
	for r, p := range paths {
		edit(t, p, func(d *ringdump.Dump) {
			d.Order = &ringdump.Order{Asked: "network", Location: []string{"s/a", "s/b"}[r/2], Network: true, Sequence: []int{0, 1}}
		})
	}
	return dir, paths
}

func TestVerifyChecksTheNodeOrder(t *testing.T) {
	dir, _ := orderedJob(t)
	code, out, errOut := runTool("verify", dir)
	assert.Equal(t, cli.ExitOK, code, errOut)
	assert.Equal(t, "nccom-rings: 4 ranks, 2 channels, 2 nodes: every rank agrees\n", out)

	for _, tc := range []struct {
		name  string
		rank  int
		edit  func(d *ringdump.Dump)
		first string
		kind  string // its hint is the second line
	}{
		{"a rank that decided another sequence", 3, func(d *ringdump.Dump) { d.Order.Sequence = []int{1, 0} },
			"nccom-rings: rank 3: its Postset decided the network order [1 0], but 3 of 4 ranks decided the network order [0 1]", verify.KindDecision},
		// Rank 0 is no reference: the decision most ranks reached is, so
		// rank 0 is named, not rank 1 (as before issue 23).
		{"rank 0 decided another sequence", 0, func(d *ringdump.Dump) { d.Order.Sequence = []int{1, 0} },
			"nccom-rings: rank 0: its Postset decided the network order [1 0], but 3 of 4 ranks decided the network order [0 1]", verify.KindDecision},
		{"a rank that fell back", 1, func(d *ringdump.Dump) { d.Order.Network, d.Order.Sequence, d.Order.Note = false, nil, "fell\nback" },
			`nccom-rings: rank 1: its Postset decided rank order ("fell\nback"), but 3 of 4 ranks decided the network order [0 1]`, verify.KindDecision},
		{"a rank that asked for rank order", 2, func(d *ringdump.Dump) { d.Order.Asked = "rank" },
			"nccom-rings: rank 2 asked NCCOM_RING_NODE_ORDER=rank, but 3 of 4 ranks asked network", verify.KindAsked},
		{"a rank whose location is not its node's", 1, func(d *ringdump.Dump) { d.Order.Location = "s/b" },
			`nccom-rings: rank 1: its record carries the location "s/b", but its node 0 is placed at the location "s/a" (the value most of its ranks carry; D28)`, verify.KindLocation},
		// D28: a tie (one rank each) goes to the head's value, rank 2's
		// of node 1 (ranks 2, 3), so rank 3 is named.
		{"a tie goes to the head", 3, func(d *ringdump.Dump) { d.Order.Location = "s/c" },
			`nccom-rings: rank 3: its record carries the location "s/c", but its node 1 is placed at the location "s/b" (the value most of its ranks carry; D28)`, verify.KindLocation},
		// "No location" is a value: rank 0 without one ties with rank 1,
		// and rank 0 is the head, so node 0 has none; rank 1 is named,
		// and the sequence the ranks decided is not the placement's.
		{"no location counts", 0, func(d *ringdump.Dump) { d.Order.Location = "" },
			"nccom-rings: every rank decided the network order [0 1], but the locations their records carry give [1 0] (D28's placement, which the library and the tools share)", verify.KindSequence},
		// The hashes place a rank, whatever its name says.
		{"the hashes decide", 1, func(d *ringdump.Dump) {
			d.Order.FromRecord, d.Order.LocationHashes = true, []uint32{nodeorder.Hash("s"), nodeorder.Hash("z")}
		}, fmt.Sprintf(`nccom-rings: rank 1: its record carries the location "#%08x/#%08x", but its node 0 is placed at the location "s/a" (the value most of its ranks carry; D28)`, nodeorder.Hash("s"), nodeorder.Hash("z")), verify.KindLocation},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, paths := orderedJob(t)
			edit(t, paths[tc.rank], tc.edit)
			code, out, _ := runTool("verify", dir)
			assert.Equal(t, cli.ExitFinding, code)
			assert.Equal(t, tc.first+"\n", firstLine(out))
			assert.Equal(t, tc.first+"\n  check: "+verify.Hint(tc.kind)+"\n", firstFinding(out))
		})
	}

	// Rings that do not follow the sequence every rank decided.
	dir, paths := orderedJob(t)
	for _, p := range paths {
		edit(t, p, func(d *ringdump.Dump) { d.Order.Sequence = []int{0, 1, 0} })
	}
	code, out, _ = runTool("verify", dir)
	assert.Equal(t, cli.ExitFinding, code)
	assert.Equal(t, "nccom-rings: channel 0: the ring visits the nodes [0 1], not in the sequence [0 1 0] every rank decided\n  check: "+verify.Hint(verify.KindSequence)+"\n", firstFinding(out))
}

// firstFinding is the first finding of verify's text output: its line and
// its hint's.
func firstFinding(s string) string {
	line := firstLine(s)
	return line + firstLine(s[len(line):])
}

func firstLine(s string) string {
	for i, c := range s {
		if c == '\n' {
			return s[:i+1]
		}
	}
	return s
}

func TestVerifyPassesOnHandComputedRings(t *testing.T) {
	dir, _ := identityJob(t)
	code, out, errOut := runTool("verify", dir)
	assert.Equal(t, cli.ExitOK, code, errOut)
	assert.Equal(t, "nccom-rings: 4 ranks, 2 channels, 2 nodes: every rank agrees\n", out)
}

func TestVerifyNamesTheRankWhoseNextChanged(t *testing.T) {
	dir, paths := identityJob(t)
	edit(t, paths[1], func(d *ringdump.Dump) { d.Channels[0].Next = 3 })
	code, out, _ := runTool("verify", dir)
	assert.Equal(t, cli.ExitFinding, code)
	// Succ(1) has 6 views: rank 1's next (3), rank 2's prev (1: 2 follows
	// 1) and the 4 userRanks (2 follows 1): 5 hold 2.
	first, _, _ := bytes.Cut([]byte(out), []byte("\n"))
	assert.Equal(t, "nccom-rings: rank 1: channel 0 next is 3, but rank 3's prev is 2; 5 of 6 views have 2 after 1", string(first))

	code, out, _ = runTool("verify", "--json", dir)
	assert.Equal(t, cli.ExitFinding, code)
	var rep verify.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.False(t, rep.OK)
	require.NotEmpty(t, rep.Findings)
	assert.Equal(t, verify.Finding{Kind: verify.KindNext, Rank: 1, Channel: 0, Other: 3, Message: "rank 1: channel 0 next is 3, but rank 3's prev is 2; 5 of 6 views have 2 after 1", Hint: verify.Hint(verify.KindNext)}, rep.Findings[0])
}

func TestVerifyNamesTheMissingRank(t *testing.T) {
	dir, paths := identityJob(t)
	require.NoError(t, os.Remove(paths[2]))
	code, out, _ := runTool("verify", dir)
	assert.Equal(t, cli.ExitFinding, code)
	assert.Contains(t, out, "nccom-rings: missing rank 2 (of 4)\n")
}

func TestVerifyReportsAFailedRankWithItsWarn(t *testing.T) {
	dir, paths := identityJob(t)
	edit(t, paths[3], func(d *ringdump.Dump) {
		d.Result, d.ResultName, d.Warn, d.Wiring, d.NetDevs = 4, "ncclInvalidArgument", "ncclTopoPostset: allTopoRanks[2] is NULL", nil, nil
	})
	code, out, _ := runTool("verify", dir)
	assert.Equal(t, cli.ExitFinding, code)
	assert.Contains(t, out, `rank 3: ncclTopoPostset failed with "ncclInvalidArgument" (4): "ncclTopoPostset: allTopoRanks[2] is NULL"`+"\n")
}

func TestVerifyNamesBothFilesOfADuplicatedRank(t *testing.T) {
	dir, paths := identityJob(t)
	d, err := ringdump.Read(paths[0])
	require.NoError(t, err)
	d.PID = 200 // a second run into the same directory
	second, err := ringdump.Write(dir, d)
	require.NoError(t, err)
	code, out, _ := runTool("verify", dir)
	assert.Equal(t, cli.ExitFinding, code)
	assert.Contains(t, out, `rank 0: 2 files, "`+paths[0]+`", "`+second+`"`)
}

func TestVerifyChecksUserRanksAndDoubling(t *testing.T) {
	dir, paths := identityJob(t)
	edit(t, paths[2], func(d *ringdump.Dump) { d.Channels[0].UserRanks = []int{2, 3, 1, 0} })
	code, out, _ := runTool("verify", dir)
	assert.Equal(t, cli.ExitFinding, code)
	// Succ(3): rank 3's next, rank 0's prev, 3 userRanks say 0; rank 2's
	// userRanks says 1.
	assert.Contains(t, out, "rank 2: channel 0 userRanks[2] is 1, but 5 of 6 views have 0 after 3 (stale userRanks)\n")
	assert.Contains(t, out, "rank 2: channel 1 userRanks[2] is 0, but channel 0's, which it repeats (D10), is 1\n")
}

func TestVerifyFindsTwoCycles(t *testing.T) {
	dir, paths := identityJob(t)
	// 0 <-> 1 and 2 <-> 3 on channel 0 in every view: prev and next agree,
	// and each userRanks is what BuildRings walks along them (0 1 0 1 from
	// rank 0), so the ring every rank agrees on misses two ranks. (Before
	// issue 23 the userRanks were left 0 1 2 3: those 4 views now outvote
	// the 2 of each next, and each rank's next is the finding.)
	for r, path := range paths {
		edit(t, path, func(d *ringdump.Dump) {
			for c := range 2 { // channel 1 repeats channel 0 (D10)
				d.Channels[c].Next, d.Channels[c].Prev = r^1, r^1
				d.Channels[c].UserRanks = []int{r, r ^ 1, r, r ^ 1}
			}
		})
	}
	code, out, _ := runTool("verify", dir)
	assert.Equal(t, cli.ExitFinding, code)
	cycle := func(c int) string {
		return fmt.Sprintf("nccom-rings: rank 0: channel %d is a ring of 2 ranks, not of all 4: following next from rank 0 comes back after 2\n  check: %s\n", c, verify.Hint(verify.KindCycle))
	}
	assert.Equal(t, cycle(0)+cycle(1)+"nccom-rings: \""+dir+"\": 2 findings\n", out)
}

func TestVerifyRefusesUnusableInput(t *testing.T) {
	dir, paths := identityJob(t)
	require.NoError(t, os.WriteFile(paths[1], []byte(`{"format":1,"rank":1,"nRanks":4,,}`), 0o644))
	code, out, errOut := runTool("verify", dir)
	assert.Equal(t, cli.ExitUnusable, code)
	// A finding on stdout since issue 23, no longer a line on stderr.
	assert.Empty(t, errOut)
	assert.Contains(t, out, `nccom-rings: rank 1: "`+paths[1]+`": not a ring dump: at byte 33:`, "the second comma is the 33rd byte")

	code, _, errOut = runTool("verify", filepath.Join(dir, "nonexistent"))
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Contains(t, errOut, "no such file or directory")

	code, _, errOut = runTool("verify", t.TempDir())
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Contains(t, errOut, "holds no rank-NNNNNN.HOST.PID.json dump files")

	code, _, _ = runTool("verify")
	assert.Equal(t, cli.ExitUnusable, code)
	code, _, _ = runTool("verify", "--bogus", dir)
	assert.Equal(t, cli.ExitUnusable, code)
}
