package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/internal/cli"
)

// These tests need no fixture: they run on a plain `go test ./...`.

// The table preload looks names up by must hold the names the library
// itself exports (P19); a drift would make preload miss C++ builds.
func TestRingFunctionsAreTheExportedCxxNames(t *testing.T) {
	exports, err := os.ReadFile("../libnccomring/exports.map")
	require.NoError(t, err)
	for _, fn := range ringFunctions {
		assert.Contains(t, string(exports), "    "+fn.C+";", fn.C)
		assert.Contains(t, string(exports), "    "+fn.Mangled+";", fn.C)
		// The demangled spelling names the same function and its arity.
		assert.True(t, strings.HasPrefix(fn.Demangled, fn.C+"("), fn.Demangled)
	}
}

// The profile and check's "assumed" keep layout/'s field order, which a
// person reading the file expects (encoding/json would sort a map).
func TestOffsetsKeepTheirOrder(t *testing.T) {
	b, err := json.Marshal(offsets{{"topo", 17552}, {"rank", 17616}, {"nRanks", 17620}})
	require.NoError(t, err)
	assert.Equal(t, `{"topo":17552,"rank":17616,"nRanks":17620}`, string(b))
	b, err = json.Marshal(offsets{})
	require.NoError(t, err)
	assert.Equal(t, `{}`, string(b))
}

var update = flag.Bool("update", false, "write docs/commands/nccom-abi.md from the command table")

// The top help, every command's --help and docs/commands/nccom-abi.md
// come from one table, and every flag in it has its help text.
func TestCommandTable(t *testing.T) {
	require.NoError(t, tool.Check("../../docs/commands/nccom-abi.md", *update))
}

func TestUsageAndExitCodes(t *testing.T) {
	var out, errOut bytes.Buffer
	assert.Equal(t, cli.ExitOK, run([]string{"--help"}, &out, &errOut))
	assert.Contains(t, out.String(), "Exit codes:")
	for _, c := range tool.Commands {
		out.Reset()
		assert.Equal(t, cli.ExitOK, run([]string{c.Name, "--help"}, &out, &errOut), c.Name)
		assert.True(t, strings.HasPrefix(out.String(), "Usage: nccom-abi "+c.Name), out.String())
		assert.Contains(t, out.String(), "2  unusable input", c.Name)
		out.Reset()
		assert.Equal(t, cli.ExitOK, run([]string{"help", c.Name}, &out, &errOut), c.Name)
		assert.True(t, strings.HasPrefix(out.String(), "Usage: nccom-abi "+c.Name), out.String())
	}

	errOut.Reset()
	assert.Equal(t, cli.ExitUnusable, run(nil, &out, &errOut))
	assert.Equal(t, cli.ExitUnusable, run([]string{"frobnicate"}, &out, &errOut))
	assert.Contains(t, errOut.String(), `unknown command "frobnicate"`)
	errOut.Reset()
	assert.Equal(t, cli.ExitUnusable, run([]string{"check"}, &out, &errOut))
	assert.Contains(t, errOut.String(), "give exactly one LIB")
	errOut.Reset()
	assert.Equal(t, cli.ExitUnusable, run([]string{"check", "--nope", "x"}, &out, &errOut))
	assert.Contains(t, errOut.String(), "flag provided but not defined")
	errOut.Reset()
	assert.Equal(t, cli.ExitUnusable, run([]string{"check", "/nonexistent/libnccom.so.2"}, &out, &errOut))
	assert.Contains(t, errOut.String(), "cannot open /nonexistent/libnccom.so.2")
}

// The record's words as include/nccom_ring.h declares them (D25), written
// out by hand: a field renamed, moved or resized in the mirror shows here.
func TestRecordWordsAreTheHeaders(t *testing.T) {
	type word struct {
		typ, name    string
		offset, size int64
	}
	want := []word{
		{"int", "magic", 832, 4}, {"int", "version", 836, 4}, {"int", "rank", 840, 4},
		{"int", "flags", 844, 4}, {"unsigned", "fingerprint", 848, 4}, {"int", "jbogId", 852, 4},
		{"int", "virtualCoreSize", 856, 4}, {"unsigned", "checksum", 860, 4},
		{"unsigned", "location[8]", 864, 32},
	}
	var got []word
	for _, r := range recordWords {
		got = append(got, word{r.Type, r.Name, r.Offset, r.Size})
	}
	assert.Equal(t, want, got)
}

// A library whose ncclTopoRanks has no one member over +832..+895 gets a
// note naming what it has at +832, and no record words.
func TestRecordNoteWhenNoMemberHoldsIt(t *testing.T) {
	rows := []dumpRow{
		{Kind: "member", Type: "int", Name: "treeToChild0[32]", Offset: 640, Size: 128},
		{Kind: "member", Type: "int", Name: "treeToChild1[28]", Offset: 768, Size: 112},
		{Kind: "member", Type: "int", Name: "JbogKangaringPath[4][4]", Offset: 880, Size: 64},
	}
	got := annotateRecord(append([]dumpRow(nil), rows...))
	require.Len(t, got, 4)
	assert.Equal(t, rows, got[:3])
	assert.Equal(t, dumpRow{Kind: "note", Offset: 832, Size: 64,
		Name: "the ring stage's record (D25) needs +832..+895 inside one member; LIB has treeToChild1[28] at +768 (112 bytes) there"}, got[3])

	// One member covering exactly +832..+895 takes the words, a level in.
	rows = []dumpRow{{Kind: "member", Type: "int", Name: "spare[16]", Offset: 832, Size: 64}, rows[2]}
	got = annotateRecord(append([]dumpRow(nil), rows...))
	require.Len(t, got, 2+len(recordWords))
	assert.Equal(t, rows[0], got[0])
	assert.Equal(t, rows[1], got[len(got)-1])
	for i, w := range got[1 : len(got)-1] {
		assert.Equal(t, "record", w.Kind)
		assert.Equal(t, 1, w.Depth)
		assert.Equal(t, recordWords[i].Offset, w.Offset)
	}
}
