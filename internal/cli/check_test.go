package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/roottest"

	"github.com/interlink/interlink/internal/bintest"
	"github.com/interlink/interlink/internal/fixturetest"
	"github.com/interlink/interlink/internal/inventory"
	"github.com/interlink/interlink/internal/labuptest"
	"github.com/interlink/interlink/internal/rules"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/check")

const fixtures = "../../testdata/nodes/"

// fixedClock makes reports independent of when the test runs.
func fixedClock(t *testing.T) {
	old := checkNow
	checkNow = func() time.Time { return time.Date(2026, 11, 21, 9, 30, 0, 0, time.UTC) }
	t.Cleanup(func() { checkNow = old })
}

func run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	code = Main(context.Background(), args, &o, &e)
	return o.String(), e.String(), code
}

// fixtureArgs returns the flags an operator would give check for a fixture:
// --interconnect from interconnect.txt, --mount-role from roles.txt (one
// PATH=ROLE a line) and --platform from platform.txt, when present.
func fixtureArgs(t *testing.T, dir string) []string {
	var args []string
	lines := func(name string) []string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil
		}
		var out []string
		for _, l := range strings.Split(string(b), "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
				out = append(out, l)
			}
		}
		return out
	}
	for _, l := range lines("interconnect.txt") {
		args = append(args, "--interconnect", l)
	}
	for _, l := range lines("roles.txt") {
		args = append(args, "--mount-role", l)
	}
	for _, l := range lines("platform.txt") {
		args = append(args, "--platform", l)
	}
	for _, l := range lines("storage-mtu.txt") {
		args = append(args, "--storage-mtu", l)
	}
	return args
}

// TestCheckGolden audits every fixture under testdata/nodes and compares
// the text and JSON reports with testdata/check/NAME.{txt,json}.
func TestCheckGolden(t *testing.T) {
	fixedClock(t)
	ents, err := os.ReadDir(fixtures)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"ol8-rac-bond-jumbo": ExitOK, "debian12-netplan": ExitOK, "ol7-everything-wrong": ExitCritical, "ol8-dnfs": ExitCritical}
	seen := 0
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		name := e.Name()
		if _, ok := want[name]; ok {
			seen++
		}
		for _, format := range []string{"txt", "json"} {
			t.Run(name+"."+format, func(t *testing.T) {
				args := append([]string{"check", "--root", fixtures + name}, fixtureArgs(t, fixtures+name)...)
				if format == "json" {
					args = append(args, "--json")
				}
				out, errOut, code := run(t, args...)
				if code == ExitUnknown || errOut != "" {
					t.Fatalf("exit %d, stderr %q", code, errOut)
				}
				if w, ok := want[name]; ok && code != w {
					t.Errorf("exit %d, want %d", code, w)
				}
				golden := filepath.Join("testdata", "check", name+"."+format)
				if *update {
					os.MkdirAll(filepath.Dir(golden), 0o755)
					if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				wantOut, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run 'go test ./internal/cli -run TestCheckGolden -update' and review the new file)", err)
				}
				if out != string(wantOut) {
					t.Errorf("output differs from %s (rerun with -update and review the diff):\n%s", golden, out)
				}
			})
		}
	}
	if seen != len(want) {
		t.Errorf("found %d of the %d network fixtures", seen, len(want))
	}
}

func TestCheckJSONSchema(t *testing.T) {
	fixedClock(t)
	out, _, code := run(t, "check", "--root", fixtures+"ol7-everything-wrong", "--json")
	if code != ExitCritical {
		t.Fatalf("exit %d", code)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"schema", "node", "inventory", "findings", "summary"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("top level lacks %q", k)
		}
	}
	var r struct {
		Schema   string
		Findings []map[string]any
	}
	json.Unmarshal([]byte(out), &r)
	if r.Schema != "interlink.check/v1" || len(r.Findings) == 0 {
		t.Fatalf("schema %q, %d findings", r.Schema, len(r.Findings))
	}
	for _, k := range []string{"rule", "severity", "object", "message", "evidence", "fix", "source"} {
		if _, ok := r.Findings[0][k]; !ok {
			t.Errorf("finding lacks %q: %v", k, r.Findings[0])
		}
	}
}

