package abicheck

import (
	"context"
	"testing"

	"github.com/nccomring/libnccomring/internal/abifixture"
	"github.com/nccomring/libnccomring/layout"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests read the stand-in libnccom builds of tests/c/abi:
// build/abi/*.so (make test-abi-tool) and build/abi/selfcheck/*/
// libnccom.so.2 (make test-abi-check). Without them they skip.

// movedOffsets is the moved fixture's layout profile: rank and nRanks 4
// bytes below D3.
var movedOffsets = layout.CommOffsets{Topo: 17552, Rank: 17612, NRanks: 17616, Node: 17640, NNodes: 17644, NChannels: 17704}

// The self-check reads only the sections types need, in place: it must
// find what elf.File.DWARF, which reads every .debug_* section, finds.
func TestTypeSectionsFindWhatAllSectionsFind(t *testing.T) {
	for _, name := range []string{"libnccom-match.so", "libnccom-cxx-ns.so", "libnccom-moved.so"} {
		lib, err := Open(abifixture.Path(t, name))
		require.NoError(t, err)
		lean, err := lib.DWARF()
		require.NoError(t, err)
		fullData, err := lib.File.DWARF()
		require.NoError(t, err)
		full := &DWARF{data: fullData, infoSize: lean.infoSize}
		a, err := FindRequired(context.Background(), lean, RingStageStructs, name)
		require.NoError(t, err)
		b, err := FindRequired(context.Background(), full, RingStageStructs, name)
		require.NoError(t, err)
		for _, s := range RingStageStructs {
			assert.Equal(t, b[s].Found, a[s].Found, "%s %s", name, s)
			assert.Equal(t, b[s].Type.String(), a[s].Type.String(), "%s %s", name, s)
		}
		require.NoError(t, lib.Close())
	}
}

// What was read stays valid after Close unmaps the file.
func TestStructsOutliveTheMapping(t *testing.T) {
	defs, _, err := ReadStructs(abifixture.Path(t, "libnccom-match.so"), RingStageStructs)
	require.NoError(t, err)
	loc, err := LookupField(defs["ncclComm"].Type, "nNodes")
	require.NoError(t, err)
	assert.Equal(t, int64(17644), loc.Offset)
	assert.Equal(t, "int", CTypeName(loc.Type))
}

// The comparison takes the ASSUMED offsets in use as a parameter.
func TestCompareTakesTheOffsetsInUse(t *testing.T) {
	moved, err := CheckFile(abifixture.Path(t, "libnccom-moved.so"), layout.D3Offsets)
	require.NoError(t, err)
	assert.False(t, moved.OK)
	assert.Len(t, moved.Mismatches, 2)

	moved, err = CheckFile(abifixture.Path(t, "libnccom-moved.so"), movedOffsets)
	require.NoError(t, err)
	assert.True(t, moved.OK, "%v", moved.Mismatches)

	match, err := CheckFile(abifixture.Path(t, "libnccom-match.so"), movedOffsets)
	require.NoError(t, err)
	assert.Equal(t, []string{
		"ncclComm.rank (ASSUMED): LIB has +17616 (4 bytes), layout/ has +17612 (4 bytes)",
		"ncclComm.nRanks (ASSUMED): LIB has +17620 (4 bytes), layout/ has +17616 (4 bytes)",
	}, match.Mismatches)
	// Documented fields never move with the profile.
	for _, f := range ExpectedFields(movedOffsets) {
		if f.Grade != layout.Assumed {
			assert.Contains(t, layout.Fields, f)
		}
	}
}

func TestFindBySONAME(t *testing.T) {
	standin := abifixture.Path(t, "selfcheck/match/libnccom.so.2")
	paths := []string{"linux-vdso.so.1", abifixture.Path(t, "not-elf.so"), abifixture.Path(t, "libnccom-match.so"), standin}
	got, ok := FindBySONAME(paths, LibnccomSONAME)
	assert.True(t, ok)
	assert.Equal(t, standin, got)
	_, ok = FindBySONAME(paths[:3], LibnccomSONAME)
	assert.False(t, ok, "a file without that SONAME is not libnccom, whatever its name")
}

// asMapped is path as the loader would report it mapped: its SONAME left
// to the file, its build ID the file's.
func asMapped(t *testing.T, path string) MappedObject {
	t.Helper()
	lib, err := Open(path)
	require.NoError(t, err)
	defer lib.Close()
	return MappedObject{Path: path, BuildID: lib.BuildID()}
}

func TestCheckMapped(t *testing.T) {
	ctx := context.Background()
	sc := CheckMapped(ctx, []MappedObject{asMapped(t, abifixture.Path(t, "libnccom-match.so"))}, layout.D3Offsets, "D3")
	assert.Nil(t, sc.Report)
	assert.Equal(t, "no libnccom.so.2 is mapped in this process", sc.Why)
	assert.False(t, sc.Warn)

	stripped := abifixture.Path(t, "selfcheck/stripped/libnccom.so.2")
	sc = CheckMapped(ctx, []MappedObject{asMapped(t, stripped)}, layout.D3Offsets, "D3")
	assert.Nil(t, sc.Report)
	assert.Contains(t, sc.Why, stripped+" has no DWARF (.debug_info): it is stripped or was built without -g; build libnccom with -g")
	assert.NotContains(t, sc.Why, "\n", "one log line")
	assert.False(t, sc.Warn)

	match := abifixture.Path(t, "selfcheck/match/libnccom.so.2")
	sc = CheckMapped(ctx, []MappedObject{asMapped(t, match)}, layout.D3Offsets, "D3")
	require.NotNil(t, sc.Report)
	assert.True(t, sc.Report.OK)
	assert.Empty(t, sc.Refusal(RingStageStructs))
	assert.Regexp(t, `^the ring-stage layout in use \(ASSUMED offsets from D3\) matches .*/match/libnccom.so.2 \(build ID [0-9a-f]{40}\): 6 structs and 43 fields read from its DWARF$`, sc.Verified())

	// The SONAME as mapped decides, whatever the file's name.
	sc = CheckMapped(ctx, []MappedObject{{Path: match, SONAME: "libother.so.1", SONAMEKnown: true, BuildID: "ab"}}, layout.D3Offsets, "D3")
	assert.Equal(t, "no libnccom.so.2 is mapped in this process", sc.Why)

	// The mapped object is not the file at its path now: not verified, a WARN.
	moved := asMapped(t, abifixture.Path(t, "selfcheck/moved/libnccom.so.2"))
	sc = CheckMapped(ctx, []MappedObject{{Path: match, SONAME: LibnccomSONAME, SONAMEKnown: true, BuildID: moved.BuildID}}, layout.D3Offsets, "D3")
	assert.Nil(t, sc.Report)
	assert.True(t, sc.Warn)
	assert.Regexp(t, `^the file at .*/match/libnccom.so.2 \(build ID [0-9a-f]{40}\) is not the libnccom.so.2 mapped in this process \(build ID `+moved.BuildID+`\): it was replaced after it was loaded$`, sc.Why)

	sc = CheckMapped(ctx, []MappedObject{{Path: match, SONAME: LibnccomSONAME, SONAMEKnown: true}}, layout.D3Offsets, "D3")
	assert.True(t, sc.Warn)
	assert.Equal(t, match+" as mapped has no GNU build ID, so the file at that path cannot be shown to be the library mapped (link libnccom with --build-id)", sc.Why)

	sc = CheckMapped(ctx, []MappedObject{{Path: "/nonexistent/libnccom.so.2", SONAME: LibnccomSONAME, SONAMEKnown: true, BuildID: "ab"}}, layout.D3Offsets, "D3")
	assert.True(t, sc.Warn)
	assert.Contains(t, sc.Why, "cannot open /nonexistent/libnccom.so.2")
}

// Each refusal names the first difference in the structs an export
// touches, and the advice fits the library as a whole.
func TestRefusals(t *testing.T) {
	preset := []string{"ncclComm", "ncclTopoGraph", "ncclTopoRanks", "ncclChannel", "ncclRing"}
	getNetDev := []string{"ncclTopoGraph", "ncclTopoSystem"}
	check := func(name string, assumed layout.CommOffsets, source string) *SelfCheck {
		path := abifixture.Path(t, name)
		rep, err := CheckFile(path, assumed)
		require.NoError(t, err)
		return &SelfCheck{Library: path, Report: rep, assumedSource: source}
	}

	moved := check("libnccom-moved.so", layout.D3Offsets, "D3")
	assert.Equal(t, moved.Library+", whose DWARF has ncclComm.rank at +17612 (4 bytes) where the layout in use has +17616 (4 bytes; ASSUMED, D3), and 1 more difference; write its offsets with `nccom-abi profile "+moved.Library+" > layout.json` and set NCCOM_RING_LAYOUT=layout.json", moved.Refusal(preset))
	assert.Empty(t, moved.Refusal(getNetDev), "GetNetDev touches no ncclComm")

	match := check("libnccom-match.so", movedOffsets, "NCCOM_RING_LAYOUT")
	assert.Contains(t, match.Refusal(preset), "ncclComm.rank at +17616 (4 bytes) where the layout in use has +17612 (4 bytes; ASSUMED, NCCOM_RING_LAYOUT)")

	grown := check("libnccom-grown.so", layout.D3Offsets, "D3")
	assert.Equal(t, grown.Library+", whose DWARF has sizeof(ncclTopoGraph) 33084 where the layout in use has 33080 (spec abstract, D2); do not preload libnccomring over this build: no layout profile can describe it (`nccom-abi check "+grown.Library+"` lists the differences)", grown.Refusal(getNetDev))
	assert.Empty(t, grown.Refusal([]string{"ncclComm", "ncclTopoRanks", "ncclChannel", "ncclRing"}), "Postset touches no ncclTopoGraph")

	renamed := check("libnccom-renamed.so", layout.D3Offsets, "D3")
	text := renamed.Refusal(preset)
	assert.Contains(t, text, "whose DWARF has no ncclComm.nChannels where the layout in use has +17704 (4 bytes; ASSUMED, D3); do not preload",
		"a missing ASSUMED field: no profile describes it")
}
