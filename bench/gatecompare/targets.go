package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// upstream serves on loopback: a connection whose first byte is 'p' gets
// its 64-byte request echoed and is closed; 's' gets a stream of bytes
// until it closes.
func upstream() (net.Listener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 64<<10)
				if _, err := io.ReadFull(c, buf[:64]); err != nil {
					return
				}
				if buf[0] == 'p' {
					c.Write(buf[:64])
					return
				}
				for {
					if _, err := c.Write(buf); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln, nil
}

// proxy is a running proxy process.
type proxy struct {
	addr string
	pid  int
	stop func()
}

// startGate runs `interlink gate` with its defaults; --rate and --burst
// have none (they are the gate's purpose), so they are set high enough
// that no connection of the test waits for a token.
func startGate(upstream string) (*proxy, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(*bin, "gate", "--listen", addr, "--upstream", upstream, "--rate", "1000000", "--burst", "100000")
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s gate: %w", *bin, err)
	}
	stop := func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }
	if err := waitListen(addr); err != nil {
		stop()
		return nil, fmt.Errorf("interlink gate: %w", err)
	}
	return &proxy{addr: addr, pid: cmd.Process.Pid, stop: stop}, nil
}

func startHAProxy(upstream string) (*proxy, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "gatecompare-")
	if err != nil {
		return nil, err
	}
	cfg := filepath.Join(dir, "haproxy.cfg")
	conf := strings.Join([]string{
		"global", "  maxconn 8000",
		"defaults", "  mode tcp", "  timeout connect 5s", "  timeout client 60s", "  timeout server 60s", "  timeout queue 60s",
		"frontend fe", "  bind " + addr, "  default_backend be",
		"backend be", "  server db " + upstream + " maxconn 8000", ""}, "\n")
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	cmd := exec.Command("haproxy", "-db", "-f", cfg)
	var logs strings.Builder
	cmd.Stdout, cmd.Stderr = io.Discard, &logs
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	stop := func() { cmd.Process.Kill(); cmd.Wait(); os.RemoveAll(dir) }
	if err := waitListen(addr); err != nil {
		stop()
		return nil, fmt.Errorf("haproxy: %w: %s", err, strings.TrimSpace(logs.String()))
	}
	return &proxy{addr: addr, pid: cmd.Process.Pid, stop: stop}, nil
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func waitListen(addr string) error {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("nothing listens on %s after 10 s", addr)
}
