package doclinks

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	// [text](target): a Markdown link; the target is relative to the file.
	mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	// `docs/....md`: a path written out in backticks, relative to the
	// repository's root.
	docsPath = regexp.MustCompile("`(docs/[^`\\s]*\\.md)`")
	// `TestName`, `TestName/sub` or `FuzzName`: a Go test the text names.
	testName = regexp.MustCompile("`((?:Test|Fuzz)[A-Z][A-Za-z0-9_]*)(?:/[^`]*)?`")
	// `make test-x`, the words perhaps broken over two lines.
	makeTarget = regexp.MustCompile("`make\\s+(test-[a-z-]+)`")
	// A rule of the Makefile: "name:" at the start of a line.
	makeRule = regexp.MustCompile(`(?m)^([a-z][a-z-]*):`)
)

// Every `](path)` and backticked `docs/...md` in README.md and docs/**/*.md
// names an existing file or folder (anchors are not checked).
func TestRelativeLinksResolve(t *testing.T) {
	root := filepath.Join("..", "..")
	files := []string{filepath.Join(root, "README.md")}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name, _ := filepath.Rel(root, f)
		for i, line := range strings.Split(string(b), "\n") {
			var targets []string
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				target, _, _ = strings.Cut(target, "#")
				targets = append(targets, filepath.Join(filepath.Dir(f), target))
			}
			for _, m := range docsPath.FindAllStringSubmatch(line, -1) {
				targets = append(targets, filepath.Join(root, m[1]))
			}
			for _, p := range targets {
				if _, err := os.Stat(p); err != nil {
					rel, _ := filepath.Rel(root, p)
					t.Errorf("%s:%d: %s does not exist", name, i+1, rel)
				}
			}
		}
	}
	if len(files) < 2 {
		t.Errorf("found %d Markdown files, want README.md and docs/", len(files))
	}
}

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
