package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestParseClusterNode(t *testing.T) {
	for in, want := range map[string]string{
		"rac1":                              "rac1 user= port=0 ic=[]",
		"oracle@rac1:2222/10.0.0.1,fd00::1": "rac1 user=oracle port=2222 ic=[10.0.0.1 fd00::1]",
		"[fd00::5]:22":                      "fd00::5 user= port=22 ic=[]",
		"fd00::5":                           "fd00::5 user= port=0 ic=[]",
		"192.0.2.1/10.0.0.1":                "192.0.2.1 user= port=0 ic=[10.0.0.1]",
	} {
		h, err := parseClusterNode(in)
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if got := fmt.Sprintf("%s user=%s port=%d ic=%v", h.Name, h.User, h.Port, h.Interconnect); got != want {
			t.Errorf("%s: got %s, want %s", in, got, want)
		}
	}
}

// Bad input is one line and exit 3, before anything is contacted.
func TestClusterUsage(t *testing.T) {
	dir := t.TempDir()
	inv := filepath.Join(dir, "hosts")
	os.WriteFile(inv, []byte("[rac]\nrac1 interconnect=10.0.0.300\n"), 0o644)
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o600)
		return p
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "cluster: name the nodes"},
		{[]string{"a", "--inventory", inv}, "not both"},
		{[]string{"--inventory", inv}, `interconnect: "10.0.0.300" is not an IP address`},
		{[]string{"rac1", "rac1"}, "node rac1 listed twice"},
		{[]string{"--inventory", filepath.Join(dir, "none")}, "--inventory: stat"},
		{[]string{"a:99999"}, `"99999" is not a port`},
		{[]string{"a/10.0.0"}, `"10.0.0" is not an IP address`},
		{[]string{"a", "--parallel", "0"}, "--parallel must be 1 to 256"},
		{[]string{"a", "--stall-timeout", "0s"}, "--stall-timeout 0s: want 1s or more"},
		{[]string{"a", "--expect", "big"}, "--expect"},
		{[]string{"a", "--identity", filepath.Join(dir, "nokey")}, "nokey"},
		{[]string{"a", "--ssh-config", filepath.Join(dir, "nocfg")}, "ssh config"},
		{[]string{"a", "--collect", filepath.Join(dir, "nodir")}, "--collect"},
		// Typos in a host are refused, not looked up as names and
		// reported as unreachable nodes.
		{[]string{"a.invalid:22:x", "b.invalid"}, `node "a.invalid:22:x": want [USER@]HOST`},
		{[]string{"@a.invalid", "b.invalid"}, `node "@a.invalid": empty user`},
		{[]string{"--inventory", write("badhost.ini", "rac1 ansible_host=10.0.0.1:22\n")}, `host rac1: ansible_host "10.0.0.1:22": want a host name or an IP address`},
		{[]string{"--inventory", write("badname.ini", "[rac]\nrac1:22:x\n")}, "want a host name or an IP address"},
		// A bad --identity or --known-hosts is refused once, before any
		// node (it was a note per node); a FIFO is refused unopened.
		{[]string{"a", "--identity", write("garbage", "not a key\n")}, "--identity " + filepath.Join(dir, "garbage") + ": not a private key"},
		{[]string{"a", "--identity", fifo}, "named pipe (FIFO)"},
		{[]string{"a", "--known-hosts", fifo}, "named pipe (FIFO)"},
		{[]string{"a", "--known-hosts", write("kh", "rac1 ssh-ed25519 !!notbase64\n")}, "--known-hosts " + filepath.Join(dir, "kh")},
		{[]string{"a", "--ssh-config", fifo}, "named pipe (FIFO)"},
		{[]string{"a", "--bench-time", "10s"}, "--bench-time goes with --bench"},
		{[]string{"a", "--grid-home", dir}, "--grid-home reads the nodes from Oracle Clusterware"},
	} {
		code, stdout, stderr := runCLI(context.Background(), append([]string{"cluster"}, tc.args...)...)
		if code != ExitUnknown || stdout != "" || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("cluster %v: exit %d, stdout %q, stderr %q; want exit 3 and one line with %q", tc.args, code, stdout, stderr, tc.want)
		}
	}
}
