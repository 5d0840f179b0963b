//go:build linux

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/interlink/interlink/internal/pmqos"
	"github.com/interlink/interlink/internal/traffic"
)

// The interlink runs that count are the ones a user makes: `interlink
// agent` with its default settings in node2, `interlink bench --json` in
// node1, each its own process of the released binary.

var binary = flagString("interlink", "bin/interlink", "the interlink binary to compare (make bench builds it)")

// agentProc is an `interlink agent` running in a lab node.
type agentProc struct {
	cmd   *exec.Cmd
	addr  string
	token string
	env   []string // added to the environment of the agent and its benches
}

// startAgent runs `interlink agent --listen ADDR --token-file F` (nothing
// else: its defaults) in node2 on port, with env added to its environment,
// and waits until it listens.
func startAgent(p *pair, dir string, port int, env ...string) (*agentProc, error) {
	return startAgentArgs(p, dir, port, nil, env...)
}

// startAgentArgs is startAgent with flags added to the agent's command
// line (--allow-cpu-latency for the tuned scenario).
func startAgentArgs(p *pair, dir string, port int, args []string, env ...string) (*agentProc, error) {
	tok := filepath.Join(dir, fmt.Sprintf("%s-%d.token", p.name, port))
	if err := os.WriteFile(tok, []byte("t5-bench-compare-token-"+p.name+"-0123456789"), 0o600); err != nil {
		return nil, err
	}
	a := &agentProc{addr: fmt.Sprintf("%s:%d", p.a2, port), token: tok, env: env}
	a.cmd = exec.Command(*binary, append([]string{"agent", "--listen", a.addr, "--token-file", tok}, args...)...)
	if len(env) > 0 {
		a.cmd.Env = append(os.Environ(), env...)
	}
	a.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	errs, err := a.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := p.n2.Start(a.cmd); err != nil {
		return nil, fmt.Errorf("interlink agent in %s: %w", p.n2.Name(), err)
	}
	line, err := bufio.NewReader(errs).ReadString('\n')
	if err != nil || !strings.Contains(line, "listening on") {
		stop(a.cmd)
		return nil, fmt.Errorf("interlink agent did not start: %q %v", line, err)
	}
	go func() { // keep draining its session log lines
		b := make([]byte, 4096)
		for {
			if _, err := errs.Read(b); err != nil {
				return
			}
		}
	}()
	return a, nil
}

// benchReport is the part of `interlink bench --json` the comparison reads.
type benchReport struct {
	traffic.Result
	CPULatency *pmqos.Report `json:"cpu_latency"`
}

// viaAgent runs `interlink bench PEER --json --time D args...` in node1
// against the lab's agent and returns the forward flow's summary. A run
// that failed or was held back by a limit is an error: the comparison
// would otherwise compare a limit.
func viaAgent(p *pair, args ...string) (traffic.Summary, error) {
	f, err := benchVia(p, p.agent, args...)
	return f.Summary, err
}

// benchVia runs `interlink bench` against agent a, with a's environment,
// and returns the forward flow.
func benchVia(p *pair, a *agentProc, args ...string) (traffic.Flow, error) {
	full := append([]string{"bench", a.addr, "--token-file", a.token, "--json", "--time", duration.String()}, args...)
	var out bytes.Buffer
	cmd, err := startEnv(p.n1, &out, a.env, *binary, full...)
	if err != nil {
		return traffic.Flow{}, err
	}
	t := time.AfterFunc(*duration+30*time.Second, func() { cmd.Process.Kill() })
	defer t.Stop()
	cmd.Wait() // exit 1 and 2 still print the report; judged below
	var rep benchReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || len(rep.Flows) == 0 {
		return traffic.Flow{}, fmt.Errorf("interlink %s: no report (%v): %s", strings.Join(args, " "), err, lastLine(out.String()))
	}
	if len(rep.Problems) > 0 {
		return traffic.Flow{}, fmt.Errorf("interlink %s: failed: %s", strings.Join(args, " "), rep.Problems[0].Detail)
	}
	if rep.CPULatency != nil && !rep.CPULatency.HeldAll() {
		return traffic.Flow{}, fmt.Errorf("interlink %s: the CPU latency request was not held on both ends: %v", strings.Join(args, " "), rep.CPULatency.Lines())
	}
	if len(rep.LimitedBy) > 0 {
		return traffic.Flow{}, fmt.Errorf("interlink %s: limited by %s: %s", strings.Join(args, " "), rep.LimitedBy[0].Limit, rep.LimitedBy[0].Detail)
	}
	return rep.Flows[0], nil
}
