package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/interlink/interlink/internal/readfile"
)

// record swaps the seam for one that logs each operation and then does it
// for real, and returns the log.
func record(t *testing.T) *[]string {
	t.Helper()
	var log []string
	real := osOps
	fs = ops{
		create: func(dir, pattern, fixed string) (*os.File, error) {
			log = append(log, "create")
			return real.create(dir, pattern, fixed)
		},
		chmod: func(f *os.File, m os.FileMode) error { log = append(log, "chmod"); return real.chmod(f, m) },
		sync:  func(f *os.File) error { log = append(log, "sync"); return real.sync(f) },
		close: func(f *os.File) error { log = append(log, "close"); return real.close(f) },
		rename: func(a, b string) error {
			log = append(log, "rename")
			return real.rename(a, b)
		},
		syncDir: func(d string) error { log = append(log, "syncdir"); return real.syncDir(d) },
		remove:  func(n string) error { log = append(log, "remove"); return real.remove(n) },
	}
	t.Cleanup(func() { fs = osOps })
	return &log
}

// leftovers lists what is in dir besides the names given.
func leftovers(t *testing.T, dir string, keep ...string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
next:
	for _, e := range ents {
		for _, k := range keep {
			if e.Name() == k {
				continue next
			}
		}
		out = append(out, e.Name())
	}
	return out
}

// TestMode: the file gets the mode asked for, whatever the umask and
// os.CreateTemp's 0600 (a bundle fetched by cluster stayed 0600).
func TestMode(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	dir := t.TempDir()
	for _, c := range []struct {
		opt  Options
		want os.FileMode
	}{{Options{}, 0o644}, {Options{Mode: 0o644}, 0o644}, {Options{Mode: 0o600}, 0o600}, {Options{Mode: 0o640, Temp: "x.tmp"}, 0o640}} {
		path := filepath.Join(dir, "bundle.tar.gz")
		if err := WriteFile(path, []byte("data"), c.opt); err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != c.want {
			t.Errorf("%+v: mode %v, want %v", c.opt, st.Mode().Perm(), c.want)
		}
	}
	if got := leftovers(t, dir, "bundle.tar.gz"); len(got) != 0 {
		t.Errorf("left behind: %v", got)
	}
}

// TestOrder: the data reaches the disk before the rename, and the
// directory after it; the content replaces the old file whole.
func TestOrder(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	log := record(t)
	if err := WriteFile(path, []byte("new content"), Options{}); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(*log, " "), "create chmod sync close rename syncdir"; got != want {
		t.Errorf("operations %q, want %q", got, want)
	}
	if b, _ := os.ReadFile(path); string(b) != "new content" {
		t.Errorf("content %q", b)
	}
}

// TestFailure: a failing writer, a failing hook and an impossible rename
// leave the old file as it was and no temporary file, and say why.
func TestFailure(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.html")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	for name, c := range map[string]struct {
		opt   Options
		write func(io.Writer) error
		want  string
	}{
		"writer": {Options{}, func(w io.Writer) error { io.WriteString(w, "half"); return boom }, "remove"},
		"hook":   {Options{Temp: "report.html.tmp", BeforeRename: func() error { return boom }}, func(w io.Writer) error { return nil }, "remove"},
	} {
		log := record(t)
		err := Write(path, c.opt, c.write)
		if !errors.Is(err, boom) {
			t.Errorf("%s: %v", name, err)
		}
		if ops := *log; ops[len(ops)-1] != c.want || strings.Contains(strings.Join(ops, " "), "rename") {
			t.Errorf("%s: operations %v", name, ops)
		}
		if b, _ := os.ReadFile(path); string(b) != "old" {
			t.Errorf("%s: target now %q", name, b)
		}
		if got := leftovers(t, dir, "report.html"); len(got) != 0 {
			t.Errorf("%s: left behind %v", name, got)
		}
	}
	// A directory where the file should go: the rename fails, one line.
	target := filepath.Join(dir, "sub")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(target, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := WriteFile(target, []byte("x"), Options{})
	if err == nil || strings.Count(err.Error(), target) != 1 {
		t.Errorf("rename over a directory: %v", err)
	}
	if got := leftovers(t, dir, "report.html", "sub"); len(got) != 0 {
		t.Errorf("left behind %v", got)
	}
	// A directory that does not exist: nothing to clean, the error names it.
	err = WriteFile(filepath.Join(dir, "no", "such"), []byte("x"), Options{})
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "no")) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing directory: %v", err)
	}
}

