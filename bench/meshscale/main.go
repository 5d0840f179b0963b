// Command meshscale measures `interlink mesh` at cluster scale as users run
// it: it builds two labs of -nodes nodes on one 9000 switch with an
// `interlink agent` service on every node (`interlink lab up`), one healthy
// and one with node -blackholed's switch port left at 1500, runs `interlink
// mesh --expect 9000` from the first node of each (`interlink lab exec`),
// alternating, -rounds times, and prints the median wall time with its
// spread and what each run found against the goals: every path measured,
// the blackholed node's paths found and no other path failed, under -bh-goal
// (blackholed lab) and -goal (healthy lab). It removes both labs, also when
// a run fails, and exits 1 naming every goal missed. It is part of `make
// bench` and needs root.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/interlink/interlink/bench/goal"
)

var (
	bin     = flag.String("bin", "bin/interlink", "the interlink binary")
	nodes   = flag.Int("nodes", 100, "nodes per lab")
	rounds  = flag.Int("rounds", 3, "runs of each lab (alternating)")
	bhNode  = flag.Int("blackholed", 50, "the node whose switch port is left at 1500")
	goalOK  = flag.Duration("goal", 20*time.Second, "wall-time goal of the healthy mesh")
	bhGoal  = flag.Duration("bh-goal", 60*time.Second, "wall-time goal of the mesh with one blackholed port")
	timeout = flag.Duration("timeout", 5*time.Minute, "mesh --timeout of each run")
)

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "meshscale: %v\n", err)
		os.Exit(1)
	}
}

// topology is a lab of n nodes on switch ic (9000) with an agent each;
// node bh (0: none) has its switch port at 1500.
func topology(name string, n, bh int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\nswitches:\n  ic: {mtu: 9000}\nnodes:\n", name)
	for i := 1; i <= n; i++ {
		port := ""
		if i == bh {
			port = ", port_mtu: 1500"
		}
		fmt.Fprintf(&b, "  n%d:\n    links:\n      - {name: eth1, switch: ic, addresses: [198.18.%d.%d/16]%s}\n    services:\n      - {kind: agent}\n",
			i, 10+i/250, i%250, port)
	}
	return b.String()
}

// lab is one lab of the comparison, up.
type lab struct {
	name, nodes, token string
	bh                 int
}

func (l *lab) up(dir string) error {
	file := filepath.Join(dir, l.name+".yaml")
	if err := os.WriteFile(file, []byte(topology(l.name, *nodes, l.bh)), 0o644); err != nil {
		return err
	}
	var nl strings.Builder
	for i := 1; i <= *nodes; i++ {
		a := fmt.Sprintf("198.18.%d.%d", 10+i/250, i%250)
		fmt.Fprintf(&nl, "n%d %s %s\n", i, a, a)
	}
	l.nodes = filepath.Join(dir, l.name+".nodes")
	if err := os.WriteFile(l.nodes, []byte(nl.String()), 0o644); err != nil {
		return err
	}
	start := time.Now()
	if out, err := exec.Command(*bin, "lab", "up", file).CombinedOutput(); err != nil {
		return fmt.Errorf("lab up %s: %w: %s", l.name, err, lastLine(out))
	}
	out, err := exec.Command(*bin, "lab", "status", l.name, "--json").Output()
	if err != nil {
		return fmt.Errorf("lab status %s: %w", l.name, err)
	}
	var st struct {
		Labs []struct {
			Nodes []struct {
				Services []struct {
					TokenFile string `json:"token_file"`
				} `json:"services"`
			} `json:"nodes"`
		} `json:"labs"`
	}
	if err := json.Unmarshal(out, &st); err != nil || len(st.Labs) != 1 || len(st.Labs[0].Nodes) == 0 || len(st.Labs[0].Nodes[0].Services) == 0 {
		return fmt.Errorf("lab status %s: no agent token file (%v)", l.name, err)
	}
	l.token = st.Labs[0].Nodes[0].Services[0].TokenFile
	fmt.Printf("lab up %s: %d nodes with agents in %s\n", l.name, *nodes, time.Since(start).Round(100*time.Millisecond))
	return nil
}

// outcome is one mesh run as measured here.
type outcome struct {
	wall                          time.Duration
	paths, measured, bhFound, bad int
	slowest                       string
}

