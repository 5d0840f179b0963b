//go:build linux

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/interlink/interlink/internal/traffic"
)

// The interlink runs put each end in its own process, as the CLI and the
// agent run (and as iperf3 and sockperf do): two ends in one Go runtime
// share its scheduler and heap, which costs the latency figures dearly. The
// server end is this program re-executed in node2 with -serve; it runs the
// engine directly (no agent session, no per-datagram tags) and prints its
// Side as JSON.

const (
	serverPort = 5301
	clientPort = 5302
)

var serve = flagString("serve", "", "internal: run the server end of SPEC (JSON) and print its side")

func flagString(name, def, usage string) *string {
	var s string
	flagSet.StringVar(&s, name, def, usage)
	return &s
}

// serveEnd is the server process: spec and addresses come in -serve.
func serveEnd(arg string) error {
	var req struct {
		Spec        traffic.Spec
		Local, Peer netip.Addr
	}
	if err := json.Unmarshal([]byte(arg), &req); err != nil {
		return err
	}
	runtime.LockOSThread()
	ctx, cancel := context.WithTimeout(context.Background(), req.Spec.Duration+30*time.Second)
	defer cancel()
	local := netip.AddrPortFrom(req.Local, serverPort)
	var side *traffic.Side
	switch req.Spec.Mode {
	case traffic.ModeTCP:
		ln, err := net.ListenTCP("tcp", net.TCPAddrFromAddrPort(local))
		if err != nil {
			return err
		}
		fmt.Println("ready")
		ln.SetDeadline(time.Now().Add(10 * time.Second))
		var conns []*net.TCPConn
		for len(conns) < max(req.Spec.Parallel, 1) {
			c, err := ln.AcceptTCP()
			if err != nil {
				return err
			}
			defer c.Close()
			conns = append(conns, c)
		}
		ln.Close()
		side = traffic.ReceiveTCP(ctx, req.Spec, conns, traffic.Options{})
	default:
		c, err := net.DialUDP("udp", net.UDPAddrFromAddrPort(local), net.UDPAddrFromAddrPort(netip.AddrPortFrom(req.Peer, clientPort)))
		if err != nil {
			return err
		}
		defer c.Close()
		fmt.Println("ready")
		if req.Spec.Mode == traffic.ModeBlocks {
			side = traffic.Respond(ctx, req.Spec, c, traffic.Options{})
		} else {
			side = traffic.ReceiveUDP(ctx, req.Spec, c, traffic.Options{})
		}
	}
	return json.NewEncoder(os.Stdout).Encode(side)
}

// ours runs one interlink test: server end re-executed in node2, client end
// on a thread in node1.
func ours(p *pair, spec traffic.Spec) (traffic.Summary, error) {
	spec.Duration = *duration
	spec, err := spec.Normalize()
	if err != nil {
		return traffic.Summary{}, err
	}
	self, err := os.Executable()
	if err != nil {
		return traffic.Summary{}, err
	}
	arg, _ := json.Marshal(map[string]any{"Spec": spec, "Local": p.a2, "Peer": p.a1})
	cmd := exec.Command(self, "-serve", string(arg))
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return traffic.Summary{}, err
	}
	if err := p.n2.Start(cmd); err != nil {
		return traffic.Summary{}, err
	}
	defer stop(cmd)
	rd := bufio.NewReader(out)
	if line, err := rd.ReadString('\n'); err != nil || strings.TrimSpace(line) != "ready" {
		return traffic.Summary{}, fmt.Errorf("server end did not start: %q %v", line, err)
	}
	ctx := context.Background()
	var cs *traffic.Side
	err = p.n1.Do(func() error {
		to := netip.AddrPortFrom(p.a2, serverPort)
		if spec.Mode == traffic.ModeTCP {
			var conns []*net.TCPConn
			for i := 0; i < spec.Parallel; i++ {
				c, err := net.DialTCP("tcp", nil, net.TCPAddrFromAddrPort(to))
				if err != nil {
					return err
				}
				defer c.Close()
				conns = append(conns, c)
			}
			cs = traffic.SendTCP(ctx, spec, conns, traffic.Options{})
			return nil
		}
		c, err := net.DialUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(p.a1, clientPort)), net.UDPAddrFromAddrPort(to))
		if err != nil {
			return err
		}
		defer c.Close()
		if spec.Mode == traffic.ModeBlocks {
			cs = traffic.Request(ctx, spec, c, traffic.Options{})
		} else {
			cs = traffic.SendUDP(ctx, spec, c, traffic.Options{})
		}
		return nil
	})
	if err != nil {
		return traffic.Summary{}, err
	}
	var ss traffic.Side
	b, _ := io.ReadAll(rd)
	if err := json.Unmarshal(b, &ss); err != nil {
		return traffic.Summary{}, fmt.Errorf("server end: %w: %s", err, b)
	}
	f := traffic.Summarize(spec, traffic.Forward, cs, &ss)
	for _, sd := range []*traffic.Side{cs, &ss} {
		if sd.Error != "" {
			return f.Summary, fmt.Errorf("interlink %s %s: %s", spec.Mode, sd.Role, sd.Error)
		}
	}
	return f.Summary, nil
}
