package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
	} {
		code, stdout, stderr := runCLI(context.Background(), append([]string{"cluster"}, tc.args...)...)
		if code != ExitUnknown || stdout != "" || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("cluster %v: exit %d, stdout %q, stderr %q; want exit 3 and one line with %q", tc.args, code, stdout, stderr, tc.want)
		}
	}
}
