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
