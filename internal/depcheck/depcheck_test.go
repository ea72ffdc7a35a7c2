package depcheck

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/nccomring/libnccomring"

// library is every package of this module that libnccomring.so links,
// named here so that a new one is a decision (a line in this list), not
// something an import drags in. Paths are relative to the module.
var library = []string{
	"cmd/libnccomring",
	"abi",
	"abicheck",
	"internal/quote",
	"internal/safefile",
	"kanga",
	"layout",
	"netdev",
	"nodeorder",
	"record",
	"ring",
	"ringdump",
	"version",
}

// tools are the commands whose packages must stay out of the library.
var tools = []string{"cmd/nccom-rings", "cmd/nccom-abi"}

// pkg is what this test reads of `go list -json`.
type pkg struct {
	Dir          string
	GoFiles      []string
	CgoFiles     []string
	TestGoFiles  []string
	XTestGoFiles []string
	ImportPath   string
	Imports      []string
	Deps         []string
	TestImports  []string
	XTestImports []string
}

// listModule is every package of the module, as `go list -json ./...`
// prints them, by path relative to the module. `go list` is the go
// command's own answer to what a build links (Deps is the transitive,
// non-test closure), so the test cannot disagree with the linker the way a
// hand-written import scan could (build tags, cgo files).
func listModule(t *testing.T) map[string]pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = "../.."
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("go list -json ./...: %v\n%s", err, errOut.String())
	}
	pkgs := map[string]pkg{}
	for dec := json.NewDecoder(&out); ; {
		var p pkg
		err := dec.Decode(&p)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("go list -json ./...: %v", err)
		}
		if rel, ok := inModule(p.ImportPath); ok {
			pkgs[rel] = p
			statSources(p)
		}
	}
	return pkgs
}

// statSources stats every Go file of p. The go command caches a test's
// result keyed by the files the test itself opened or stat'ed, and `go
// list` runs in a process of its own: without this, an import added to
// ring/ would leave `go test ./internal/depcheck` passing from the cache.
func statSources(p pkg) {
	for _, files := range [][]string{p.GoFiles, p.CgoFiles, p.TestGoFiles, p.XTestGoFiles} {
		for _, f := range files {
			os.Stat(filepath.Join(p.Dir, f)) // only to be recorded; an error is go list's to report
		}
	}
}

// inModule is path relative to the module, and whether it is in it.
func inModule(path string) (string, bool) {
	if path == module {
		return ".", true
	}
	return strings.CutPrefix(path, module+"/")
}

// toolOnly is every package a tool links that the library does not: the
// tools' own and what only they use (internal/cli, internal/junit).
// Derived from the tools' dependencies, so a new tool package is covered
// without a change here.
func toolOnly(t *testing.T, pkgs map[string]pkg) map[string]bool {
	t.Helper()
	only := map[string]bool{}
	for _, tool := range tools {
		p, ok := pkgs[tool]
		if !ok {
			t.Fatalf("go list did not list the tool %s", tool)
		}
		for _, d := range append([]string{p.ImportPath}, p.Deps...) {
			if rel, ok := inModule(d); ok && !slices.Contains(library, rel) {
				only[rel] = true
			}
		}
	}
	for rel := range pkgs {
		if strings.HasPrefix(rel+"/", "cmd/") && rel != "cmd/libnccomring" {
			only[rel] = true
		}
	}
	return only
}

// The library links exactly the packages library names: no tool package
// and no package of this module that is not on the list.
func TestTheLibraryLinksOnlyLibraryPackages(t *testing.T) {
	pkgs := listModule(t)
	lib, ok := pkgs["cmd/libnccomring"]
	if !ok {
		t.Fatal("go list did not list cmd/libnccomring")
	}
	only := toolOnly(t, pkgs)
	linked := map[string]bool{"cmd/libnccomring": true}
	for _, d := range lib.Deps {
		rel, ok := inModule(d)
		if !ok {
			continue
		}
		linked[rel] = true
		switch {
		case only[rel]:
			t.Errorf("libnccomring.so links the tool package %s (imported by %s)", rel, importers(pkgs, lib, d))
		case !slices.Contains(library, rel):
			t.Errorf("libnccomring.so links %s (imported by %s), which is not on depcheck's list of library packages: add it there if the library needs it", rel, importers(pkgs, lib, d))
		}
	}
	for _, rel := range library {
		if !linked[rel] {
			t.Errorf("%s is on depcheck's list of library packages but libnccomring.so does not link it: take it off the list", rel)
		}
	}
}

// importers names the packages of lib's closure that import path, to say
// where a stray dependency came in.
func importers(pkgs map[string]pkg, lib pkg, path string) string {
	var by []string
	for _, d := range append([]string{lib.ImportPath}, lib.Deps...) {
		rel, ok := inModule(d)
		if !ok {
			continue
		}
		if slices.Contains(pkgs[rel].Imports, path) {
			by = append(by, rel)
		}
	}
	return strings.Join(by, ", ")
}

// No library package imports a tool package, directly or through another
// package, nor do its tests: a library test that needs a tool's code is a
// test of the tool.
func TestNoLibraryPackageImportsAToolPackage(t *testing.T) {
	pkgs := listModule(t)
	only := toolOnly(t, pkgs)
	for _, rel := range library {
		p, ok := pkgs[rel]
		if !ok {
			t.Errorf("go list did not list the library package %s", rel)
			continue
		}
		for _, c := range []struct {
			what  string
			paths []string
		}{
			{"imports", p.Imports},
			{"depends on", p.Deps},
			{"has tests that import", p.TestImports},
			{"has xtests that import", p.XTestImports},
		} {
			for _, d := range c.paths {
				if dep, ok := inModule(d); ok && only[dep] {
					t.Errorf("library package %s %s the tool package %s", rel, c.what, dep)
				}
			}
		}
	}
}

// The built library holds no symbol of a tool package: the check on what
// was linked, beside the go command's word on what would be. Skipped
// without LIBNCCOMRING (make test-go sets it to build/libnccomring.so).
func TestTheBuiltLibraryHoldsNoToolSymbol(t *testing.T) {
	path := os.Getenv("LIBNCCOMRING")
	if path == "" {
		t.Skip("LIBNCCOMRING is not set (make test-go sets it)")
	}
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatalf("%s: %v (a stripped library cannot be checked)", path, err)
	}
	only := toolOnly(t, listModule(t))
	for rel := range only {
		// A package's symbols are named PKGPATH.NAME; the dot keeps
		// cmd/nccom-rings from matching cmd/nccom-rings/score's.
		prefix := module + "/" + rel + "."
		for _, s := range syms {
			if strings.HasPrefix(s.Name, prefix) {
				t.Errorf("%s holds symbols of the tool package %s, e.g. %s", path, rel, s.Name)
				break
			}
		}
	}
}

// A package at the repository root is the library's: one that only a tool
// uses lives under that tool (cmd/nccom-rings/location, ...), so the root
// shows what libnccomring.so is made of (issue 35).
func TestEveryRootPackageIsTheLibrarys(t *testing.T) {
	for rel := range listModule(t) {
		if !strings.Contains(rel, "/") && !slices.Contains(library, rel) {
			t.Errorf("%s sits at the repository root but libnccomring.so does not link it: move it under the tool that uses it", rel)
		}
	}
}
