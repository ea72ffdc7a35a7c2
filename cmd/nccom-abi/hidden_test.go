package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/internal/elfcraft"
	"github.com/nccomring/libnccomring/internal/hiddentext"
)

// hiddenChars is what every name of these tests carries.
const hiddenChars = hiddentext.Chars

// Issue 34, F7: a build whose DWARF names (a struct, its members, a base
// type) carry C1 controls and bidirectional overrides. Every command's
// text, --json and --junit output, stdout and stderr, holds none of them as
// itself: the text quotes such a name (\xc2\x9b...), --json writes them
// as \u escapes. Before, dump printed the member names as they were, and
// --json every name.
func TestNamesWithHiddenCharactersAreEscapedInEveryOutput(t *testing.T) {
	evil := func(s string) string { return s + hiddenChars + "31m" }
	base := elfcraft.Base(evil("int"), 4)
	comm := elfcraft.Struct(evil("ncclComm_s"), 19216,
		elfcraft.Member(evil("rank"), base, 0), elfcraft.Member(evil("nRanks"), base, 4),
		elfcraft.Member("topo", base, 17552))
	cu := elfcraft.CU(append(elfcraft.RingStageStubs(), base, comm, elfcraft.Typedef("ncclComm", comm))...)
	b, err := elfcraft.WithDWARF(nil, cu)
	require.NoError(t, err)
	lib, junit := filepath.Join(t.TempDir(), "libnccom.so.2"), filepath.Join(t.TempDir(), "junit.xml")
	require.NoError(t, os.WriteFile(lib, b, 0o644))

	for _, args := range [][]string{
		{"dump", lib}, {"dump", "--json", lib}, {"dump", lib, "ncclComm"}, {"dump", "--json", lib, "ncclComm"},
		{"check", lib}, {"check", "--json", lib}, {"profile", lib},
		{"preload", lib}, {"preload", "--json", lib},
		{"check", "--junit", junit, lib}, {"preload", "--junit", junit, lib},
	} {
		var out, errOut bytes.Buffer
		code := run(args, &out, &errOut)
		outputs := map[string]string{"stdout": out.String(), "stderr": errOut.String()}
		if args[1] == "--junit" {
			b, err := os.ReadFile(junit)
			require.NoError(t, err)
			outputs["--junit"] = string(b)
		}
		for what, s := range outputs {
			if r, found := hiddentext.Raw(s); found {
				t.Errorf("%s: %s holds %U as itself (exit %d):\n%.2000s", strings.Join(args[:len(args)-1], " "), what, r, code, s)
			}
		}
		if args[0] == "dump" {
			want := `"rank\xc2\x9b\xe2\x80\xae\xe2\x81\xa631m"`
			if args[1] == "--json" {
				want = `"\"rank\\xc2\\x9b\\xe2\\x80\\xae\\xe2\\x81\\xa631m\""`
			}
			assert.Equal(t, 0, code, args)
			assert.Contains(t, out.String(), want, "%s: the name, quoted", args)
		}
	}

	// A path given on the command line (a file name from a vendor drop,
	// say) shows with its hidden characters as \u text in the text
	// output and escaped in --json, on stdout and stderr alike.
	odd := filepath.Join(t.TempDir(), "lib"+hiddenChars+".so")
	require.NoError(t, os.WriteFile(odd, b, 0o644))
	for _, args := range [][]string{
		{"dump", "--json", odd, "ncclComm"}, {"check", "--json", odd}, {"preload", "--json", odd},
		{"check", "--json", odd + ".missing"},
		{"dump", odd, "ncclComm"}, {"check", odd}, {"preload", odd}, {"profile", odd},
		{"check", odd + ".missing"}, {"dump", odd + ".missing"},
		{"check", "--junit", filepath.Join(odd+".missing", "junit.xml"), odd},
	} {
		var out, errOut bytes.Buffer
		code := run(args, &out, &errOut)
		for what, s := range map[string]string{"stdout": out.String(), "stderr": errOut.String()} {
			if r, found := hiddentext.Raw(s); found {
				t.Errorf("%s: %s holds %U as itself (exit %d):\n%.2000s", strings.Join(args, " "), what, r, code, s)
			}
		}
		if args[0] != "dump" || strings.HasSuffix(args[1], ".missing") { // dump's output names no library, but for an error
			assert.Contains(t, out.String()+errOut.String(), `lib\u009b\u202e\u2066.so`, args)
		}
	}
}
