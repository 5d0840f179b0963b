package kernel

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocsTable keeps docs/kernels.md exact: every facility of the table
// here has its row there with the same name (backticks aside) and the same
// kernel, and every test the page names as proof exists in the tree.
func TestDocsTable(t *testing.T) {
	b, err := os.ReadFile("../../docs/kernels.md")
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	rows := map[string]string{} // name -> added in
	for _, l := range strings.Split(page, "\n") {
		cells := strings.Split(l, "|")
		if len(cells) < 7 { // | facility | where | added in | without | test |
			continue
		}
		rows[strings.ReplaceAll(strings.TrimSpace(cells[1]), "`", "")] = strings.TrimSpace(cells[3])
	}
	for _, f := range Facilities {
		since, ok := rows[f.Name]
		switch {
		case !ok:
			t.Errorf("docs/kernels.md has no row for %q", f.Name)
		case since != f.Since.String():
			t.Errorf("docs/kernels.md: %s added in %q, the table here says %s", f.Name, since, f.Since)
		}
	}
	defined := map[string]bool{}
	decl := regexp.MustCompile(`(?m)^func (Test\w+)\(`)
	err = filepath.WalkDir("../..", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return err
		}
		src, err := os.ReadFile(p)
		for _, m := range decl.FindAllStringSubmatch(string(src), -1) {
			defined[m[1]] = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	named := regexp.MustCompile("`(Test\\w+)`").FindAllStringSubmatch(page, -1)
	if len(named) < 10 {
		t.Fatalf("docs/kernels.md names %d tests: has its form changed?", len(named))
	}
	for _, m := range named {
		if !defined[m[1]] {
			t.Errorf("docs/kernels.md names %s, which no test file defines", m[1])
		}
	}
}
