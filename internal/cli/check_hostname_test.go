package cli

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/rules"
)

// bundleOf writes a .tar.gz bundle holding files (node path without the
// leading slash -> content) and returns its path.
func bundleOf(t *testing.T, files map[string]string) string {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, content := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(content))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "node.tar.gz")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCheckBundleBadHostname: a bundle whose /etc/hostname is 1 MiB, or an
// ELF binary, is audited without a hostname ("-" in the header, "" in
// JSON), and the sections say why in one line, instead of the header
// printing a megabyte or the binary.
func TestCheckBundleBadHostname(t *testing.T) {
	for _, tc := range []struct{ name, hostname, line string }{
		{"huge", strings.Repeat("a", 1<<20), `hostname: /etc/hostname: larger than 4096 bytes \(not read\)`},
		{"binary", "\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00>\x00", `hostname: /etc/hostname holds no hostname \(binary, or longer than 64 bytes\): not used`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := bundleOf(t, map[string]string{"proc/sys/kernel/osrelease": "5.15.0-200.131.27.el9uek.x86_64\n", "etc/hostname": tc.hostname})
			out, errOut, code := run(t, "check", "--root", b)
			if code == ExitUnknown || errOut != "" {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if !strings.HasPrefix(out, "interlink check: -, kernel 5.15.0-200.131.27.el9uek.x86_64\n") ||
				!regexp.MustCompile(`(?m)^  node\s+partial\s+`+tc.line+`$`).MatchString(out) || len(out) > 16<<10 {
				t.Errorf("%d bytes:\n%.4000s", len(out), out)
			}
			out, _, _ = run(t, "check", "--root", b, "--json")
			var res rules.Result
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatal(err)
			}
			if res.Node.Hostname != "" || len(out) > 64<<10 {
				t.Errorf("JSON: hostname %.80q, %d bytes", res.Node.Hostname, len(out))
			}
		})
	}
}
