//go:build linux

// Package fencetest proves, with a lab that is up and the binary as users
// run it, that commands aimed from outside at a lab's addresses are
// refused before they send anything, and that the same commands run
// inside the lab are not.
package fencetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/lab"
	"github.com/interlink/interlink/internal/labuptest"
)

var bin string

func TestMain(m *testing.M) {
	labuptest.Main(m, "lab fence tests", &bin, "fence-interlink-")
}

// isolated runs each of cmds in turn, in a network namespace of its own
// (CLONE_NEWNET) whose only route, the default, goes into one end (d0) of
// a veth pair whose other end is in the same namespace: whatever a
// command sends (the ARP request first) is counted on d0 and goes nowhere
// else, so nothing can leave the machine even if the fence breaks. (This
// kernel has no dummy driver.) d0 has no IPv6 address, so the kernel sends
// nothing of its own on it (no MLD, no router solicitation). It returns
// each command's output (with "exit N" last) and the packets d0
// transmitted while it ran.
func isolated(t *testing.T, dir string, cmds []string) ([]string, []int) {
	t.Helper()
	var b strings.Builder
	b.WriteString("set -e; echo 1 > /proc/sys/net/ipv6/conf/default/addr_gen_mode; ip link set lo up; " +
		"ip link add d0 type veth peer name d1; ip link set d1 up; ip link set d0 up; " +
		"ip addr add 192.0.2.1/24 dev d0; ip route add default dev d0; set +e\n")
	tx := "ip -j -s link show dev d0 | sed -n 's/.*\"tx\":{\"bytes\":[0-9]*,\"packets\":\\([0-9]*\\).*/tx \\1/p'\n"
	for _, c := range cmds {
		b.WriteString(tx + c + "; echo exit $?\n" + tx + "echo '---'\n")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", b.String())
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	parts := strings.Split(strings.TrimSuffix(string(out), "---\n"), "---\n")
	if len(parts) != len(cmds) {
		t.Fatalf("%d outputs for %d commands:\n%s", len(parts), len(cmds), out)
	}
	outs, sent := make([]string, len(cmds)), make([]int, len(cmds))
	for i, p := range parts {
		lines := strings.Split(strings.TrimSpace(p), "\n")
		var before, after int
		if len(lines) < 3 || !scan(lines[0], &before) || !scan(lines[len(lines)-1], &after) {
			t.Fatalf("%s: no counts of d0 around it:\n%s", cmds[i], p)
		}
		outs[i], sent[i] = strings.Join(lines[1:len(lines)-1], "\n"), after-before
	}
	return outs, sent
}

func scan(line string, n *int) bool {
	_, err := fmt.Sscanf(line, "tx %d", n)
	return err == nil
}

// TestRefusedFromOutside: with a lab up, bench, pmtu, mesh, bench --mode
// gc, storm and db bench at one of its addresses, run outside the lab,
// exit 3 with one line naming the lab and the 'lab exec' line to run, and
// send nothing. The same kind of command at an address no lab owns does
// send (the counter counts), and inside the lab the command runs.
func TestRefusedFromOutside(t *testing.T) {
	t.Setenv("INTERLINK_LAB_DIR", t.TempDir())
	topo, err := lab.Pair("ilfence", 9000, "")
	if err != nil {
		t.Fatal(err)
	}
	labuptest.Up(t, topo)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte("fence-test-token-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	argv := []string{
		"bench 198.18.50.2 --token-file token --time 1s",
		"bench 198.18.50.2 --mode blocks --token-file token --time 1s",
		"pmtu 198.18.50.2 --token-file token",
		"pmtu [fd00:50::2]:7471 --token-file token",
		"pmtu 198.18.50.2 --icmp",
		"mesh a=198.18.50.1 b=198.18.50.2 --token-file token",
		"bench --mode gc 198.18.50.1 198.18.50.2 --token-file token --time 1s",
		"storm 198.18.50.2:5432 --clients 4",
		"db bench --dsn postgres://u@198.18.50.2:5432/db --time 1s",
		"db bench --dsn mysql://u:p@198.18.50.2:3306/db --time 1s",
		// The control: d0 counts what a command sends to an address no
		// lab owns.
		"pmtu 192.0.2.99 --icmp --tries 1 --timeout 2s",
	}
	var cmds []string
	for _, a := range argv {
		cmds = append(cmds, bin+" "+a)
	}
	outs, sent := isolated(t, dir, cmds)
	for i, args := range argv[:len(argv)-1] {
		lines := strings.Split(outs[i], "\n")
		if sent[i] != 0 || len(lines) != 2 || lines[1] != "exit 3" ||
			!strings.Contains(lines[0], "is node2's address in lab ilfence, and this runs outside the lab") && !strings.Contains(lines[0], "is node1's address in lab ilfence, and this runs outside the lab") ||
			!strings.Contains(lines[0], "run it inside: interlink lab exec ilfence node") ||
			!strings.Contains(lines[0], " -- interlink "+strings.Fields(args)[0]) {
			t.Errorf("%s: %d packets sent; output:\n%s", args, sent[i], outs[i])
		}
	}
	if last := len(argv) - 1; sent[last] == 0 {
		t.Errorf("%s sent nothing d0 counted:\n%s", argv[last], outs[last])
	}
	// Inside the lab the same command runs.
	cmd := exec.Command(bin, "lab", "exec", "ilfence", "node1", "--", bin, "pmtu", "198.18.50.2", "--icmp")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) || bytes.Contains(out, []byte("outside the lab")) || !bytes.Contains(out, []byte("path MTU 9000")) {
		t.Errorf("inside the lab: %v\n%s", err, out)
	}
}
