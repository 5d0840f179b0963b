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

// designMap is the packages DESIGN.md section 2 (its architecture map)
// names; docs/development.md lists every other one. (DESIGN.md lives
// beside the repository, not in it, so its map is copied here.)
var designMap = []string{"cli", "inventory", "rules", "wire", "agent", "pmtu", "traffic", "counters", "mesh", "lab",
	"report", "stats", "ab", "lab/service", "db", "storage", "nfs", "gate", "storm", "store", "fleet", "metrics"}

// TestDevelopmentListsPackages: every package under internal/ (test-only
// ones too) is in DESIGN.md's map or has a row in the package table of
// docs/development.md, and every row names a package that exists.
func TestDevelopmentListsPackages(t *testing.T) {
	pkgs := map[string]bool{}
	filepath.WalkDir(".", func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".go") && !strings.Contains(p, "testdata") && filepath.Dir(p) != "." {
			pkgs[filepath.ToSlash(filepath.Dir(p))] = true
		}
		return nil
	})
	b, err := os.ReadFile("../docs/development.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(b), "| package | what it is for | used by |")
	listed := map[string]bool{}
	for _, line := range strings.Split(rest, "\n")[2:] {
		if !strings.HasPrefix(line, "| ") {
			break
		}
		first, _, _ := strings.Cut(strings.TrimPrefix(line, "| "), " | ")
		for _, f := range strings.Split(first, "`") {
			if f = strings.TrimSpace(f); f != "" && f != "," {
				listed[f] = true
			}
		}
	}
	if len(listed) == 0 {
		t.Fatal("docs/development.md has no package table")
	}
	inMap := map[string]bool{}
	for _, p := range designMap {
		inMap[p] = true
	}
	for p := range pkgs {
		if !inMap[p] && !listed[p] {
			t.Errorf("internal/%s is neither in DESIGN.md's map nor in docs/development.md's package table", p)
		}
	}
	for p := range listed {
		if !pkgs[p] {
			t.Errorf("docs/development.md lists %s, which is no package under internal/", p)
		}
		if inMap[p] {
			t.Errorf("docs/development.md lists %s, which DESIGN.md's map names", p)
		}
	}
}
