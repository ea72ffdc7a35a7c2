package abicheck

import (
	"bytes"
	"compress/zlib"
	"context"
	"debug/dwarf"
	"debug/elf"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nccomring/libnccomring/internal/cputime"
	"github.com/nccomring/libnccomring/internal/elfcraft"
	"github.com/nccomring/libnccomring/layout"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 21's crafted files, generated here (internal/elfcraft): each is
// refused with one line naming the file, the section or entry and the
// limit, quickly and without the memory it asks for. They need no
// fixture: they run on a plain `go test ./...`.

func writeFile(t *testing.T, name string, b []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, b, 0o644))
	return path
}

// readCrafted reads the ring-stage structs of b, written to a file.
func readCrafted(t *testing.T, b []byte) (map[string]*StructDef, string, error) {
	t.Helper()
	path := writeFile(t, "crafted.so", b)
	// A bound on work (a bomb inflated, a cycle walked), so on CPU time:
	// the wall clock would time the machine too (issue 32).
	start := cputime.Process()
	defs, _, err := ReadStructs(path, RingStageStructs)
	assert.Less(t, cputime.Process()-start, 10*time.Second)
	if IsLimit(err) {
		assert.NotContains(t, err.Error(), "\n", "one line")
	}
	return defs, path, err
}

func requireLimit(t *testing.T, err error, path string, want ...string) {
	t.Helper()
	require.Error(t, err)
	require.True(t, IsLimit(err), "a *LimitError, got %T: %v", err, err)
	assert.True(t, strings.HasPrefix(err.Error(), path+": "), "names the file: %v", err)
	for _, w := range want {
		assert.Contains(t, err.Error(), w)
	}
}

func TestCompressedSectionBombsAreRefusedBeforeDecompression(t *testing.T) {
	for _, tc := range []struct {
		name     string
		typ      elf.CompressionType
		size     uint64
		zdebug   bool
		wantKind string
	}{
		{"zstd 2 GiB", elf.COMPRESS_ZSTD, 2 << 30, false, "(zstd-compressed, SHF_COMPRESSED) declares 2147483648 bytes"},
		{"zstd 64 GiB", elf.COMPRESS_ZSTD, 64 << 30, false, "(zstd-compressed, SHF_COMPRESSED) declares 68719476736 bytes"},
		{"zlib 64 GiB", elf.COMPRESS_ZLIB, 64 << 30, false, "(zlib-compressed, SHF_COMPRESSED) declares 68719476736 bytes"},
		{".zdebug 64 GiB", elf.COMPRESS_ZLIB, 64 << 30, true, ".zdebug_info (zlib-compressed, .zdebug) declares 68719476736 bytes"},
		{"just over the cap", elf.COMPRESS_ZSTD, MaxSectionSize + 1, false, "declares 268435457 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The stream really expands (to 1 MiB here; mkhostile's files
			// and cmd/nccom-abi's test expand to all they declare).
			b, err := elfcraft.Bomb(nil, tc.typ, tc.size, 1<<20, tc.zdebug)
			require.NoError(t, err)
			_, path, err := readCrafted(t, b)
			requireLimit(t, err, path, tc.wantKind, "more than the 268435456 bytes (MaxSectionSize)", "not decompressed")
		})
	}
}