func TestCheckBadInput(t *testing.T) {
	dir := t.TempDir()
	notBundle := filepath.Join(dir, "notes.txt")
	os.WriteFile(notBundle, []byte("hello"), 0o644)
	emptyDir := filepath.Join(dir, "empty")
	os.Mkdir(emptyDir, 0o755)
	bundle := filepath.Join(dir, "b.tar.gz")
	pipe := filepath.Join(dir, "pipe.tar.gz")
	if err := syscall.Mkfifo(pipe, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := run(t, "check", "--root", fixtures+"ol8-rac-bond-jumbo", "--collect", bundle); code != ExitOK {
		t.Fatalf("collect: exit %d %s", code, errOut)
	}
	cases := map[string][]string{
		"missing root":        {"--root", filepath.Join(dir, "nope")},
		"root not a bundle":   {"--root", notBundle},
		"root not a tree":     {"--root", emptyDir},
		"unknown role":        {"--mount-role", "/u02/oradata=datafile"},
		"role without path":   {"--mount-role", "datafiles"},
		"relative role path":  {"--mount-role", "u02=datafiles"},
		"unknown platform":    {"--platform", "vms"},
		"negative interval":   {"--interval", "-1s"},
		"huge interval":       {"--interval", "2h"},
		"bad interval":        {"--interval", "fast"},
		"bad interconnect":    {"--interconnect", "eth 1"},
		"interconnect lines":  {"--interconnect", "bond1\neth0"}, // eth0 was dropped silently
		"interconnect escape": {"--interconnect", "eth\x1b[31m1"},
		"bundle name":         {"--collect", filepath.Join(dir, "x.zip")},
		"bundle dir missing":  {"--collect", filepath.Join(dir, "no/such/dir/x.tar.gz")},
		"interval on bundle":  {"--root", bundle, "--interval", "1s"},
		"html to a pipe":      {"--root", bundle, "--html", pipe},
		"html to /dev/null":   {"--root", bundle, "--html", os.DevNull},
		"collect to a pipe":   {"--root", bundle, "--collect", pipe},
		"html onto the root":  {"--root", bundle, "--html", bundle},
		"unknown flag":        {"--colour"},
		"extra argument":      {"eth1"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			out, errOut, code := run(t, append([]string{"check"}, args...)...)
			if code != ExitUnknown {
				t.Errorf("exit %d, want 3", code)
			}
			if strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "interlink: ") {
				t.Errorf("stderr is not one line: %q", errOut)
			}
			if out != "" {
				t.Errorf("stdout not empty: %q", out)
			}
		})
	}
	if fi, err := os.Lstat(pipe); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the pipe is now %v (%v)", fi.Mode(), err)
	}
	if fi, err := os.Stat(os.DevNull); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Errorf("%s is now %v (%v)", os.DevNull, fi.Mode(), err)
	}
}

