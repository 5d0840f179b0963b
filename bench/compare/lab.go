//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/interlink/interlink/internal/lab"
)

// The labs and the processes run in their nodes.

// pair is a two-node lab: node1 sends (the client), node2 receives.
type pair struct {
	name   string
	l      *lab.Lab
	n1, n2 *lab.Node
	a1, a2 netip.Addr
	agent  *agentProc
	// noGSO is a second agent started with INTERLINK_NO_GSO=1, for the
	// scenarios that measure as a kernel before 4.18 sends (nil if none).
	noGSO *agentProc
	// tuned is an agent started with --allow-cpu-latency, for the
	// scenarios run with a PM QoS request held (nil if none).
	tuned *agentProc
}

func up(name string, mtu int, rate string) (*pair, error) {
	topo, err := lab.Pair(name, mtu, rate)
	if err != nil {
		return nil, err
	}
	lab.Down(name) // a leftover of an interrupted run
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := lab.Up(ctx, topo)
	if err != nil {
		return nil, err
	}
	p := &pair{name: name, l: l}
	p.n1, _ = l.Node("node1")
	p.n2, _ = l.Node("node2")
	p.a1, p.a2 = p.n1.Addr("", 4), p.n2.Addr("", 4)
	return p, nil
}

// start runs a command in a node; it dies with this process.
func start(n *lab.Node, out *bytes.Buffer, name string, args ...string) (*exec.Cmd, error) {
	return startEnv(n, out, nil, name, args...)
}

// startEnv is start with env added to this process's environment.
func startEnv(n *lab.Node, out *bytes.Buffer, env []string, name string, args ...string) (*exec.Cmd, error) {
	cmd := exec.Command(name, args...)
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := n.Start(cmd); err != nil {
		return nil, fmt.Errorf("%s in %s: %w", name, n.Name(), err)
	}
	return cmd, nil
}

// runIn runs a command in a node to completion, bounded in time.
func runIn(n *lab.Node, limit time.Duration, name string, args ...string) ([]byte, error) {
	var out bytes.Buffer
	cmd, err := start(n, &out, name, args...)
	if err != nil {
		return nil, err
	}
	t := time.AfterFunc(limit, func() { cmd.Process.Kill() })
	defer t.Stop()
	if err := cmd.Wait(); err != nil {
		return out.Bytes(), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, lastLine(out.String()))
	}
	return out.Bytes(), nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func stop(cmd *exec.Cmd) {
	if cmd != nil && cmd.Process != nil {
		cmd.Process.Kill()
		cmd.Wait()
	}
}