func (l *lab) mesh() (outcome, error) {
	self, err := filepath.Abs(*bin)
	if err != nil {
		return outcome{}, err
	}
	start := time.Now()
	cmd := exec.Command(*bin, "lab", "exec", l.name, "n1", "--", self, "mesh", "--nodes", l.nodes,
		"--token-file", l.token, "--expect", "9000", "--timeout", timeout.String(), "--json")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	o := outcome{wall: time.Since(start)}
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() <= 2) {
		return o, fmt.Errorf("mesh in %s: %w: %s", l.name, err, lastLine(stderr.Bytes()))
	}
	var r struct {
		Paths []struct {
			From, To, Verdict, Error string
		} `json:"paths"`
		Slowest *struct {
			Node  string `json:"node"`
			Pairs int    `json:"pairs"`
			Spent int64  `json:"spent_ns"`
		} `json:"slowest"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		return o, fmt.Errorf("mesh in %s: %w", l.name, err)
	}
	bh := fmt.Sprintf("n%d", l.bh)
	o.paths = len(r.Paths)
	for _, p := range r.Paths {
		if p.Error == "" && p.Verdict != "" {
			o.measured++
		}
		involved := l.bh > 0 && (p.From == bh || p.To == bh)
		switch {
		case involved && p.Verdict == "blackhole" && p.Error == "":
			o.bhFound++
		case p.Verdict != "ok" || p.Error != "":
			o.bad++
		}
	}
	if s := r.Slowest; s != nil {
		o.slowest = fmt.Sprintf("%s %d pairs %.1fs", s.Node, s.Pairs, float64(s.Spent)/1e9)
	}
	return o, nil
}

func run() error {
	if os.Geteuid() != 0 {
		return errors.New("the labs need root")
	}
	dir, err := os.MkdirTemp("", "interlink-meshscale-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	labs := []*lab{{name: "t5-mesh", bh: 0}, {name: "t5-meshbh", bh: *bhNode}}
	defer func() {
		for _, l := range labs {
			if out, err := exec.Command(*bin, "lab", "down", l.name).CombinedOutput(); err != nil {
				fmt.Fprintf(os.Stderr, "meshscale: lab down %s: %v: %s\n", l.name, err, lastLine(out))
			}
		}
	}()
	for _, l := range labs {
		if err := l.up(dir); err != nil {
			return err
		}
	}
	n := *nodes
	all := n * (n - 1)
	runs := make([][]outcome, len(labs))
	for r := 0; r < *rounds; r++ {
		for i, l := range labs {
			o, err := l.mesh()
			if err != nil {
				return err
			}
			runs[i] = append(runs[i], o)
			fmt.Printf("  round %d %-10s %6.1fs  %d/%d measured, %d blackholed found, %d other problem paths (slowest %s)\n",
				r+1, l.name, o.wall.Seconds(), o.measured, o.paths, o.bhFound, o.bad, o.slowest)
		}
	}
	fmt.Printf("interlink mesh (from a lab node, agents as lab services, --expect 9000): %d nodes, %d paths, %d alternating runs each\n", n, all, *rounds)
	var missed []string
	for i, l := range labs {
		var walls []float64
		ok := true
		for _, o := range runs[i] {
			walls = append(walls, o.wall.Seconds())
			wantBH := 0
			if l.bh > 0 {
				wantBH = 2 * (n - 1)
			}
			ok = ok && o.paths == all && o.measured == all && o.bhFound == wantBH && o.bad == 0
		}
		med, lo, hi := goal.Spread(walls)
		g, what := *goalOK, "healthy"
		if l.bh > 0 {
			g, what = *bhGoal, fmt.Sprintf("node n%d's port at 1500", l.bh)
		}
		met := ok && med <= g.Seconds()
		if !met {
			missed = append(missed, fmt.Sprintf("%s: %.1fs (goal %s), every path right in every run: %v", l.name, med, g, ok))
		}
		fmt.Printf("%-10s %-24s wall %6.1fs [%.1f..%.1f]  goal < %-4s every path measured once and judged right: %-5v %s\n",
			l.name, what, med, lo, hi, g, ok, goal.Verdict(met))
	}
	if len(missed) > 0 {
		return fmt.Errorf("%d goal(s) missed: %s", len(missed), strings.Join(missed, "; "))
	}
	return nil
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}