// TestCollectRoundTrip: the bundle written by --collect, audited with
// --root, gives the same findings and inventory; for a fixture and for this
// machine.
func TestCollectRoundTrip(t *testing.T) {
	fixedClock(t)
	for _, root := range []string{fixtures + "ol7-everything-wrong", "/"} {
		bundle := filepath.Join(t.TempDir(), "node.tar.gz")
		out1, errOut, code1 := run(t, "check", "--root", root, "--collect", bundle, "--json")
		if code1 == ExitUnknown {
			t.Fatalf("%s: %s", root, errOut)
		}
		out2, errOut, code2 := run(t, "check", "--root", bundle, "--json")
		if code2 != code1 {
			t.Errorf("%s: exit %d after the round trip, %d before (%s)", root, code2, code1, errOut)
		}
		var a, b rules.Result
		json.Unmarshal([]byte(out1), &a)
		json.Unmarshal([]byte(out2), &b)
		fa, _ := json.Marshal(a.Findings)
		fb, _ := json.Marshal(b.Findings)
		if !bytes.Equal(fa, fb) {
			t.Errorf("%s: findings differ after the round trip:\n%s\n%s", root, fa, fb)
		}
		if len(a.Inventory.Interfaces) == 0 || len(a.Inventory.Interfaces) != len(b.Inventory.Interfaces) {
			t.Errorf("%s: %d interfaces, %d after the round trip", root, len(a.Inventory.Interfaces), len(b.Inventory.Interfaces))
		}
		ia, _ := json.Marshal(a.Inventory.Interfaces)
		ib, _ := json.Marshal(b.Inventory.Interfaces)
		if root != "/" && !bytes.Equal(ia, ib) {
			t.Errorf("%s: interfaces differ after the round trip", root)
		}
		if b.Node.Root != bundle {
			t.Errorf("node root %q, want the bundle", b.Node.Root)
		}
		// The unpacked bundle keeps the class/net links sysfs uses.
		src, err := inventory.Open(bundle)
		if err != nil {
			t.Fatal(err)
		}
		for _, ifc := range a.Inventory.Interfaces {
			if l, err := os.Readlink(filepath.Join(src.Root(), "sys/class/net", ifc.Name)); err != nil || !strings.Contains(l, "devices/") {
				t.Errorf("%s: bundle lost the link sys/class/net/%s: %q %v", root, ifc.Name, l, err)
			}
		}
		src.Close()
	}
}

// TestCheckLive runs the built binary on this machine, as root and as the
// unprivileged user nobody (65534), in text and JSON.
func TestCheckLive(t *testing.T) {
	roottest.Require(t, "it runs the binary as root and as uid 65534")
	// t.TempDir's parent is private to root; nobody must reach the binary.
	dir, err := os.MkdirTemp("", "interlink-live-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	labuptest.SkipShort(t)
	bin, cleanup, err := bintest.Build("interlink-check-bin-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanup)
	nobody := &syscall.Credential{Uid: 65534, Gid: 65534}
	t.Run("unreadable tree", func(t *testing.T) {
		// A node whose sysfs, network scripts and grid home an ordinary
		// user cannot read: check still reports, with those sections
		// marked unreadable.
		tree := filepath.Join(dir, "node")
		os.Mkdir(tree, 0o755)
		fixturetest.Copy(t, fixtures+"ol8-rac-bond-jumbo", tree)
		for p, mode := range map[string]os.FileMode{"sys/class/net": 0o700, "etc/sysconfig/network-scripts": 0o700,
			"u01/app/19.0.0/grid": 0o750, "proc/sys/net/core": 0o700} {
			if err := os.Chmod(filepath.Join(tree, p), mode); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command(bin, "check", "--root", tree)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: nobody}
		out, err := cmd.Output()
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == ExitUnknown || err != nil && !ok {
			t.Fatalf("%v: %s", err, out)
		}
		for _, want := range []string{"interfaces  unreadable  /sys/class/net: permission denied",
			"persisted   unreadable", "cluster     unreadable", "sysctls     partial",
			"files       partial     ", "/etc/sysconfig/network-scripts (permission denied)",
			"(not fully read: interfaces, persisted, sysctls, cluster, files)"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("report as nobody lacks %q:\n%s", want, out)
			}
		}
	})
	for _, user := range []struct {
		name string
		cred *syscall.Credential
	}{{"root", nil}, {"nobody", nobody}} {
		for _, asJSON := range []bool{false, true} {
			args := []string{"check", "--interconnect", "lo"}
			if asJSON {
				args = append(args, "--json")
			}
			cmd := exec.Command(bin, args...)
			cmd.Dir = "/"
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: user.cred}
			var o, e bytes.Buffer
			cmd.Stdout, cmd.Stderr = &o, &e
			err := cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatalf("%s: %v", user.name, err)
			}
			if code > ExitCritical || e.Len() > 0 {
				t.Errorf("%s json=%v: exit %d, stderr %q", user.name, asJSON, code, e.String())
			}
			if !asJSON {
				if !strings.Contains(o.String(), "summary: ") || !strings.Contains(o.String(), "  lo *") {
					t.Errorf("%s: text report without summary or interfaces:\n%s", user.name, o.String())
				}
				continue
			}
			var r rules.Result
			if err := json.Unmarshal(o.Bytes(), &r); err != nil {
				t.Fatalf("%s: %v", user.name, err)
			}
			if r.Schema != rules.Schema || r.Inventory.Interface("lo") == nil || r.Summary.ExitCode != code {
				t.Errorf("%s: schema %q, exit %d vs summary %+v", user.name, r.Schema, code, r.Summary)
			}
		}
	}
}

