package abicheck

import (
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/nccomring/libnccomring/internal/cputime"
	"github.com/nccomring/libnccomring/internal/elfcraft"
	"github.com/nccomring/libnccomring/internal/fuzzseed"
	"github.com/nccomring/libnccomring/layout"
)

// FuzzDWARFWalk feeds DWARF sections to everything that walks what they
// describe: prescan and dwarf.New, FindStructs (the scan and the type
// resolver), and the walks over the types it returns (LookupField,
// leafAt, CTypeName, CDecl, Size, Compare). None may panic, hang or fail
// to end within a deadline on CPU time far beyond what inputs of this
// size need. The seed corpus (testdata/fuzz/FuzzDWARFWalk) holds issue
// 21's three cycles, a deep typedef chain, pointers to the struct itself
// and a gcc build of the stand-in (tests/c/abi/fixture.c); `make test`
// runs the seeds and
// the inputs fuzzseed derives from them, `make fuzz` fuzzes.
// ABICHECK_WRITE_SEEDS=1 go test -run TestWriteFuzzSeeds ./abicheck
// rewrites them.
func FuzzDWARFWalk(f *testing.F) {
	fuzzseed.New(f).Fuzz(fuzzOne)
}

// fuzzOne is one input of FuzzDWARFWalk.
func fuzzOne(t *testing.T, abbrev, info, str, lineStr []byte) {
	// 20 s of CPU, not of the wall clock (issue 32): an input that never
	// ends is work without end, and a worker starved by a busy machine
	// uses none; the deadline is in the test so that the fuzzer keeps
	// such an input.
	ctx, cancel := cputime.WithLimit(context.Background(), 20*time.Second)
	defer cancel()
	d, err := newDWARF(ctx, map[string][]byte{"abbrev": abbrev, "info": info, "str": str, "line_str": lineStr})
	if err != nil {
		failOnDeadline(t, err)
		return
	}
	names := append([]string{"ncclTopoNode", "anon"}, RingStageStructs...)
	defs, _, err := FindStructs(ctx, d, names)
	if err != nil {
		failOnDeadline(t, err)
		return
	}
	for _, def := range defs {
		walkStruct(t, def)
	}
	if len(defs) == len(names) {
		_ = Compare(defs, layout.D3Offsets)
	}
}

func failOnDeadline(t *testing.T, err error) {
	var le *LimitError
	if errors.As(err, &le) && le.What == "the read did not finish before its deadline" {
		t.Fatalf("a small input used 20 s of CPU: %v", err)
	}
}

// walkStruct runs every walk over def's type.
func walkStruct(t *testing.T, def *StructDef) {
	st := def.Type
	_ = st.Size()
	_ = CTypeName(st)
	for _, f := range st.Field {
		_ = f.Type.Size()
		_, _ = CDecl(f.Type, f.Name)
		_ = StripTypedefs(f.Type)
		if f.Name != "" {
			_, _ = LookupField(st, f.Name)
			_, _ = LookupField(st, f.Name+"[1].x")
		}
		_, _, _, _, _ = leafAt(st, 0, MemberOffset(f), 0)
	}
	for _, lf := range layout.Fields {
		_ = CompareField(st, lf)
	}
}

// TestWriteFuzzSeeds writes the seed corpus (with ABICHECK_WRITE_SEEDS=1).
func TestWriteFuzzSeeds(t *testing.T) {
	if os.Getenv("ABICHECK_WRITE_SEEDS") == "" {
		t.Skip("set ABICHECK_WRITE_SEEDS=1 to rewrite testdata/fuzz/FuzzDWARFWalk")
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzDWARFWalk")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name string, abbrev, info, str, lineStr []byte) {
		text := "go test fuzz v1\n"
		for _, b := range [][]byte{abbrev, info, str, lineStr} {
			text += "[]byte(" + strconv.Quote(string(b)) + ")\n"
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, cu := range map[string]*elfcraft.DIE{
		"typedef-self":  elfcraft.SelfTypedef(),
		"pointer-cycle": elfcraft.PointerCycle(),
		"anon-cycle":    elfcraft.AnonymousMemberCycle(),
		"typedef-chain": elfcraft.TypedefChain(20),
	} {
		abbrev, info, err := elfcraft.Unit(cu)
		if err != nil {
			t.Fatal(err)
		}
		write(name, abbrev, info, nil, nil)
	}
	// The stand-in as gcc builds it (DWARF 5: strings in .debug_str and
	// .debug_line_str).
	so := filepath.Join(t.TempDir(), "fixture.so")
	out, err := exec.Command("cc", "-std=c11", "-O1", "-g", "-fPIC", "-shared", "-o", so, filepath.Join("..", "tests", "c", "abi", "fixture.c")).CombinedOutput()
	if err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	f, err := elf.Open(so)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sec := func(name string) []byte {
		s := f.Section(name)
		if s == nil {
			t.Fatalf("%s has no %s", so, name)
		}
		b, err := s.Data()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	write("gcc-fixture", sec(".debug_abbrev"), sec(".debug_info"), sec(".debug_str"), sec(".debug_line_str"))
	fmt.Println("wrote", dir)
}
