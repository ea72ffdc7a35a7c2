// Command mkhostile writes issue 21's crafted ELF files into DIR, for
// `make test-abi-tool` and `make test-abi-check`:
//
//	go run ./internal/elfcraft/mkhostile [-base LIB] DIR
//
// With -base, each file is LIB (a shared object, e.g. a stand-in libnccom
// built without -g and SONAME libnccom.so.2) with the crafted sections
// added, so that a host can load it; without, a minimal ELF file. It
// prints the names it wrote, one a line.
package main

import (
	"debug/elf"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/nccomring/libnccomring/internal/elfcraft"
)

// cases are the files, by name: the compressed-section bombs (each
// really expands to what it declares, or to expands bytes) and the three
// DWARF type cycles.
var cases = []struct {
	name string
	make func(base []byte) ([]byte, error)
}{
	{"zstd-2g", func(b []byte) ([]byte, error) { return elfcraft.Bomb(b, elf.COMPRESS_ZSTD, 2<<30, 2<<30, false) }},
	{"zstd-64g", func(b []byte) ([]byte, error) { return elfcraft.Bomb(b, elf.COMPRESS_ZSTD, 64<<30, 64<<30, false) }},
	{"zlib-64g", func(b []byte) ([]byte, error) { return elfcraft.Bomb(b, elf.COMPRESS_ZLIB, 64<<30, 64<<20, false) }},
	{"zdebug-64g", func(b []byte) ([]byte, error) { return elfcraft.Bomb(b, elf.COMPRESS_ZLIB, 64<<30, 64<<20, true) }},
	{"typedef-self", func(b []byte) ([]byte, error) { return elfcraft.WithDWARF(b, elfcraft.SelfTypedef()) }},
	{"pointer-cycle", func(b []byte) ([]byte, error) { return elfcraft.WithDWARF(b, elfcraft.PointerCycle()) }},
	{"anon-cycle", func(b []byte) ([]byte, error) { return elfcraft.WithDWARF(b, elfcraft.AnonymousMemberCycle()) }},
}

func main() {
	base := flag.String("base", "", "a shared object to add the sections to")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: mkhostile [-base LIB] DIR")
		os.Exit(2)
	}
	dir := flag.Arg(0)
	var b []byte
	if *base != "" {
		var err error
		if b, err = os.ReadFile(*base); err != nil {
			fmt.Fprintln(os.Stderr, "mkhostile:", err)
			os.Exit(1)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "mkhostile:", err)
		os.Exit(1)
	}
	for _, c := range cases {
		out, err := c.make(b)
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, c.name+".so"), out, 0o755)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "mkhostile: %s: %v\n", c.name, err)
			os.Exit(1)
		}
		fmt.Println(c.name + ".so")
	}
}