// Within the cap, compressed DWARF is read as before, and a stream that
// holds less than it declares is an error, not a hang.
func TestCompressedSectionsWithinTheCap(t *testing.T) {
	integer := elfcraft.Base("int", 4)
	abbrev, info, err := elfcraft.Unit(elfcraft.CU(append(elfcraft.RingStageStubs(), integer, elfcraft.Struct("ncclComm", 19216,
		elfcraft.Member("rank", integer, 17616)))...))
	require.NoError(t, err)
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	_, _ = w.Write(info)
	require.NoError(t, w.Close())

	b, err := elfcraft.AddSections(elfcraft.Minimal(),
		elfcraft.Section{Name: ".debug_abbrev", Data: abbrev},
		elfcraft.Section{Name: ".debug_info", Flags: elf.SHF_COMPRESSED, Data: elfcraft.Compressed(elf.COMPRESS_ZLIB, uint64(len(info)), z.Bytes())})
	require.NoError(t, err)
	defs, _, err := readCrafted(t, b)
	require.NoError(t, err)
	loc, err := LookupField(defs["ncclComm"].Type, "rank")
	require.NoError(t, err)
	assert.Equal(t, int64(17616), loc.Offset)

	b, err = elfcraft.AddSections(elfcraft.Minimal(),
		elfcraft.Section{Name: ".debug_abbrev", Data: abbrev},
		elfcraft.Section{Name: ".debug_info", Flags: elf.SHF_COMPRESSED, Data: elfcraft.Compressed(elf.COMPRESS_ZSTD, 8<<20, elfcraft.ZstdZeros(1<<20))})
	require.NoError(t, err)
	_, _, err = readCrafted(t, b)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "holds 1048576 bytes, not the 8388608 it declares")
}

// A section header that claims more than the file has.
func TestSectionPastTheEndOfTheFile(t *testing.T) {
	b, err := elfcraft.AddSections(elfcraft.Minimal(), elfcraft.Section{Name: ".debug_abbrev", Data: []byte{0}},
		elfcraft.Section{Name: ".debug_info", Data: make([]byte, 16), Size: 1 << 40})
	require.NoError(t, err)
	_, path, err := readCrafted(t, b)
	requireLimit(t, err, path, "section .debug_info", "runs past the end of the")
}

// The three cycles of issue 21: each ends with an error naming the
// offsets, never a hang (StripTypedefs) or a stack overflow.
func TestTypeCyclesAreErrorsNamingTheOffset(t *testing.T) {
	for _, tc := range []struct {
		name string
		cu   *elfcraft.DIE
		want string
	}{
		{"self-referential typedef", elfcraft.SelfTypedef(), ": typedef ncclComm at 0x64 -> typedef ncclComm at 0x64 "},
		{"pointer cycle", elfcraft.PointerCycle(), ": pointer at 0x85 -> pointer at 0x7f -> pointer at 0x85 "},
		{"anonymous-member cycle", elfcraft.AnonymousMemberCycle(), ": anonymous struct at 0x7a -> anonymous struct at 0x7a "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := elfcraft.WithDWARF(nil, tc.cu)
			require.NoError(t, err)
			_, path, err := readCrafted(t, b)
			requireLimit(t, err, path, "DWARF type cycle at .debug_info+0x", tc.want)
		})
	}
}

// What compilers write is no cycle: a struct pointing to itself, through
// a typedef too, and pointers to anonymous structs.
func TestPointersToTheStructItselfAreRead(t *testing.T) {
	comm := elfcraft.Struct("ncclComm", 19216)
	td := elfcraft.Typedef("ncclComm_t", comm)
	anon := elfcraft.Struct("", 8)
	toAnon, toComm, toTypedef, integer := elfcraft.Pointer(anon), elfcraft.Pointer(comm), elfcraft.Pointer(td), elfcraft.Base("int", 4)
	anon.Children = []*elfcraft.DIE{elfcraft.Member("back", toAnon, 0)}
	comm.Children = []*elfcraft.DIE{
		elfcraft.Member("next", toComm, 0),
		elfcraft.Member("self", toTypedef, 8),
		elfcraft.Member("anon", anon, 16),
		elfcraft.Member("rank", integer, 17616),
	}
	b, err := elfcraft.WithDWARF(nil, elfcraft.CU(append(elfcraft.RingStageStubs(), comm, td, anon, toAnon, toComm, toTypedef, integer)...))
	require.NoError(t, err)
	defs, _, err := readCrafted(t, b)
	require.NoError(t, err)
	st := defs["ncclComm"].Type
	for path, want := range map[string]string{"next": "struct ncclComm *", "self": "ncclComm_t *", "anon": "struct {...}", "anon.back": "struct {...} *", "rank": "int"} {
		loc, err := LookupField(st, path)
		require.NoError(t, err, path)
		assert.Equal(t, want, CTypeName(loc.Type), path)
	}
	rep := Compare(defs, layout.D3Offsets) // walks every field: must end
	assert.False(t, rep.OK)
}

