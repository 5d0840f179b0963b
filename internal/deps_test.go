package internal_test

import (
	"os"
	"os/exec"
	"path"
	"strings"
	"testing"
)

// testOnly reads docs/development.md's package table and returns the
// packages whose "used by" column says only tests use them.
func testOnly(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile("../docs/development.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(b), "| package | what it is for | used by |")
	only := map[string]bool{}
	for _, line := range strings.Split(rest, "\n")[2:] {
		if !strings.HasPrefix(line, "| ") {
			break
		}
		cols := strings.Split(line, " | ")
		usedBy := strings.TrimSuffix(strings.TrimSpace(cols[len(cols)-1]), "|")
		if !strings.HasPrefix(strings.TrimSpace(usedBy), "tests of") {
			continue
		}
		for _, f := range strings.Split(strings.TrimPrefix(cols[0], "| "), "`") {
			if f = strings.TrimSpace(f); f != "" && f != "," {
				only[f] = true
			}
		}
	}
	if len(only) == 0 {
		t.Fatal("docs/development.md's package table names no test-only package")
	}
	return only
}

// TestBinaryLeavesOutTestPackages: the interlink binary links no package
// that only tests need: none whose name ends in "test" (the test helpers'
// naming) and none that docs/development.md says only tests use; and each
// of those is named ...test.
func TestBinaryLeavesOutTestPackages(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "../cmd/interlink").Output()
	if err != nil {
		t.Fatalf("go list -deps ../cmd/interlink: %v", err)
	}
	const mod = "github.com/interlink/interlink/internal/"
	only := testOnly(t)
	n := 0
	for _, p := range strings.Fields(string(out)) {
		rel, ok := strings.CutPrefix(p, mod)
		if !ok {
			continue
		}
		n++
		if strings.HasSuffix(path.Base(rel), "test") || only[rel] {
			t.Errorf("cmd/interlink depends on %s, which only tests should use", p)
		}
	}
	for p := range only {
		if !strings.HasSuffix(path.Base(p), "test") {
			t.Errorf("%s is used by tests only (docs/development.md) but not named ...test, as test helpers are", p)
		}
	}
	if n < 20 {
		t.Fatalf("go list found only %d interlink packages under cmd/interlink", n)
	}
}
