package report

import (
	"bytes"
	"context"
	"flag"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/demo"
)

// docsPNG, when set, makes TestBrowserScreenshot keep its screenshot there
// (docs/report.png is made so: go test ./internal/report -run
// BrowserScreenshot -docs-png ../../docs/report.png).
var docsPNG = flag.String("docs-png", "", "write the browser's screenshot of the sample report to this file")

// chromium returns Debian's chromium. Without it the test fails with the
// install command (DESIGN.md section 5: a real component a test needs is
// installed, not skipped); go test -short skips the browser instead.
func chromium(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: opens the report in headless chromium")
	}
	p, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium is not installed: apt-get install chromium (.ci/run installs it); the report must be opened in a browser")
	}
	return p
}

// runChromium runs headless chromium on a file with a profile, home and
// caches in a temporary directory (nothing left behind), in its own
// process group so that a hung browser is killed whole, children included.
func runChromium(t *testing.T, file string, args ...string) (stdout, stderr string) {
	t.Helper()
	bin := chromium(t)
	home := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args = append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
		"--enable-logging=stderr", "--v=0", "--user-data-dir=" + filepath.Join(home, "profile")}, args...)
	cmd := exec.CommandContext(ctx, bin, append(args, "file://"+file)...)
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+home, "XDG_CACHE_HOME="+home)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, e.String())
	}
	return o.String(), e.String()
}

// consoleErrors returns the console messages and uncaught errors chromium
// logged. A report has no scripts, so any console message is a fault: a
// blocked fetch (the policy forbids every one) or a script that got in.
func consoleErrors(log string) []string {
	var bad []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, ":CONSOLE") || strings.Contains(l, "Uncaught") {
			bad = append(bad, l)
		}
	}
	return bad
}

func writePage(t *testing.T, p Page) string {
	t.Helper()
	var b bytes.Buffer
	if err := HTML(&b, p); err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(f, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestBrowserRendersReport opens a report of every fixture in chromium and
// reads the DOM it built: every chart is there as SVG, with its cells and
// points, and the browser logged no console message.
func TestBrowserRendersReport(t *testing.T) {
	files, _ := filepath.Glob("testdata/lab-*.json")
	var all []any
	for _, f := range files {
		all = append(all, fixture(t, filepath.Base(f)))
	}
	file := writePage(t, Page{Title: "every fixture", Generated: time.Now(), Results: all})
	dom, log := runChromium(t, file, "--dump-dom")
	if bad := consoleErrors(log); len(bad) > 0 {
		t.Errorf("console messages:\n%s", strings.Join(bad, "\n"))
	}
	for class, want := range map[string]int{
		"heatmap mesh-heatmap":  5,                                                                     // two networks of the mesh, one of the demo's, two of the cluster's
		"timeseries bench-rate": 3, "cdf bench-cdf": 1, "bars bench-fragments": 2, "bars bench-cpu": 2, // tcp has no messages to divide by
		"forest ab-verdict": 1, "strip ab-runs": 6, "bars pmtu-bars": 1,
		"bars demo-rate": 1, "bars demo-fragments": 1, "cdf demo-cdf": 1, "bars demo-tcp": 1,
	} {
		re := regexp.MustCompile(`<svg xmlns="http://www.w3.org/2000/svg" class="chart ` + class + `"`)
		if n := len(re.FindAllString(dom, -1)); n != want {
			t.Errorf("rendered DOM has %d %q charts, want %d", n, class, want)
		}
	}
	if n := strings.Count(dom, "<title>run "); n != 6*12 {
		t.Errorf("rendered DOM has %d ab run points, want 72", n)
	}
	if n := strings.Count(dom, `class="finding `); n < 3 {
		t.Errorf("rendered DOM has %d findings", n)
	}
}

// TestBrowserCatchesConsoleErrors proves the detector can fail: a page
// with a script error and a blocked fetch is caught.
func TestBrowserCatchesConsoleErrors(t *testing.T) {
	var b bytes.Buffer
	if err := HTML(&b, Page{Title: "x", Results: []any{fixture(t, "lab-pmtu.json")}}); err != nil {
		t.Fatal(err)
	}
	// The fetch goes to a reserved name that never resolves; the policy
	// blocks it before any lookup anyway.
	page := strings.Replace(b.String(), "</body>", `<img src="https://report.invalid/x.png"></body>`, 1)
	f := filepath.Join(t.TempDir(), "bad.html")
	if err := os.WriteFile(f, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	_, log := runChromium(t, f, "--dump-dom")
	if bad := consoleErrors(log); len(bad) == 0 || !strings.Contains(strings.Join(bad, "\n"), "Content Security Policy") {
		t.Errorf("a blocked fetch was not reported: %q", bad)
	}
	g := filepath.Join(t.TempDir(), "script.html")
	if err := os.WriteFile(g, []byte(`<!DOCTYPE html><html><body><script>noSuchFunction()</script></body></html>`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, log = runChromium(t, g, "--dump-dom")
	if bad := consoleErrors(log); len(bad) == 0 || !strings.Contains(bad[0], "Uncaught ReferenceError") {
		t.Errorf("a script error was not reported: %q", bad)
	}
}

// TestBrowserScreenshot renders the sample report (the demo lab's mesh
// and a blocks bench across its interconnect) to a PNG and checks its size and that the
// heatmap's verdict colours were painted.
func TestBrowserScreenshot(t *testing.T) {
	d := fixture(t, "lab-demo.json").(*demo.Result)
	file := writePage(t, Page{Title: "interlink report: the demo lab's interconnect", Sources: []string{"mesh.json", "blocks.json"},
		Generated: time.Date(2026, 11, 23, 8, 24, 0, 0, time.UTC), Results: []any{d.Mesh, fixture(t, "lab-bench-blocks.json")}})
	const w, h = 900, 1400
	shot := filepath.Join(t.TempDir(), "shot.png")
	_, log := runChromium(t, file, "--screenshot="+shot, "--window-size=900,1400", "--hide-scrollbars")
	if bad := consoleErrors(log); len(bad) > 0 {
		t.Errorf("console messages:\n%s", strings.Join(bad, "\n"))
	}
	data, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
		t.Errorf("screenshot is %dx%d, want %dx%d", b.Dx(), b.Dy(), w, h)
	}
	// The heatmap's ok green and blackhole red fill cells, each well over
	// a thousand pixels.
	for name, c := range map[string][3]uint32{"ok": {0xa5, 0xd6, 0xa7}, "blackhole": {0xef, 0x9a, 0x9a}} {
		if n := countColor(img, c); n < 1000 {
			t.Errorf("the screenshot has %d pixels of the %s colour, want a painted heatmap", n, name)
		}
	}
	if *docsPNG != "" {
		// As chromium wrote it: Go's best compression makes it larger.
		if err := os.WriteFile(*docsPNG, data, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d bytes)", *docsPNG, len(data))
	}
}

func countColor(img image.Image, c [3]uint32) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r>>8 == c[0] && g>>8 == c[1] && bl>>8 == c[2] {
				n++
			}
		}
	}
	return n
}
