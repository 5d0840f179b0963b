package internal_test

import (
	"go/ast"
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

// devOnly are the developers' notes beside the repository: users do not
// have them, so nothing a user reads may cite them.
var devOnly = []string{"DOMAIN.md", "DESIGN.md"}

// TestUsersHaveTheSources: no doc, no README and no string in the
// program (a finding's source, a message, a help text) names the
// developers' notes; docs/sources.md and public material stand in their
// place. Comments and tests may.
func TestUsersHaveTheSources(t *testing.T) {
	pages := []string{"../README.md"}
	filepath.WalkDir("../docs", func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".md") || strings.HasSuffix(p, ".1")) {
			pages = append(pages, p)
		}
		return nil
	})
	if len(pages) < 10 {
		t.Fatalf("only %d pages found", len(pages))
	}
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range devOnly {
			if i := strings.Index(string(b), n); i >= 0 {
				t.Errorf("%s names %s: %q", p, n, string(b)[max(0, i-60):i+len(n)])
			}
		}
	}
	fset := token.NewFileSet()
	files := 0
	for _, top := range []string{".", "../cmd"} {
		filepath.WalkDir(top, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") || strings.Contains(p, "testdata") {
				return nil
			}
			f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			files++
			ast.Inspect(f, func(n ast.Node) bool {
				if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					for _, dev := range devOnly {
						if strings.Contains(lit.Value, dev) {
							t.Errorf("%s: a string names %s: %s", fset.Position(lit.Pos()), dev, lit.Value)
						}
					}
				}
				return true
			})
			return nil
		})
	}
	if files < 100 {
		t.Fatalf("only %d Go files read", files)
	}
}
