package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/nccomring/libnccomring/abicheck"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/internal/abifixture"
	"github.com/nccomring/libnccomring/internal/cli"
	"github.com/nccomring/libnccomring/layout"
)

// These tests read the stand-in libnccom builds of tests/c/abi, which
// `make test-abi-tool` builds into $NCCOMRING_BUILD/abi; without them they
// skip, as the tests of tests/hosts do.

// structsOf finds the ring-stage structs (and extra names) in a fixture.
func structsOf(t *testing.T, name string, extra ...string) map[string]*abicheck.StructDef {
	t.Helper()
	lib, err := abicheck.Open(abifixture.Path(t, name))
	require.NoError(t, err)
	t.Cleanup(func() { lib.Close() })
	d, err := lib.DWARF()
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), abicheck.ReadTimeout)
	defer cancel()
	defs, err := abicheck.FindRequired(ctx, d, append(append([]string(nil), abicheck.RingStageStructs...), extra...), name)
	require.NoError(t, err)
	return defs
}

func TestFindsStructsInEveryShape(t *testing.T) {
	defs := structsOf(t, "libnccom-match.so")
	assert.Equal(t, "struct ncclComm", defs["ncclComm"].Found)
	assert.Equal(t, "typedef ncclTopoRanks", defs["ncclTopoRanks"].Found, "a typedef'd anonymous struct")
	assert.Empty(t, defs["ncclTopoRanks"].Type.StructName)

	comm := defs["ncclComm"].Type
	// node and nNodes sit in an anonymous struct in an anonymous union.
	for path, want := range map[string]abicheck.FieldLoc{
		"node":                  {Offset: 17640, Size: 4},
		"nNodes":                {Offset: 17644, Size: 4},
		"nodeKey":               {Offset: 17640, Size: 8},
		"channels":              {Offset: 0, Size: 16384},
		"kangaRing":             {Offset: 16388, Size: 1024},
		"channels[1].ring.next": {Offset: 512 + 4, Size: 4},
	} {
		got, err := abicheck.LookupField(comm, path)
		require.NoError(t, err, path)
		assert.Equal(t, want.Offset, got.Offset, path)
		assert.Equal(t, want.Size, got.Size, path)
	}

	// nodes[0].count: element 0 of an array of structs, then a member.
	sys := defs["ncclTopoSystem"].Type
	count, err := abicheck.LookupField(sys, "nodes[0].count")
	require.NoError(t, err)
	assert.Equal(t, abicheck.FieldLoc{Offset: 0, Size: 4}, abicheck.FieldLoc{Offset: count.Offset, Size: count.Size})
	nodes, err := abicheck.LookupField(sys, "nodes")
	require.NoError(t, err)
	second, err := abicheck.LookupField(sys, "nodes[1].count")
	require.NoError(t, err)
	assert.Equal(t, nodes.Size/7, second.Offset, "nodes[1] starts one ncclTopoNodeSet in")
	// The GPU union member inside ncclTopoNode, through two arrays.
	rank, err := abicheck.LookupField(sys, "nodes[0].nodes[0].gpu.rank")
	require.NoError(t, err)
	assert.Equal(t, int64(8+16+4), rank.Offset, "count and its hole; type, hole and id; dev")

	for _, bad := range []string{"nodes[7].count", "nodes.count", "nodes[0].nope", "nope"} {
		_, err := abicheck.LookupField(sys, bad)
		assert.Error(t, err, bad)
	}
	_, err = abicheck.LookupField(comm, "rank.x")
	assert.ErrorContains(t, err, "rank is not a struct")
}

func TestFindsCxxNames(t *testing.T) {
	defs := structsOf(t, "libnccom-cxx-ns.so")
	assert.Equal(t, "class nccl::ncclComm", defs["ncclComm"].Found)
	assert.Equal(t, "class", defs["ncclComm"].Type.Kind)
	assert.Equal(t, "struct nccl::ncclRing", defs["ncclRing"].Found)
	assert.Equal(t, "typedef nccl::ncclTopoRanks", defs["ncclTopoRanks"].Found)

	defs = structsOf(t, "libnccom-cxx.so")
	assert.Equal(t, "struct ncclComm", defs["ncclComm"].Found)
}

func TestCompareLayoutMatches(t *testing.T) {
	for _, lib := range []string{"libnccom-match.so", "libnccom-cxx.so", "libnccom-cxx-ns.so"} {
		rep := compareLayout(structsOf(t, lib))
		assert.True(t, rep.OK, "%s: %v", lib, rep.Mismatches)
		assert.Len(t, rep.Fields, len(layout.Fields))
		var want offsets
		for _, f := range layout.Fields {
			if f.Grade == layout.Assumed {
				want = append(want, namedOffset{f.Name, int64(f.Offset)})
			}
		}
		assert.Equal(t, want, rep.Assumed, lib)
	}
}

