//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/interlink/interlink/internal/gc"
	"github.com/interlink/interlink/internal/lab"
)

// The gc part: `interlink bench --mode gc` on a 3-node lab (the jumbo
// built-in, and the same at MTU 1500), an `interlink agent` with its
// defaults in every node, the command in node1. No other tool reproduces
// Cache Fusion across a cluster, so there is no peer to divide by: the
// figures are printed as medians over the rounds with their spread, and
// the only goal is the one the path decides: one packet per 8 KiB block at
// 9000, six at 1500. (Lost blocks are printed: on a loaded machine a node
// waiting over 500 ms for a CPU now and then loses one.)

// gcLab is a 3-node lab with an agent in every node.
type gcLab struct {
	name   string
	nodes  []*lab.Node
	addrs  []string
	agents []*exec.Cmd
	token  string
}

func upGC(name string, mtu int, dir string) (*gcLab, error) {
	topo, err := lab.Load("jumbo")
	if err != nil {
		return nil, err
	}
	topo.Name = name
	for i := range topo.Switches {
		topo.Switches[i].MTU = mtu
	}
	for i := range topo.Nodes {
		for j := range topo.Nodes[i].Links {
			topo.Nodes[i].Links[j].MTU, topo.Nodes[i].Links[j].PortMTU = mtu, mtu
		}
	}
	lab.Down(name) // a leftover of an interrupted run
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := lab.Up(ctx, topo)
	if err != nil {
		return nil, err
	}
	g := &gcLab{name: name, token: filepath.Join(dir, name+".token")}
	if err := os.WriteFile(g.token, []byte("t5-bench-compare-token-"+name+"-0123456789"), 0o600); err != nil {
		return g, err
	}
	for _, nt := range topo.Nodes {
		n, _ := l.Node(nt.Name)
		addr := n.Addr("", 4).String()
		cmd := exec.Command(*binary, "agent", "--listen", addr, "--token-file", g.token)
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		errs, err := cmd.StderrPipe()
		if err != nil {
			return g, err
		}
		if err := n.Start(cmd); err != nil {
			return g, fmt.Errorf("interlink agent in %s: %w", n.Name(), err)
		}
		g.agents = append(g.agents, cmd)
		line, err := bufio.NewReader(errs).ReadString('\n')
		if err != nil || !strings.Contains(line, "listening on") {
			return g, fmt.Errorf("interlink agent in %s did not start: %q %v", n.Name(), line, err)
		}
		go func() { // keep draining its session log lines
			b := make([]byte, 4096)
			for {
				if _, err := errs.Read(b); err != nil {
					return
				}
			}
		}()
		g.nodes, g.addrs = append(g.nodes, n), append(g.addrs, addr)
	}
	return g, nil
}

func (g *gcLab) stop() {
	for _, a := range g.agents {
		stop(a)
	}
}

// run runs `interlink bench --mode gc --json` from node1 over every node.
func (g *gcLab) run() (*gc.Report, error) {
	args := []string{"bench", "--mode", "gc", "--token-file", g.token, "--json", "--time", duration.String()}
	for i, n := range g.nodes {
		args = append(args, n.Name()+"="+g.addrs[i])
	}
	var out bytes.Buffer
	cmd, err := start(g.nodes[0], &out, *binary, args...)
	if err != nil {
		return nil, err
	}
	t := time.AfterFunc(*duration+time.Minute, func() { cmd.Process.Kill() })
	defer t.Stop()
	cmd.Wait() // exit 1 and 2 still print the report
	var r gc.Report
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		return nil, fmt.Errorf("interlink bench --mode gc: no report (%v): %s", err, lastLine(out.String()))
	}
	if len(r.LimitedBy) > 0 {
		return nil, fmt.Errorf("interlink bench --mode gc: limited: %s", r.LimitedBy[0])
	}
	return &r, nil
}

// runGC measures gc at MTU 9000 and 1500, alternating, and prints one line
// per figure; it returns the goals missed.
func runGC(dir string) ([]string, error) {
	var labs []*gcLab
	defer func() {
		for _, g := range labs {
			g.stop()
			if err := lab.Down(g.name); err != nil {
				fmt.Fprintf(os.Stderr, "compare: lab down %s: %v\n", g.name, err)
			}
		}
	}()
	mtus := []int{9000, 1500}
	for _, mtu := range mtus {
		g, err := upGC(fmt.Sprintf("t5-benchgc%d", mtu), mtu, dir)
		if g != nil {
			labs = append(labs, g)
		}
		if err != nil {
			return nil, err
		}
	}
	type figure struct {
		name, unit string
		get        func(*gc.Report) float64
	}
	figures := []figure{
		{"blocks/s, all nodes", "/s", func(r *gc.Report) float64 { return r.Total.BlocksPerSec }},
		{"2-way receive time p50", "us", func(r *gc.Report) float64 {
			if r.Total.TwoWay == nil {
				return 0
			}
			return float64(r.Total.TwoWay.P50) / 1e3
		}},
		{"3-way receive time p50", "us", func(r *gc.Report) float64 {
			if r.Total.ThreeWay == nil {
				return 0
			}
			return float64(r.Total.ThreeWay.P50) / 1e3
		}},
		{"agent cpu per block (user+sys)", "us", func(r *gc.Report) float64 { return r.Total.CPUNsPerBlock / 1e3 }},
		{"host softirq per block", "us", func(r *gc.Report) float64 { return r.Total.CPUPerBlock.SoftIRQNs / 1e3 }},
		{"IP packets per block shipped", "", func(r *gc.Report) float64 { return r.Total.FragmentsPerBlock }},
		{"blocks lost", "", func(r *gc.Report) float64 { return float64(r.Total.Lost) }},
	}
	vals := make([][][]float64, len(mtus)) // [mtu][figure][round]
	for i := range vals {
		vals[i] = make([][]float64, len(figures))
	}
	for round := 0; round < *rounds; round++ {
		for i, g := range labs {
			r, err := g.run()
			if err != nil {
				return nil, fmt.Errorf("gc at MTU %d: %w", mtus[i], err)
			}
			for k, f := range figures {
				vals[i][k] = append(vals[i][k], f.get(r))
			}
			if *verbose {
				fmt.Printf("  gc round %d, MTU %d: %.0f blocks/s, %d lost, %.1f us cpu per block\n", round+1, mtus[i], r.Total.BlocksPerSec, r.Total.Lost, r.Total.CPUNsPerBlock/1e3)
			}
		}
	}
	fmt.Printf("\ninterlink bench --mode gc, 3 nodes (jumbo lab), %d alternating rounds of %v per MTU, medians [min..max]:\n", *rounds, *duration)
	fmt.Printf("%-34s %32s %32s\n", "figure", "MTU 9000", "MTU 1500")
	for k, f := range figures {
		line := fmt.Sprintf("%-34s", f.name)
		for i := range mtus {
			m, lo, hi := spread(vals[i][k])
			line += fmt.Sprintf(" %32s", fmt.Sprintf("%.1f %s [%.1f..%.1f]", m, f.unit, lo, hi))
		}
		fmt.Println(line)
	}
	var missed []string
	for i, mtu := range mtus {
		want := map[int]float64{9000: 1, 1500: 6}[mtu]
		if _, lo, hi := spread(vals[i][5]); lo != want || hi != want {
			missed = append(missed, fmt.Sprintf("gc at MTU %d: %.2f..%.2f packets per 8 KiB block, want %g", mtu, lo, hi, want))
		}
	}
	return missed, nil
}
