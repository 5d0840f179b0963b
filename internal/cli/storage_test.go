package cli

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

func TestStorageBadInput(t *testing.T) {
	file := t.TempDir() + "/f"
	os.WriteFile(file, nil, 0o600)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"storage", "bench", t.TempDir()}, `unknown profile ""`},
		{[]string{"storage", "bench", t.TempDir(), "--profile", "oltp"}, `unknown profile "oltp"`},
		{[]string{"storage", "bench", t.TempDir(), "--profile", "redo", "--size", "0"}, `--size "0"`},
		{[]string{"storage", "bench", t.TempDir(), "--profile", "redo", "--size", "1T"}, "--size"},
		{[]string{"storage", "bench", t.TempDir(), "--profile", "redo", "--time", "-1s"}, "--time must be positive"},
		{[]string{"storage", "bench", file, "--profile", "redo"}, "is not a directory"},
		{[]string{"storage", "bench", "--profile", "redo"}, "expected a directory PATH"},
		{[]string{"storage", "bench", "nfs://", "--profile", "install"}, "want nfs://SERVER/EXPORT"},
		{[]string{"storage", "bench", "nfs://filer/x", "--profile", "redo"}, "profile redo is not emulated over nfs://"},
		{[]string{"storage", "bench", "nfs://filer/x", "--profile", "install", "--emulate", "vers=4.1"}, "NFSv3 only"},
		{[]string{"storage", "bench", "nfs://filer/x", "--profile", "install", "--emulate", "noac,bogus"}, `"bogus"`},
		{[]string{"storage", "bench", "nfs://filer/x", "--profile", "install", "--direct"}, "--emulate forcedirectio"},
		{[]string{"storage", "bench", t.TempDir(), "--profile", "install", "--emulate", "noac"}, "--emulate needs an nfs://"},
		// Nothing listens on loopback's portmapper here: one line, exit 3.
		{[]string{"storage", "bench", "nfs://127.0.0.1/x", "--profile", "install"}, "portmapper"},
	} {
		o, e, code := run(t, tc.args...)
		if code != ExitUnknown || !strings.Contains(e, tc.want) || strings.Count(e, "\n") != 1 || o != "" {
			t.Errorf("%v: exit %d, stderr %q; want one line with %q", tc.args, code, e, tc.want)
		}
	}
}

func TestStorageBenchJSON(t *testing.T) {
	o, e, code := run(t, "storage", "bench", t.TempDir(), "--profile", "mkfile", "--size", "2M", "--time", "5s", "--json")
	var doc struct {
		Schema string `json:"schema"`
		Steps  []struct {
			Ops []struct {
				Name  string `json:"name"`
				Bytes int64  `json:"bytes"`
			} `json:"ops"`
		} `json:"steps"`
	}
	if err := json.Unmarshal([]byte(o), &doc); err != nil || code != ExitOK {
		t.Fatalf("exit %d, %v: %s %s", code, err, o, e)
	}
	if doc.Schema != "interlink.storage/v1" || doc.Steps[0].Ops[0].Bytes != 2<<20 {
		t.Errorf("document %+v", doc)
	}
}
