package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func open(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func rec(cmd, host string, labels map[string]string, at time.Time) *Record {
	return &Record{Time: at, Host: host, Command: cmd, Schema: "interlink." + cmd + "/v1", Args: []string{cmd, "--json"},
		Labels: labels, Summary: "ok", Doc: json.RawMessage(`{"schema":"interlink.` + cmd + `/v1"}`)}
}

func TestSaveListFilter(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "sub", "history.db"))
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	for i, r := range []*Record{
		rec("mesh", "a", map[string]string{"site": "x"}, t0),
		rec("bench", "a", map[string]string{"site": "x", "mode": "blocks"}, t0.Add(time.Hour)),
		rec("mesh", "b", nil, t0.Add(2*time.Hour)),
		rec("mesh", "a", map[string]string{"site": "y"}, t0.Add(3*time.Hour)),
	} {
		if err := s.Save(r); err != nil || r.ID != int64(i+1) {
			t.Fatalf("save %d: id %d, %v", i, r.ID, err)
		}
	}
	ids := func(f Filter) []int64 {
		rs, err := s.List(f)
		if err != nil {
			t.Fatal(err)
		}
		var out []int64
		for _, r := range rs {
			out = append(out, r.ID)
		}
		return out
	}
	for _, tc := range []struct {
		f    Filter
		want string
	}{
		{Filter{}, "[4 3 2 1]"},
		{Filter{Command: "mesh"}, "[4 3 1]"},
		{Filter{Since: t0.Add(90 * time.Minute)}, "[4 3]"},
		{Filter{Labels: map[string]string{"site": "x"}}, "[2 1]"},
		{Filter{Labels: map[string]string{"site": "x", "mode": "blocks"}}, "[2]"},
		{Filter{Command: "mesh", Limit: 1}, "[4]"},
	} {
		if got := fmt.Sprint(ids(tc.f)); got != tc.want {
			t.Errorf("%+v: %s, want %s", tc.f, got, tc.want)
		}
	}
	last, err := s.Get(4)
	if err != nil || last.Labels["site"] != "y" || !last.Time.Equal(t0.Add(3*time.Hour)) || string(last.Doc) != `{"schema":"interlink.mesh/v1"}` || last.Args[1] != "--json" {
		t.Fatalf("get 4: %+v %v", last, err)
	}
	prev, err := s.Previous(last)
	if err != nil || prev.ID != 1 {
		t.Errorf("previous mesh on host a before 4: %+v %v (want 1: 3 ran on host b)", prev, err)
	}
	if _, err := s.Previous(prev); !errors.Is(err, ErrNotFound) {
		t.Errorf("previous of the first: %v", err)
	}
	if _, err := s.Get(99); !errors.Is(err, ErrNotFound) {
		t.Errorf("get 99: %v", err)
	}
}

func TestBaselineNameMoves(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "h.db"))
	a, b := rec("mesh", "h", nil, time.Now()), rec("mesh", "h", nil, time.Now())
	a.Name, b.Name = "known-good", "known-good"
	if err := s.Save(a); err != nil {
		t.Fatal(err)
	}
	if r, err := s.ByName("known-good"); err != nil || r.ID != a.ID {
		t.Fatalf("by name: %+v %v", r, err)
	}
	if err := s.Save(b); err != nil {
		t.Fatal(err)
	}
	if r, err := s.ByName("known-good"); err != nil || r.ID != b.ID {
		t.Errorf("the name did not move to the newer result: %+v %v", r, err)
	}
	if r, _ := s.Get(a.ID); r.Name != "" {
		t.Errorf("the older result kept the name %q", r.Name)
	}
}

