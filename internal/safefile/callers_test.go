package safefile_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// opens are the calls that open, read or write a file by its name.
var opens = map[string]bool{
	"os.Open": true, "os.OpenFile": true, "os.ReadFile": true, "os.Create": true, "os.WriteFile": true,
	"syscall.Open": true, "syscall.Openat": true, "unix.Open": true, "unix.Openat": true,
	"ioutil.ReadFile": true, "ioutil.WriteFile": true,
}

// allowed are the calls above outside internal/safefile that open no file
// another user could have put in place, each with why.
var allowed = map[string]string{
	// The dump directory, opened component by component relative to a
	// descriptor (ringdump.openDir: O_PATH|O_DIRECTORY|O_NOFOLLOW), and
	// the descriptor of the directory it made, to set its mode.
	"ringdump/ringdump.go: syscall.Open":   `"/" or "." to start the walk from`,
	"ringdump/ringdump.go: syscall.Openat": "a component of the dump directory, or \".\" of one",
	// The kernel's list of this process's mappings.
	"abicheck/mapping.go: os.Open": "/proc/self/maps",
}

// docs/security.md: every file the Go half and the tools read that another
// user could have put in place is opened by internal/safefile, and every
// file the tools write where they are told is written by it. So no code
// of the library or the tools (test files, the test and build helpers
// under tests/ and internal/ aside) opens a file by name itself, but for
// the calls in allowed.
func TestOnlySafefileOpensFiles(t *testing.T) {
	root := filepath.Join("..", "..")
	skip := []string{"tests", "internal/safefile", "internal/mkgodefs", "internal/fuzzseed", "internal/asuser", "internal/elfcraft", "examples"}
	var found []string
	used := map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			for _, s := range skip {
				if rel == s {
					return filepath.SkipDir
				}
			}
			if strings.HasPrefix(d.Name(), ".") && rel != "." || d.Name() == "build" || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			pkg, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			name := pkg.Name + "." + sel.Sel.Name
			if !opens[name] {
				return true
			}
			if _, ok := allowed[rel+": "+name]; ok {
				used[rel+": "+name] = true
			} else {
				found = append(found, fset.Position(call.Pos()).String()+": "+name)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for a := range allowed {
		if !used[a] {
			t.Errorf("allowed names %s, which is no longer called: remove it", a)
		}
	}
	sort.Strings(found)
	for _, f := range found {
		t.Errorf("%s opens a file by name outside internal/safefile (docs/security.md): use safefile.Open, Read or WriteFile, or add it to allowed with the reason", f)
	}
}