// A chain of typedefs deeper than MaxTypeDepth is refused; one within it
// is read.
func TestTypedefChainsAreBounded(t *testing.T) {
	b, err := elfcraft.WithDWARF(nil, elfcraft.TypedefChain(MaxTypeDepth-2))
	require.NoError(t, err)
	defs, _, err := readCrafted(t, b)
	require.NoError(t, err)
	assert.Equal(t, int64(19216), defs["ncclComm"].Type.Size())

	b, err = elfcraft.WithDWARF(nil, elfcraft.TypedefChain(5000))
	require.NoError(t, err)
	_, path, err := readCrafted(t, b)
	requireLimit(t, err, path, "DWARF types nest more than 256 deep (MaxTypeDepth)")
}

// Entries nested a million deep without DW_AT_sibling: skipped by a count,
// not a recursion (dwarf.Reader.SkipChildren recurses).
func TestDeeplyNestedEntriesAreSkippedWithoutRecursion(t *testing.T) {
	const depth = 1 << 20
	abbrev := []byte{
		1, 0x11, 1, 0, 0, // 1: compile unit, children
		2, 0x0b, 1, 0, 0, // 2: lexical block, children
		0,
	}
	info := make([]byte, 11, 11+2*depth+2)
	info = append(info, 1)
	for range depth {
		info = append(info, 2)
	}
	for range depth + 1 {
		info = append(info, 0)
	}
	putUnitHeader(info)
	b, err := elfcraft.AddSections(elfcraft.Minimal(), elfcraft.Section{Name: ".debug_abbrev", Data: abbrev}, elfcraft.Section{Name: ".debug_info", Data: info})
	require.NoError(t, err)
	_, _, err = readCrafted(t, b)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no definition of ncclRing, ncclChannel")
}

func putUnitHeader(info []byte) {
	le := func(off int, v uint32, n int) {
		for i := 0; i < n; i++ {
			info[off+i] = byte(v >> (8 * i))
		}
	}
	le(0, uint32(len(info)-4), 4)
	le(4, 4, 2) // DWARF 4
	le(6, 0, 4) // abbrev offset
	info[10] = 8
}

