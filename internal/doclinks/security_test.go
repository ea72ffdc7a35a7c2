package doclinks

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	// `TestName`, `TestName/sub` or `FuzzName`: a Go test the text names.
	testName = regexp.MustCompile("`((?:Test|Fuzz)[A-Z][A-Za-z0-9_]*)(?:/[^`]*)?`")
	// `make test-x`, the words perhaps broken over two lines.
	makeTarget = regexp.MustCompile("`make\\s+(test-[a-z-]+)`")
	// A rule of the Makefile: "name:" at the start of a line.
	makeRule = regexp.MustCompile(`(?m)^([a-z][a-z-]*):`)
)

// Every Go test and make target docs/security.md names exists: a test
// renamed or removed leaves a promise that names no test.
func TestSecurityDocNamesExistingTests(t *testing.T) {
	root := filepath.Join("..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "docs", "security.md"))
	if err != nil {
		t.Fatal(err)
	}
	funcs := map[string]bool{}
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "build" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && p != root) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, line := range strings.Split(string(b), "\n") {
			if name, ok := strings.CutPrefix(line, "func "); ok {
				if i := strings.IndexByte(name, '('); i > 0 {
					funcs[name[:i]] = true
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := testName.FindAllStringSubmatch(string(doc), -1)
	if len(tests) < 20 {
		t.Errorf("docs/security.md names %d tests: the pattern no longer finds them", len(tests))
	}
	for _, m := range tests {
		if !funcs[m[1]] {
			t.Errorf("docs/security.md names %s, which no _test.go file defines", m[1])
		}
	}
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	rules := map[string]bool{}
	for _, m := range makeRule.FindAllStringSubmatch(string(mk), -1) {
		rules[m[1]] = true
	}
	for _, m := range makeTarget.FindAllStringSubmatch(string(doc), -1) {
		if !rules[m[1]] {
			t.Errorf("docs/security.md names make %s, which the Makefile has no rule for", m[1])
		}
	}
}