// TestCheckLiveInterval samples this machine's counters over an interval:
// the report then carries deltas and rates. Parallel: it waits out the
// intervals, and its bound (5 s for a cancelled 20 s interval) leaves room
// for a loaded machine.
func TestCheckLiveInterval(t *testing.T) {
	t.Parallel()
	out, errOut, code := run(t, "check", "--interval", "200ms", "--json")
	if code == ExitUnknown {
		t.Fatal(errOut)
	}
	var r rules.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	c := r.Inventory.Counters
	if c == nil || c.IntervalNs < 200*time.Millisecond || len(c.Kernel) == 0 || c.Kernel[0].Delta == nil || c.Kernel[0].PerSec == nil {
		t.Fatalf("counters without rates: %+v", c)
	}
	// Ctrl-C during the interval still reports, with totals. The tree is
	// read in well under a second (30 ms at a load of 22 on 2 cores); the
	// wait for the second sample is last. A cancel that came during the
	// read would fail the test: no "interval sample cancelled".
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	time.AfterFunc(500*time.Millisecond, cancel)
	var o, e bytes.Buffer
	if code := Main(ctx, []string{"check", "--interval", "20s"}, &o, &e); code == ExitUnknown || !strings.Contains(o.String(), "interval sample cancelled") {
		t.Errorf("cancelled interval: exit %d, %s %s", code, o.String(), e.String())
	}
}

func BenchmarkCheckLive(b *testing.B) {
	for b.Loop() {
		if code := Main(context.Background(), []string{"check", "--json"}, io.Discard, io.Discard); code == ExitUnknown {
			b.Fatal("check failed")
		}
	}
}

func BenchmarkCheckFixture(b *testing.B) {
	for b.Loop() {
		if code := Main(context.Background(), []string{"check", "--root", fixtures + "ol7-everything-wrong"}, io.Discard, io.Discard); code != ExitCritical {
			b.Fatalf("exit %d", code)
		}
	}
}

func TestCheckRules(t *testing.T) {
	out, _, code := run(t, "check", "--rules")
	if code != ExitOK || !regexp.MustCompile(`(?m)^NET-BOND-MTU +critical +bond slave MTU differs`).MatchString(out) {
		t.Errorf("exit %d:\n%s", code, out)
	}
	out, _, _ = run(t, "check", "--rules", "--json")
	var doc struct {
		Schema string
		Rules  []rules.RuleInfo
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Schema != "interlink.check-rules/v1" {
		t.Fatalf("%v %q", err, doc.Schema)
	}
	for _, r := range doc.Rules {
		if r.ID == "" || r.Title == "" || r.Source == "" {
			t.Errorf("rule without id, title or source: %+v", r)
		}
	}
}

// TestCheckShowsAbsentSections: a tree with almost nothing in it (a
// captured mount table of another system) still gives a report, and says
// which sections it did not find.
func TestCheckShowsAbsentSections(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "etc"), 0o755)
	os.WriteFile(filepath.Join(dir, "etc/hostname"), []byte("bare\n"), 0o644)
	out, errOut, code := run(t, "check", "--root", dir)
	if code != ExitOK || errOut != "" {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"interlink check: bare", "interfaces  absent  /sys/class/net: no such file or directory",
		"IPv4 addresses not read", "summary: 0 critical, 0 warning, 0 info: OK\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}