// TestNotRegular: a named pipe, a device or a link to one is never
// renamed over (as root, /dev/null became a regular file), nothing is
// written beside it, and the error names it.
func TestNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "null")
	if err := os.Symlink(os.DevNull, link); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{fifo, link} {
		log := record(t)
		err := WriteFile(target, []byte("x"), Options{})
		if !errors.Is(err, readfile.ErrNotRegular) || !strings.Contains(err.Error(), target) {
			t.Errorf("%s: %v", target, err)
		}
		if len(*log) != 0 {
			t.Errorf("%s: operations %v, want none", target, *log)
		}
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the pipe is now %v (%v)", fi.Mode(), err)
	}
	if fi, err := os.Stat(os.DevNull); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Errorf("%s is now %v (%v)", os.DevNull, fi.Mode(), err)
	}
	if got := leftovers(t, dir, "pipe", "null"); len(got) != 0 {
		t.Errorf("left behind %v", got)
	}
	// A pipe that takes the name while the file is written is not
	// replaced either.
	path := filepath.Join(dir, "late")
	err := Write(path, Options{BeforeRename: func() error { return syscall.Mkfifo(path, 0o644) }}, func(w io.Writer) error { return nil })
	if !errors.Is(err, readfile.ErrNotRegular) {
		t.Errorf("late pipe: %v", err)
	}
	if got := leftovers(t, dir, "pipe", "null", "late"); len(got) != 0 {
		t.Errorf("left behind %v", got)
	}
}

// TestThroughLink: a link to a regular file (as /dev/stdout is when the
// output is redirected to a file) is written through: the file it names
// gets the content, beside it, and the link stays a link. The rename
// replaced the link itself and left the file as it was.
func TestThroughLink(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	file := filepath.Join(other, "real.html")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "out.html")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(link, []byte("new"), Options{}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link is now %v (%v)", fi.Mode(), err)
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "new" {
		t.Errorf("%s holds %q (%v), want new", file, b, err)
	}
	if got := leftovers(t, dir, "out.html"); len(got) != 0 {
		t.Errorf("left behind %v", got)
	}
	if got := leftovers(t, other, "real.html"); len(got) != 0 {
		t.Errorf("left behind %v", got)
	}
}

// TestTempLinkNotFollowed: a link planted under the fixed temporary name
// (as whoever can write the directory could) is replaced, never written
// through: what it points at keeps its content, and the target gets the
// new one.
func TestTempLinkNotFollowed(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	victim := filepath.Join(other, "victim")
	os.WriteFile(victim, []byte("keep"), 0o644)
	os.Symlink(victim, filepath.Join(dir, "out.json.tmp"))
	target := filepath.Join(dir, "out.json")
	if err := WriteFile(target, []byte("new"), Options{Temp: "out.json.tmp"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(victim); string(got) != "keep" {
		t.Errorf("the link's target now holds %q: the write followed the link", got)
	}
	if got, _ := os.ReadFile(target); string(got) != "new" {
		t.Errorf("target holds %q, want new", got)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "out.json.tmp")); err == nil {
		t.Errorf("the temporary name is still there: %v", fi.Mode())
	}
	// A random temporary name is made new, exclusively: the flags say so.
	if tempFlags&os.O_EXCL == 0 || tempFlags&noFollow != noFollow {
		t.Errorf("temporary files open with %#x, want O_EXCL and O_NOFOLLOW", tempFlags)
	}
}
