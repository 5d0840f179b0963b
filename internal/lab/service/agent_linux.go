package service

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// StartFunc starts cmd inside a node (lab's Node.Start); the caller of
// the service function Waits for it.
type StartFunc func(*exec.Cmd) error

// DialFunc connects from inside the node, to check that a service answers.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// NewToken writes a new random token (32 bytes, base64) to path, mode
// 0600, as `interlink agent --token-file` wants it.
func NewToken(path string) error {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return fmt.Errorf("token: %w", err)
	}
	if err := os.WriteFile(path, []byte(base64.StdEncoding.EncodeToString(b)+"\n"), 0o600); err != nil {
		return fmt.Errorf("token: %w", err)
	}
	return nil
}

// Agent is an interlink agent to start in a node.
type Agent struct {
	Binary    string // the interlink binary
	Listen    string // ADDR:PORT inside the node (0.0.0.0: every address of the node)
	TokenFile string
	Log       string // its stderr (one line per session), created or appended
}

// StartAgent starts the agent in its own session (it outlives the caller,
// as a lab's services do) and waits until Probe reaches it through dial,
// at most until ctx ends or 10 s. It returns the agent's PID, also with
// an error when the agent started but never answered (the caller records
// it to stop it).
func StartAgent(ctx context.Context, a Agent, start StartFunc, probe string, dial DialFunc) (int, error) {
	log, err := os.OpenFile(a.Log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return 0, fmt.Errorf("agent: %w", err)
	}
	defer log.Close()
	cmd := exec.Command(a.Binary, "agent", "--listen", a.Listen, "--token-file", a.TokenFile)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := start(cmd); err != nil {
		return 0, fmt.Errorf("agent: start %s: %w", a.Binary, err)
	}
	pid := cmd.Process.Pid
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }() // reaps it if it ends while we live
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		c, err := dial(ctx, "tcp", probe)
		if err == nil {
			c.Close()
			return pid, nil
		}
		select {
		case werr := <-exited:
			return pid, fmt.Errorf("agent: exited at start (%v); see %s", werr, a.Log)
		case <-ctx.Done():
			return pid, fmt.Errorf("agent: no answer on %s within 10s: %v", probe, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Alive reports whether pid is a live process (not a zombie) whose
// command line contains want.
func Alive(pid int, want string) bool {
	if pid <= 0 {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(stat)
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == ')' {
			if i+2 < len(s) && s[i+2] == 'Z' {
				return false
			}
			break
		}
	}
	cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return err == nil && strings.Contains(string(cmd), want)
}
