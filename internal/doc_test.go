package internal_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPackagesHaveDocComments keeps every package self-describing: at least
// one non-test file of each package carries a "// Package x ..." comment.
func TestPackagesHaveDocComments(t *testing.T) {
	dirs := map[string]bool{}
	for _, top := range []string{".", "../cmd"} {
		filepath.WalkDir(top, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") && !strings.Contains(p, "testdata") {
				dirs[filepath.Dir(p)] = true
			}
			return nil
		})
	}
	if len(dirs) == 0 {
		t.Fatal("no packages found")
	}
	fset := token.NewFileSet()
	for dir := range dirs {
		// Each non-test file's package clause and doc comment; a directory
		// holds one package (plus its _test package, skipped here).
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		name, documented := "", false
		for _, p := range files {
			if strings.HasSuffix(p, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, p, nil, parser.ParseComments|parser.PackageClauseOnly)
			if err != nil {
				t.Fatal(err)
			}
			name = f.Name.Name
			if f.Doc != nil && strings.TrimSpace(f.Doc.Text()) != "" {
				documented = true
			}
		}
		if name != "" && !documented {
			t.Errorf("package %s (%s) has no doc comment", name, dir)
		}
	}
}
