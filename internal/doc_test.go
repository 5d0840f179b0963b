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
		pkgs, err := parser.ParseDir(fset, dir, func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.ParseComments|parser.PackageClauseOnly)
		if err != nil {
			t.Fatal(err)
		}
		for name, pkg := range pkgs {
			documented := false
			for _, f := range pkg.Files {
				if f.Doc != nil && strings.TrimSpace(f.Doc.Text()) != "" {
					documented = true
				}
			}
			if !documented {
				t.Errorf("package %s (%s) has no doc comment", name, dir)
			}
		}
	}
}
