package gc

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

func loadReport(t *testing.T, name string) *Report {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

// The text of a saved lab run (3 nodes, jumbo), and of the same run with
// every section a fault adds (unreachable nodes, losses by stage, limits,
// interrupted), is the golden files'.
func TestWriteTextGolden(t *testing.T) {
	for _, name := range []string{"lab-gc", "lab-gc-faults"} {
		r := loadReport(t, name+".json")
		var b bytes.Buffer
		if err := WriteHeader(&b, r.Spec, len(r.Nodes)); err != nil {
			t.Fatal(err)
		}
		if err := r.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		golden := "testdata/" + name + ".txt"
		if *update {
			if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		if b.String() != string(want) {
			t.Errorf("text differs from %s (go test -run TestWriteTextGolden -update to accept):\n%s", golden, b.String())
		}
	}
}

// failAfter accepts n bytes, then fails every write; late counts the
// writes that came after the first failure.
type failAfter struct {
	n      int
	failed bool
	late   int
}

var errFull = errors.New("no space left on device")

func (f *failAfter) Write(p []byte) (int, error) {
	if f.failed {
		f.late++
		return 0, errFull
	}
	if len(p) > f.n {
		f.failed = true
		return f.n, errFull
	}
	f.n -= len(p)
	return len(p), nil
}

// A write that fails mid-report is the report's error, and nothing more is
// written after it.
func TestWriteTextWriteError(t *testing.T) {
	r := loadReport(t, "lab-gc.json")
	for _, n := range []int{0, 100, 2000} {
		f := &failAfter{n: n}
		if err := r.WriteText(f); !errors.Is(err, errFull) || !f.failed || f.late != 0 {
			t.Errorf("failing after %d bytes: %v, %d writes after the failure", n, err, f.late)
		}
	}
	if err := WriteHeader(&failAfter{}, Spec{}, 3); !errors.Is(err, errFull) {
		t.Errorf("header: %v", err)
	}
}