// Units that each name another offset inside one long abbreviation table
// (dwarf.New would parse and keep the rest of the table once per unit),
// too many units, an abbreviation with too many attributes.
func TestWhatDwarfNewWouldParseIsBounded(t *testing.T) {
	t.Run("quadratic abbreviation tables", func(t *testing.T) {
		var abbrev []byte
		for i := 1; i <= 100000; i++ { // codes 1..100000, 3 bytes + tag, children, 0 0
			abbrev = append(abbrev, byte(i|0x80), byte(i>>7|0x80), byte(i>>14), 0x0b, 0, 0, 0)
		}
		abbrev = append(abbrev, 0)
		var info []byte
		for i := 0; i < 100000; i++ {
			u := make([]byte, 11)
			off := uint32(7 * i)
			u[0], u[4], u[10] = 7, 4, 8
			u[6], u[7], u[8], u[9] = byte(off), byte(off>>8), byte(off>>16), byte(off>>24)
			info = append(info, u...)
		}
		b, err := elfcraft.AddSections(elfcraft.Minimal(), elfcraft.Section{Name: ".debug_abbrev", Data: abbrev}, elfcraft.Section{Name: ".debug_info", Data: info})
		require.NoError(t, err)
		_, path, err := readCrafted(t, b)
		requireLimit(t, err, path, "abbreviations (MaxAbbrevs")
	})
	t.Run("too many units", func(t *testing.T) {
		info := make([]byte, 0, 11*(MaxUnits+1))
		for range MaxUnits + 1 {
			info = append(info, 7, 0, 0, 0, 4, 0, 0, 0, 0, 0, 8)
		}
		b, err := elfcraft.AddSections(elfcraft.Minimal(), elfcraft.Section{Name: ".debug_abbrev", Data: []byte{0}}, elfcraft.Section{Name: ".debug_info", Data: info})
		require.NoError(t, err)
		_, path, err := readCrafted(t, b)
		requireLimit(t, err, path, "more than 131072 units (MaxUnits")
	})
	t.Run("entries of attributes that take no bytes", func(t *testing.T) {
		abbrev := []byte{1, 0x11, 1, 0, 0, 2, 0x0b, 0}
		for range 200 {
			abbrev = append(abbrev, 0x3c, 0x19) // DW_AT_declaration, DW_FORM_flag_present
		}
		abbrev = append(abbrev, 0, 0, 0)
		info := make([]byte, 11, 11+1+100000+1)
		info = append(info, 1)
		for range 100000 {
			info = append(info, 2)
		}
		info = append(info, 0)
		putUnitHeader(info)
		b, err := elfcraft.AddSections(elfcraft.Minimal(), elfcraft.Section{Name: ".debug_abbrev", Data: abbrev}, elfcraft.Section{Name: ".debug_info", Data: info})
		require.NoError(t, err)
		_, path, err := readCrafted(t, b)
		requireLimit(t, err, path, ".debug_info decodes to more than 1248602 attributes for its 100013 bytes")
	})
	t.Run("an abbreviation of many attributes", func(t *testing.T) {
		abbrev := []byte{1, 0x11, 0}
		for range MaxAttrsPerAbbrev + 1 {
			abbrev = append(abbrev, 0x3c, 0x19) // DW_AT_declaration, DW_FORM_flag_present
		}
		abbrev = append(abbrev, 0, 0, 0)
		info := []byte{8, 0, 0, 0, 4, 0, 0, 0, 0, 0, 8, 1}
		b, err := elfcraft.AddSections(elfcraft.Minimal(), elfcraft.Section{Name: ".debug_abbrev", Data: abbrev}, elfcraft.Section{Name: ".debug_info", Data: info})
		require.NoError(t, err)
		_, path, err := readCrafted(t, b)
		requireLimit(t, err, path, "has more than 256 attributes (MaxAttrsPerAbbrev)")
	})
}

// A name with a terminal's escape sequence is printed as text, as
// internal/quote prints it; so is one with a C1 control character or a
// bidirectional override, which were printed as themselves (issue 34, F7).
func TestNamesFromTheFileAreQuoted(t *testing.T) {
	assert.Equal(t, "ncclComm", QuoteName("ncclComm"))
	assert.Equal(t, `"\x1b[2Jok"`, QuoteName("\x1b[2Jok"))
	st := &dwarf.StructType{StructName: "evil\x1b]0;x\a", Kind: "struct"}
	assert.Equal(t, `struct "evil\x1b]0;x\x07"`, CTypeName(st))
	assert.Equal(t, `"rank\xc2\x9b2J"`, QuoteName("rank\u009b2J"))
	assert.Equal(t, `"next\xe2\x80\xaetxt.exe\xe2\x81\xa6"`, QuoteName("next\u202etxt.exe\u2066"))
	long := strings.Repeat("n", 201)
	assert.Equal(t, `"`+long+`"`, QuoteName(long))
	assert.Equal(t, strings.Repeat("n", 200), QuoteName(long[:200]))
}

// A deadline that passes is a *LimitError, not a hang.
func TestTheDeadlineStopsTheRead(t *testing.T) {
	b, err := elfcraft.WithDWARF(nil, elfcraft.TypedefChain(10))
	require.NoError(t, err)
	lib, err := Open(writeFile(t, "x.so", b))
	require.NoError(t, err)
	defer lib.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = lib.ReadStructs(ctx, RingStageStructs)
	require.True(t, IsLimit(err), "%v", err)
}

// Not a regular file: refused at once, a FIFO never waited on.
func TestOnlyRegularFilesAreOpened(t *testing.T) {
	dir := t.TempDir()
	_, err := Open(dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is a directory, not a regular file")
	_, err = Open("/dev/zero")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is a character device, not a regular file")
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	_, err = Open(fifo)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is a FIFO, not a regular file")
}