func TestCompareLayoutNamesEachMismatch(t *testing.T) {
	moved := compareLayout(structsOf(t, "libnccom-moved.so"))
	assert.False(t, moved.OK)
	assert.Equal(t, []string{
		"ncclComm.rank (ASSUMED): LIB has +17612 (4 bytes), layout/ has +17616 (4 bytes)",
		"ncclComm.nRanks (ASSUMED): LIB has +17616 (4 bytes), layout/ has +17620 (4 bytes)",
	}, moved.Mismatches)
	assert.Contains(t, advice(moved), "nccom-abi profile LIB > layout.json")

	grown := compareLayout(structsOf(t, "libnccom-grown.so"))
	assert.Equal(t, []string{"ncclTopoGraph: sizeof is 33084, layout/ has 33080 (spec abstract, D2)"}, grown.Mismatches)
	assert.Contains(t, advice(grown), "no layout file can change that")

	renamed := compareLayout(structsOf(t, "libnccom-renamed.so"))
	require.Len(t, renamed.Mismatches, 1)
	assert.Contains(t, renamed.Mismatches[0], "ncclComm.nChannels (ASSUMED): not in LIB's ncclComm")
	assert.Contains(t, renamed.Mismatches[0], "LIB has int numChannels at +17704 (4 bytes)")
	for _, f := range renamed.Fields {
		if f.Field == "nChannels" && f.Struct == "ncclComm" {
			assert.Equal(t, abicheck.StatusMissing, f.Status)
			assert.Nil(t, f.ActualOffset)
		}
	}
}

// check's exit codes and --json through run(), as a script would see them.
func TestCheckExitCodesAndJSON(t *testing.T) {
	for lib, code := range map[string]int{
		"libnccom-match.so": cli.ExitOK, "libnccom-moved.so": cli.ExitFinding, "libnccom-grown.so": cli.ExitFinding,
		"libnccom-renamed.so": cli.ExitFinding, "libnccom-stripped.so": cli.ExitUnusable, "not-elf.so": cli.ExitUnusable,
	} {
		var out, errOut bytes.Buffer
		assert.Equal(t, code, run([]string{"check", "--json", abifixture.Path(t, lib)}, &out, &errOut), lib)
		var rep map[string]any
		require.NoError(t, json.Unmarshal(out.Bytes(), &rep), "%s: --json prints JSON, even on unusable input", lib)
		if code == cli.ExitUnusable {
			assert.NotEmpty(t, rep["error"], lib)
			assert.NotEmpty(t, rep["hint"], lib)
		} else {
			assert.Equal(t, code == cli.ExitOK, rep["ok"], lib)
		}
	}
}

func TestUnusableInputSaysWhatToDo(t *testing.T) {
	_, err := checkLibrary(abifixture.Path(t, "libnccom-stripped.so"))
	var ue *abicheck.UnusableError
	require.True(t, errors.As(err, &ue), "%v", err)
	assert.Contains(t, ue.What, "has no DWARF")
	assert.Contains(t, ue.Hint, "build libnccom with -g")
	assert.Contains(t, ue.Hint, "/usr/lib/debug/.build-id/")

	_, err = checkLibrary(abifixture.Path(t, "not-elf.so"))
	require.True(t, errors.As(err, &ue), "%v", err)
	assert.Contains(t, ue.What, "is not an ELF file")

	_, err = dumpLibrary(abifixture.Path(t, "libnccom-match.so"), []string{"ncclNoSuchStruct"})
	require.True(t, errors.As(err, &ue), "%v", err)
	assert.Contains(t, ue.What, "no definition of ncclNoSuchStruct")
}

