package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func mainOutput(args ...string) (string, string, int) {
	var out, errOut bytes.Buffer
	code := Main(context.Background(), args, &out, &errOut)
	return out.String(), errOut.String(), code
}

// Bad input to agent, pmtu and mesh: one line naming the problem, exit 3,
// nothing on stdout.
func TestAgentPMTUMeshUsage(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "token")
	os.WriteFile(good, []byte("cli-test-token-0123456789\n"), 0o600)
	world := filepath.Join(dir, "world")
	os.WriteFile(world, []byte("cli-test-token-0123456789\n"), 0o644)
	os.Chmod(world, 0o644)
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o600)
	nodes := filepath.Join(dir, "nodes")
	os.WriteFile(nodes, []byte("node1 198.18.0.1 not-an-ip\n"), 0o600)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"agent", "--token-file", good}, "--listen ADDR[:PORT] is required"},
		{[]string{"agent", "--listen", "127.0.0.1"}, "--token-file FILE is required"},
		{[]string{"agent", "--listen", "127.0.0.1", "--token-file", world}, "readable by everyone (mode 0644); run: chmod 600 " + world + "\n"},
		{[]string{"agent", "--listen", "127.0.0.1", "--token-file", empty}, "empty; create one with: (umask 077; head -c 32 /dev/urandom | base64 > " + empty + ")\n"},
		// A missing token file: how to make one, not a stat error.
		{[]string{"bench", "127.0.0.1", "--token-file", filepath.Join(dir, "none")}, "token file " + filepath.Join(dir, "none") + ": no such file; create one with: (umask 077; head -c 32 /dev/urandom | base64 > " + filepath.Join(dir, "none") + "), and copy it to every node\n"},
		{[]string{"agent", "--listen", "127.0.0.1", "--token-file", good, "--max-rate", "fast"}, "--max-rate"},
		{[]string{"agent", "--listen", "127.0.0.1", "--token-file", good, "--handshake-timeout", "0s"}, "--handshake-timeout 0s"},
		{[]string{"agent", "--listen", "127.0.0.1", "--token-file", good, "--max-pending-per-source", "0"}, "--max-pending-per-source 0"},
		{[]string{"agent", "--listen", "127.0.0.1", "--token-file", good, "--max-pending", "4", "--max-pending-per-source", "8"}, "want 1 <= per source <= in all"},
		{[]string{"pmtu"}, "expected a PEER"},
		{[]string{"pmtu", "--storage", "127.0.0.1"}, "--storage takes no PEER"},
		{[]string{"pmtu", "127.0.0.1", "--icmp", "--oranfstab", good}, "go with --storage"},
		{[]string{"pmtu", "--storage", "--icmp"}, "do not apply"},
		{[]string{"pmtu", "--storage", "--oranfstab", filepath.Join(dir, "missing")}, "--oranfstab"},
		{[]string{"pmtu", "--storage", "--oranfstab", dir}, "not a regular file"},
		{[]string{"pmtu", "--storage", "--oranfstab", empty}, "lists no path: to prove"},
		{[]string{"pmtu", "127.0.0.1"}, "--token-file FILE is required"},
		{[]string{"pmtu", "127.0.0.1", "--token-file", world}, "readable by everyone (mode 0644); run: chmod 600 " + world + "\n"},
		{[]string{"pmtu", "127.0.0.1", "--icmp", "--expect", "huge"}, "--expect"},
		{[]string{"pmtu", "127.0.0.1", "--icmp", "--expect", "70000"}, "--expect"},
		{[]string{"pmtu", "127.0.0.1", "--icmp", "--tries", "0"}, "--tries"},
		{[]string{"pmtu", "127.0.0.1", "--icmp", "--max", "1500", "--expect", "9000"}, "--max 1500 is below --expect 9000"},
		{[]string{"mesh", "--token-file", good, "--max", "1500", "--expect", "9000", "a=127.0.0.1", "b=127.0.0.2"}, "mesh: --max 1500 is below --expect 9000"},
		{[]string{"pmtu", "127.0.0.1", "--icmp", "--target", "nope"}, "--target"},
		{[]string{"mesh", "--token-file", good, "127.0.0.1"}, "at least 2 nodes"},
		{[]string{"mesh", "--token-file", good, "a=127.0.0.1", "a=127.0.0.2"}, "listed twice"},
		{[]string{"mesh", "--token-file", good, "--nodes", nodes}, "not an IP address"},
		{[]string{"mesh", "--token-file", good, "--nodes", filepath.Join(dir, "missing")}, "no such file"},
		{[]string{"mesh", "--token-file", good, "--per-node", "0", "a=127.0.0.1", "b=127.0.0.2"}, "--per-node 0: give 1 to 12"},
		{[]string{"mesh", "--token-file", good, "--per-node", "13", "a=127.0.0.1", "b=127.0.0.2"}, "--per-node 13: give 1 to 12"},
		// Malformed addresses are refused, not looked up as host names
		// or dialled and reported as agents that are not running.
		{[]string{"agent", "--listen", "[::1", "--token-file", good}, `--listen "[::1": want HOST`},
		{[]string{"agent", "--listen", "127.0.0.1:1:x", "--token-file", good}, "want HOST, HOST:PORT"},
		{[]string{"pmtu", "[::1", "--icmp"}, `PEER "[::1": want HOST`},
		// An empty label: the resolver refuses the name itself, with no
		// DNS query leaving the machine.
		{[]string{"pmtu", "no..host.invalid", "--icmp"}, `interlink: pmtu: cannot resolve "no..host.invalid"`},
		{[]string{"pmtu", "127.0.0.1", "--icmp", "--token-file", good}, "--token-file does nothing with --icmp"},
		{[]string{"pmtu", "127.0.0.1:7471:x", "--token-file", good}, `PEER "127.0.0.1:7471:x"`},
		{[]string{"pmtu", "127.0.0.1:65536", "--token-file", good}, `port "65536" is not a number from 0 to 65535`},
		{[]string{"mesh", "--token-file", good, "a=[::1", "b=127.0.0.2"}, `node a: agent "[::1"`},
		{[]string{"mesh", "--token-file", good, "a=127.0.0.1:-1", "b=127.0.0.2"}, `port "-1"`},
		{[]string{"bench", "127.0.0.1:7471:x", "--token-file", good}, `PEER "127.0.0.1:7471:x"`},
		// The same line for a bad token file in every command.
		{[]string{"bench", "127.0.0.1", "--token-file", world}, "bench: token file " + world + ": readable by everyone (mode 0644); run: chmod 600 " + world + "\n"},
	} {
		out, errOut, code := mainOutput(c.args...)
		if code != ExitUnknown || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 3 and one line with %q", c.args, code, out, errOut, c.want)
		}
	}
}

// Nothing listens: a clear line, exit 3.
func TestPMTUNoAgent(t *testing.T) {
	tok := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tok, []byte("cli-test-token-0123456789\n"), 0o600)
	_, errOut, code := mainOutput("pmtu", "127.0.0.1:1", "--token-file", tok)
	if code != ExitUnknown || !strings.HasPrefix(errOut, "interlink: pmtu: agent 127.0.0.1:1: connect") || !strings.Contains(errOut, "is 'interlink agent' running there?") {
		t.Fatalf("exit %d: %q", code, errOut)
	}
}
