//go:build linux

package fencetest

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/lab"
	"github.com/interlink/interlink/internal/testlab"
)

// run runs the binary with args in dir and returns its stderr, stdout
// and exit code.
func run(t *testing.T, dir string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return errb.String(), out.String(), ee.ExitCode()
	case err != nil:
		t.Fatalf("%v: %v", args, err)
	}
	return errb.String(), out.String(), 0
}

// TestAnswersInALab: the mistakes made with a lab up get one line naming
// the problem and the next command, exit 3: a setting lab set cannot
// apply, a --target the agent's node does not have, a peer that is not
// an agent.
func TestAnswersInALab(t *testing.T) {
	t.Setenv("INTERLINK_LAB_DIR", t.TempDir())
	topo, err := lab.Pair("ilanswer", 9000, "")
	if err != nil {
		t.Fatal(err)
	}
	testlab.Up(t, topo)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte("answer-test-token-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"lab", "set", "ilanswer", "nosw", "mtu=1500"}, "interlink: lab ilanswer: nosw mtu=1500: no switch nosw (and not NODE:LINK); its switches and links: interlink lab status ilanswer\n"},
		{[]string{"lab", "set", "ilanswer", "node1:eth9", "mtu=1500"}, "node node1 has no link eth9; its switches and links: interlink lab status ilanswer\n"},
		{[]string{"lab", "set", "ilanswer", "ic", "mtu=huge"}, "ic mtu=huge: want an MTU of 68 to 65535; its switches"},
		{[]string{"lab", "set", "ilanswer", "ic", "speed=1"}, "interlink: lab set: \"speed=1\": unknown setting \"speed\" (mtu, port_mtu, rate, loss) (see 'interlink lab set --help')\n"},
	} {
		stderr, stdout, code := run(t, dir, tc.args...)
		if code != 3 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, "invalid topology") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 3 and one line with %q", tc.args, code, stdout, stderr, tc.want)
		}
	}

	// An agent on node2; --target names node1's address.
	ctx, cancel := context.WithCancel(context.Background())
	agent := exec.CommandContext(ctx, bin, "lab", "exec", "ilanswer", "node2", "--", bin, "agent", "--listen", "198.18.50.2", "--token-file", "token")
	agent.Dir = dir
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); agent.Wait() })
	var stderr string
	var code int
	for range 50 { // until the agent listens
		stderr, _, code = run(t, dir, "lab", "exec", "ilanswer", "node1", "--", bin, "pmtu", "198.18.50.2", "--target", "198.18.50.1", "--token-file", "token")
		if !strings.Contains(stderr, "connection refused") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if want := "interlink: pmtu: agent 198.18.50.2:7471: pmtu.open: the agent's node has no address 198.18.50.1: give --target (or @ADDR) an address of that node; 'ip -br addr' there lists them\n"; code != 3 || stderr != want {
		t.Errorf("pmtu --target on another node: exit %d, %q; want exit 3 and %q", code, stderr, want)
	}

	// Something that is not an agent, with a lab up: what it answered,
	// and the way into the lab.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"))
			defer c.Close()
		}
	}()
	peer := ln.Addr().String()
	stderr, _, code = run(t, dir, "bench", peer, "--token-file", "token")
	want := "interlink: bench: agent " + peer + ": not an interlink agent: it answered \"HTTP/1.1 400 Bad Request\"; check the address and port 'interlink agent' listens on; for a lab's node, run it inside the lab (labs up: ilanswer): interlink lab exec LAB NODE -- interlink bench " + peer + " --token-file token\n"
	if code != 3 || stderr != want {
		t.Errorf("bench at a web server: exit %d, %q; want exit 3 and %q", code, stderr, want)
	}
}