func TestProfile(t *testing.T) {
	var out, errOut bytes.Buffer
	require.Equal(t, cli.ExitOK, run([]string{"profile", abifixture.Path(t, "libnccom-moved.so")}, &out, &errOut), errOut.String())
	var prof struct {
		Comm    map[string]int64 `json:"ncclComm"`
		Sizeof  map[string]int64 `json:"sizeof"`
		Source  string           `json:"source"`
		BuildID string           `json:"buildId"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &prof))
	assert.Equal(t, map[string]int64{
		"topo": 17552, "rank": 17612, "nRanks": 17616, "node": 17640, "nNodes": 17644, "nChannels": 17704,
	}, prof.Comm)
	assert.Equal(t, map[string]int64{"ncclComm": 19224}, prof.Sizeof)
	parsed, err := layout.ParseProfile(out.Bytes())
	require.NoError(t, err, "the library reads what the tool writes")
	assert.Equal(t, prof.BuildID, parsed.BuildID)
	assert.Equal(t, 19224, parsed.CommSize)
	assert.True(t, filepath.IsAbs(prof.Source), prof.Source)
	assert.Regexp(t, `^[0-9a-f]{40}$`, prof.BuildID)
	assert.Less(t, strings.Index(out.String(), `"topo"`), strings.Index(out.String(), `"nChannels"`), "layout/'s order")

	out.Reset()
	errOut.Reset()
	assert.Equal(t, cli.ExitFinding, run([]string{"profile", abifixture.Path(t, "libnccom-renamed.so")}, &out, &errOut))
	assert.Empty(t, out.String(), "no profile on stdout when a field is missing")
	assert.Contains(t, errOut.String(), "ncclComm.nChannels (ASSUMED): not in LIB's ncclComm")
}

func TestPreloadVerdicts(t *testing.T) {
	for _, tc := range []struct {
		lib, verdict, reason string
	}{
		{"libnccom-match.so", verdictFull, "LIB's own calls go through its PLT/GOT (R_X86_64_JMP_SLOT (.rela.plt))"},
		{"libnccom-cxx.so", verdictFull, "by its C++ name ncclTopoPreset(ncclComm*, ncclTopoGraph*, ncclTopoRanks*)"},
		{"libnccom-stripped.so", verdictFull, "PLT/GOT"},
		{"libnccom-hidden.so", verdictNothing, "not in .dynsym, only in .symtab (LOCAL, DEFAULT)"},
		{"libnccom-symbolic.so", verdictHostsOnly, "-Bsymbolic (DF_SYMBOLIC/DT_SYMBOLIC)"},
		{"libnccom-protected.so", verdictHostsOnly, "protected visibility"},
		{"libnccom-nosemantic.so", verdictHostsOnly, "no relocation in LIB refers to it"},
	} {
		rep, err := preloadLibrary(abifixture.Path(t, tc.lib))
		require.NoError(t, err, tc.lib)
		assert.Equal(t, tc.verdict, rep.Verdict, tc.lib)
		assert.Equal(t, tc.verdict == verdictFull, rep.OK, tc.lib)
		require.Len(t, rep.Functions, 4, tc.lib)
		assert.Contains(t, rep.Functions[0].Reason, tc.reason, tc.lib)
		for _, fv := range rep.Functions {
			assert.Equal(t, tc.verdict, fv.Verdict, "%s %s", tc.lib, fv.Function)
		}
	}
	sym, err := preloadLibrary(abifixture.Path(t, "libnccom-symbolic.so"))
	require.NoError(t, err)
	assert.True(t, sym.DFSymbolic)
	assert.True(t, sym.DTSymbolic)
	prot, err := preloadLibrary(abifixture.Path(t, "libnccom-protected.so"))
	require.NoError(t, err)
	for _, s := range prot.Symbols {
		assert.Equal(t, "PROTECTED", s.Visibility, s.Symbol)
	}
}

// pahole's member lines end in "/* offset size */" (bitfields:
// "/* offset: bit size */"); "} name;" closes an inline aggregate.
var (
	paholeMember = regexp.MustCompile(`^\s*(.*?)\s*/\*\s*(\d+)(?::\s*\d+)?\s+(\d+)\s*\*/\s*$`)
	paholeHole   = regexp.MustCompile(`/\* XXX (\d+) bytes hole`)
	paholeSize   = regexp.MustCompile(`/\* size: (\d+),`)
)

type memberNums struct {
	Name         string
	Offset, Size int64
}

// paholeTypeBlock opens a nested type definition or an inline member at
// the first level: C++ DWARF nests a class's anonymous union types inside
// it, and pahole prints those definitions before the members, with offsets
// relative to the union. A block whose closing line has no offset comment
// is such a definition, not a member, and is dropped.
var (
	paholeBlockOpen  = regexp.MustCompile(`^\t(struct|union|enum|class)\b[^;]*\{$`)
	paholeBlockClose = regexp.MustCompile(`^\t\}`)
)

func memberLines(text string) []string {
	var out, block []string
	inBlock := false
	for _, line := range strings.Split(text, "\n") {
		switch {
		case !inBlock && paholeBlockOpen.MatchString(line):
			inBlock, block = true, []string{line}
		case inBlock:
			block = append(block, line)
			if paholeBlockClose.MatchString(line) {
				inBlock = false
				if paholeMember.MatchString(line) {
					out = append(out, block...)
				}
			}
		default:
			out = append(out, line)
		}
	}
	return out
}

func parsePahole(text string) (members []memberNums, holes []int64, size int64) {
	for _, line := range memberLines(text) {
		if m := paholeMember.FindStringSubmatch(line); m != nil {
			decl := strings.TrimSuffix(m[1], ";")
			fields := strings.Fields(decl)
			name := ""
			if n := fields[len(fields)-1]; n != "}" {
				name = n
			}
			off, _ := strconv.ParseInt(m[2], 10, 64)
			sz, _ := strconv.ParseInt(m[3], 10, 64)
			members = append(members, memberNums{name, off, sz})
		}
		if m := paholeHole.FindStringSubmatch(line); m != nil {
			n, _ := strconv.ParseInt(m[1], 10, 64)
			holes = append(holes, n)
		}
		if m := paholeSize.FindStringSubmatch(line); m != nil {
			size, _ = strconv.ParseInt(m[1], 10, 64)
		}
	}
	return members, holes, size
}

func sortMembers(m []memberNums) {
	sort.Slice(m, func(i, j int) bool {
		if m[i].Offset != m[j].Offset {
			return m[i].Offset < m[j].Offset
		}
		if m[i].Size != m[j].Size {
			return m[i].Size > m[j].Size
		}
		return m[i].Name < m[j].Name
	})
}

// dump must agree with pahole (dwarves) on the same objects: every member's
// offset and size, inline aggregates included, the holes and the size.
func TestDumpAgreesWithPahole(t *testing.T) {
	pahole, err := exec.LookPath("pahole")
	if err != nil {
		if os.Getenv("NCCOM_ABI_REQUIRE_PAHOLE") != "" {
			t.Fatal("pahole is not installed: apt-get install -y dwarves")
		}
		t.Skip("pahole (dwarves) is not installed")
	}
	extra := []string{"ncclTopoNode", "ncclTopoNodeSet", "ncclTree", "ncclTopoLink"}
	for _, lib := range []string{"libnccom-match.so", "libnccom-cxx.so"} {
		path := abifixture.Path(t, lib)
		dumps, err := dumpLibrary(path, append(append([]string(nil), abicheck.RingStageStructs...), extra...))
		require.NoError(t, err)
		for _, ds := range dumps {
			out, err := exec.Command(pahole, "-C", ds.Struct, path).CombinedOutput()
			require.NoError(t, err, "%s %s: %s", lib, ds.Struct, out)
			want, wantHoles, wantSize := parsePahole(string(out))
			require.NotEmpty(t, want, "%s %s: pahole printed no members:\n%s", lib, ds.Struct, out)

			var got []memberNums
			var gotHoles []int64
			for _, r := range ds.Rows {
				switch r.Kind {
				case "member":
					got = append(got, memberNums{r.Name, r.Offset, r.Size})
				case "hole":
					gotHoles = append(gotHoles, r.Size)
				}
			}
			sortMembers(want)
			sortMembers(got)
			assert.Equal(t, want, got, "%s %s", lib, ds.Struct)
			assert.Equal(t, wantHoles, gotHoles, "%s %s holes", lib, ds.Struct)
			assert.Equal(t, wantSize, ds.Size, "%s %s size", lib, ds.Struct)
		}
	}
}

// dump shows the record (D25) over treeToChild1's slots 16..31 in a
// fragment of libnccom 2.31.24's shape, and says so in the listing.
func TestDumpShowsTheRecordInAFragment(t *testing.T) {
	dumps, err := dumpLibrary(abifixture.Path(t, "libnccom-match.so"), []string{"ncclTopoRanks"})
	require.NoError(t, err)
	rows := dumps[0].Rows
	at := -1
	for i, r := range rows {
		if r.Name == "treeToChild1[32]" {
			at = i
		}
	}
	require.GreaterOrEqual(t, at, 0)
	require.Greater(t, len(rows), at+len(recordWords)+1)
	for i, w := range recordWords {
		r := rows[at+1+i]
		assert.Equal(t, "record", r.Kind)
		assert.Equal(t, w.Name, r.Name)
		assert.Equal(t, w.Offset, r.Offset)
	}
	assert.Equal(t, "JbogKangaringPath[4][4]", rows[at+1+len(recordWords)].Name)
	var out bytes.Buffer
	printDump(&out, dumps[0])
	assert.Contains(t, out.String(), "\t\t/* unsigned location[8];         864    32 */\n")
}

// abicheck.CTypeName is display only, but pahole's spelling helps people compare.
func TestCTypeNames(t *testing.T) {
	defs := structsOf(t, "libnccom-match.so")
	for path, want := range map[string]string{
		"channels":      "struct ncclChannel[32]",
		"topo":          "struct ncclTopoSystem *",
		"peerInfo":      "struct ncclPeerInfo *",
		"abortFlag":     "volatile uint32_t *",
		"kangaRing":     "int[4][64]",
		"launchMode":    "enum {...}",
		"nodeKey":       "uint64_t",
		"checkPointers": "_Bool",
	} {
		loc, err := abicheck.LookupField(defs["ncclComm"].Type, path)
		require.NoError(t, err, path)
		assert.Equal(t, want, abicheck.CTypeName(loc.Type), path)
	}
}