// TestConcurrentWriters: several processes save at once into one file;
// every result is there afterwards, each once.
func TestConcurrentWriters(t *testing.T) {
	if os.Getenv("STORE_TEST_WRITER") != "" {
		return
	}
	path := filepath.Join(t.TempDir(), "h.db")
	const procs, each = 4, 25
	var wg sync.WaitGroup
	errs := make(chan error, procs)
	for p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^TestWriterProcess$", "-test.count=1")
			cmd.Env = append(os.Environ(), "STORE_TEST_WRITER="+strconv.Itoa(p), "STORE_TEST_DB="+path, "STORE_TEST_N="+strconv.Itoa(each))
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("writer %d: %v\n%s", p, err, out)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	s := open(t, path)
	rs, err := s.List(Filter{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range rs {
		seen[r.Host+"/"+r.Labels["n"]] = true
	}
	if len(rs) != procs*each || len(seen) != procs*each {
		t.Errorf("%d results (%d distinct), want %d", len(rs), len(seen), procs*each)
	}
}

// TestWriterProcess is one writer of TestConcurrentWriters (it does
// nothing when run on its own).
func TestWriterProcess(t *testing.T) {
	w := os.Getenv("STORE_TEST_WRITER")
	if w == "" {
		t.Skip("a helper of TestConcurrentWriters")
	}
	n, _ := strconv.Atoi(os.Getenv("STORE_TEST_N"))
	for i := range n {
		// Each save opens the file anew, as separate interlink runs do.
		s, err := Open(os.Getenv("STORE_TEST_DB"))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Save(rec("mesh", "writer"+w, map[string]string{"n": strconv.Itoa(i)}, time.Now())); err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
}

// TestNotHistory: a corrupt file and another program's database are
// refused with ErrNotHistory and left byte for byte as they were.
func TestNotHistory(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.db")
	s := open(t, good)
	if err := s.Save(rec("mesh", "h", nil, time.Now())); err != nil {
		t.Fatal(err)
	}
	s.Close()
	data, _ := os.ReadFile(good)

	corrupt := filepath.Join(dir, "corrupt.db")
	bad := bytes.Clone(data)
	copy(bad[:16], "garbage garbage!") // the header: no longer SQLite
	garbage := filepath.Join(dir, "garbage.db")
	other := filepath.Join(dir, "other.db")
	for name, content := range map[string][]byte{corrupt: bad, garbage: bytes.Repeat([]byte("interlink "), 500)} {
		if err := os.WriteFile(name, content, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	o := open(t, other) // another program's: a table of its own, no application id
	if _, err := o.db.Exec("PRAGMA application_id = 7; CREATE TABLE theirs (x)"); err != nil {
		t.Fatal(err)
	}
	o.Close()
	for _, p := range []string{corrupt, garbage, other} {
		before, _ := os.ReadFile(p)
		_, err := Open(p)
		if !errors.Is(err, ErrNotHistory) {
			t.Errorf("%s: %v, want ErrNotHistory", filepath.Base(p), err)
		}
		after, _ := os.ReadFile(p)
		if sha256.Sum256(before) != sha256.Sum256(after) {
			t.Errorf("%s was changed by a failed open", filepath.Base(p))
		}
	}
}

// TestOpenReadChangesNothing: reading a history that is not there, or an
// empty file, finds nothing and creates nothing; Check creates nothing
// either and names what stands in the way.
func TestOpenReadChangesNothing(t *testing.T) {
	dir := t.TempDir()
	absent := filepath.Join(dir, "a", "b", "history.db")
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{absent, empty} {
		s, err := OpenRead(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if rs, err := s.List(Filter{}); err != nil || len(rs) != 0 {
			t.Errorf("%s: List %v %v", p, rs, err)
		}
		if _, err := s.Latest(""); !IsNotFound(err) {
			t.Errorf("%s: Latest: %v", p, err)
		}
		if _, err := s.ByName("x"); !IsNotFound(err) {
			t.Errorf("%s: ByName: %v", p, err)
		}
		if err := s.Save(rec("mesh", "h", nil, time.Now())); err == nil {
			t.Errorf("%s: Save on a history opened to read", p)
		}
		if err := Check(p); err != nil {
			t.Errorf("Check(%s): %v", p, err)
		}
		s.Close()
	}
	// A history with results reads as it is.
	good := filepath.Join(dir, "good.db")
	s := open(t, good)
	if err := s.Save(rec("mesh", "h", nil, time.Now())); err != nil {
		t.Fatal(err)
	}
	s.Close()
	r, err := OpenRead(good)
	if err != nil {
		t.Fatal(err)
	}
	if rs, err := r.List(Filter{}); err != nil || len(rs) != 1 {
		t.Errorf("good: List %v %v", rs, err)
	}
	r.Close()
	if err := Check(good); err != nil {
		t.Errorf("Check(good): %v", err)
	}
	// A file where a directory should be.
	if err := Check(filepath.Join(empty, "history.db")); err == nil || !strings.Contains(err.Error(), empty+" is not a directory") {
		t.Errorf("Check under a file: %v", err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Errorf("%d entries in %s, want the two files: %v", len(ents), dir, ents)
	}
	if fi, _ := os.Stat(empty); fi.Size() != 0 {
		t.Errorf("the empty file holds %d bytes", fi.Size())
	}
}
