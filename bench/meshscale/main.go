// Command meshscale measures `interlink mesh` at cluster scale as users run
// it: it builds labs on one 9000 switch with an `interlink agent` service on
// every node (`interlink lab up`): -healthy healthy nodes, -nodes nodes with
// node -blackholed's switch port left at 1500, and -big healthy nodes (0:
// none). It runs `interlink mesh --expect 9000` from the first node of each
// (`interlink lab exec`), alternating, -rounds times, and prints the median
// wall time with its spread, the mesh process's peak memory, the agents' CPU
// per path (all agents' user+sys over the run, from /proc, divided by the
// paths measured) and the busiest agent's, and what each run found against
// the goals: every path measured, the blackholed node's paths found and no
// other path failed, under -goal (healthy), -bh-goal (blackholed) and
// -big-goal with peak memory under -big-mem (big); each run's line has the
// load average as it started. -keep keeps the JSON of a run with a path
// judged wrong. It removes the labs, also when a run fails, and exits 1
// naming every goal missed. It is part of `make bench` and needs root.
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
	"strconv"
	"strings"
	"time"

	"github.com/interlink/interlink/bench/goal"
)

var (
	bin     = flag.String("bin", "bin/interlink", "the interlink binary")
	nodes   = flag.Int("nodes", 100, "nodes of the lab with a blackholed port")
	healthy = flag.Int("healthy", 99, "nodes of the healthy lab (0: none)")
	big     = flag.Int("big", 256, "nodes of the big healthy lab (0: none)")
	rounds  = flag.Int("rounds", 3, "runs of each lab (alternating)")
	bhNode  = flag.Int("blackholed", 50, "the node whose switch port is left at 1500 (0: no such lab)")
	goalOK  = flag.Duration("goal", 8*time.Second, "wall-time goal of the healthy mesh")
	bhGoal  = flag.Duration("bh-goal", 15*time.Second, "wall-time goal of the mesh with one blackholed port")
	bigGoal = flag.Duration("big-goal", time.Minute, "wall-time goal of the big mesh (also its --timeout)")
	bigMem  = flag.Int("big-mem", 300, "peak memory goal of the big mesh's process, MB")
	timeout = flag.Duration("timeout", 5*time.Minute, "mesh --timeout of the other runs")
	prefix  = flag.String("prefix", "t5-mesh", "the labs' names begin with this")
	keep    = flag.String("keep", "", "directory where the JSON of a run with a path judged wrong is kept (empty: not kept)")
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

// lab is one lab of the comparison: n nodes, node bh (0: none) blackholed,
// its goals; up fills in the files and the agents' processes.
type lab struct {
	name, what    string
	n, bh         int
	goal, timeout time.Duration
	memMB         int // peak memory goal of the mesh process (0: none)
	nodes, token  string
	agents        []int // the agents' process ids
}

func (l *lab) up(dir string) error {
	file := filepath.Join(dir, l.name+".yaml")
	if err := os.WriteFile(file, []byte(topology(l.name, l.n, l.bh)), 0o644); err != nil {
		return err
	}
	var nl strings.Builder
	for i := 1; i <= l.n; i++ {
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
					PID       int    `json:"pid"`
					TokenFile string `json:"token_file"`
				} `json:"services"`
			} `json:"nodes"`
		} `json:"labs"`
	}
	if err := json.Unmarshal(out, &st); err != nil || len(st.Labs) != 1 || len(st.Labs[0].Nodes) == 0 || len(st.Labs[0].Nodes[0].Services) == 0 {
		return fmt.Errorf("lab status %s: no agent token file (%v)", l.name, err)
	}
	l.token = st.Labs[0].Nodes[0].Services[0].TokenFile
	for _, n := range st.Labs[0].Nodes {
		for _, sv := range n.Services {
			if sv.PID > 0 {
				l.agents = append(l.agents, sv.PID)
			}
		}
	}
	fmt.Printf("lab up %s: %d nodes with agents in %s\n", l.name, l.n, time.Since(start).Round(100*time.Millisecond))
	return nil
}

// outcome is one mesh run as measured here.
type outcome struct {
	wall                          time.Duration
	paths, measured, bhFound, bad int
	slowest                       string
	badSeen                       []string // the first few paths judged wrong
	kept                          string   // where the run's JSON was kept (-keep)
	load                          string   // the 1-minute load average as the run started
	maxRSSKB                      int64
	agentCPU, busiestCPU          time.Duration // all agents' user+sys over the run; the busiest agent's
}

// cpuTimes returns each process's user+sys time (absent when gone).
func cpuTimes(pids []int) map[int]time.Duration {
	out := make(map[int]time.Duration, len(pids))
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// Fields after the command name, which is in parentheses.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) < 13 {
			continue
		}
		ut, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		out[pid] = time.Duration(ut+st) * time.Second / 100 // USER_HZ
	}
	return out
}

func (l *lab) mesh() (outcome, error) {
	self, err := filepath.Abs(*bin)
	if err != nil {
		return outcome{}, err
	}
	before := cpuTimes(l.agents)
	o := outcome{load: loadAvg()}
	start := time.Now()
	// GNU time reports the mesh process's own peak resident set (%M, KB)
	// on the last line of its stderr.
	cmd := exec.Command(*bin, "lab", "exec", l.name, "n1", "--", "/usr/bin/time", "-f", "maxrss %M", self, "mesh", "--nodes", l.nodes,
		"--token-file", l.token, "--expect", "9000", "--timeout", l.timeout.String(), "--json")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	o.wall = time.Since(start)
	after := cpuTimes(l.agents)
	for pid, t := range after {
		d := t - before[pid]
		o.agentCPU += d
		o.busiestCPU = max(o.busiestCPU, d)
	}
	if lines := strings.Split(strings.TrimSpace(stderr.String()), "\n"); len(lines) > 0 {
		fmt.Sscanf(lines[len(lines)-1], "maxrss %d", &o.maxRSSKB)
	}
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() <= 3) {
		return o, fmt.Errorf("mesh in %s: %w: %s", l.name, err, stderr.String())
	}
	var r struct {
		Paths []struct {
			From, To, Verdict, Detail, Error string
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
			if len(o.badSeen) < 5 {
				o.badSeen = append(o.badSeen, fmt.Sprintf("%s -> %s: %s %s%s", p.From, p.To, p.Verdict, p.Detail, p.Error))
			}
		}
	}
	if s := r.Slowest; s != nil {
		o.slowest = fmt.Sprintf("%s %d pairs %.1fs", s.Node, s.Pairs, float64(s.Spent)/1e9)
	}
	if o.bad > 0 && *keep != "" {
		o.kept = filepath.Join(*keep, fmt.Sprintf("%s-%s.json", l.name, start.UTC().Format("150405")))
		if err := os.WriteFile(o.kept, out, 0o644); err != nil {
			o.kept = err.Error()
		}
	}
	return o, nil
}

func labs() []*lab {
	var out []*lab
	if *healthy > 1 {
		out = append(out, &lab{name: *prefix, what: "healthy", n: *healthy, goal: *goalOK, timeout: *timeout})
	}
	if *bhNode > 0 && *nodes > 1 {
		out = append(out, &lab{name: *prefix + "bh", what: fmt.Sprintf("node n%d's port at 1500", *bhNode), n: *nodes, bh: *bhNode,
			goal: *bhGoal, timeout: *timeout})
	}
	if *big > 1 {
		out = append(out, &lab{name: *prefix + "big", what: "healthy", n: *big, goal: *bigGoal, timeout: *bigGoal, memMB: *bigMem})
	}
	return out
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
	labs := labs()
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
	runs := make([][]outcome, len(labs))
	for r := 0; r < *rounds; r++ {
		for i, l := range labs {
			o, err := l.mesh()
			if err != nil {
				return err
			}
			runs[i] = append(runs[i], o)
			fmt.Printf("  round %d %-10s %6.1fs  %d/%d measured, %d blackholed found, %d other problem paths (slowest %s), peak %d MB, agents %.2f ms CPU per path, busiest %.2fs; load average %s at the start\n",
				r+1, l.name, o.wall.Seconds(), o.measured, o.paths, o.bhFound, o.bad, o.slowest, o.maxRSSKB>>10,
				perPath(o.agentCPU, o.measured), o.busiestCPU.Seconds(), o.load)
			for _, b := range o.badSeen {
				fmt.Printf("      judged wrong: %s\n", b)
			}
			if o.kept != "" {
				fmt.Printf("      the run's JSON: %s\n", o.kept)
			}
		}
	}
	fmt.Printf("interlink mesh (from a lab node, agents as lab services, --expect 9000): %d alternating runs each\n", *rounds)
	var missed []string
	for i, l := range labs {
		if m := l.judge(runs[i]); m != "" {
			missed = append(missed, m)
		}
	}
	if len(missed) > 0 {
		return fmt.Errorf("%d goal(s) missed: %s", len(missed), strings.Join(missed, "; "))
	}
	return nil
}

// judge prints the lab's line against its goals and returns what it missed
// ("" when none).
func (l *lab) judge(runs []outcome) string {
	all := l.n * (l.n - 1)
	var walls, cpus []float64
	ok := true
	var peak int64
	for _, o := range runs {
		walls = append(walls, o.wall.Seconds())
		cpus = append(cpus, perPath(o.agentCPU, o.measured))
		peak = max(peak, o.maxRSSKB>>10)
		wantBH := 0
		if l.bh > 0 {
			wantBH = 2 * (l.n - 1)
		}
		ok = ok && o.paths == all && o.measured == all && o.bhFound == wantBH && o.bad == 0
	}
	med, lo, hi := goal.Spread(walls)
	cpu, _, _ := goal.Spread(cpus)
	met := ok && med <= l.goal.Seconds() && (l.memMB == 0 || peak < int64(l.memMB))
	fmt.Printf("%-10s %4d nodes %-24s wall %6.1fs [%.1f..%.1f]  goal < %-4s peak %d MB  agents %.2f ms CPU/path  every path measured once and judged right: %-5v %s\n",
		l.name, l.n, l.what, med, lo, hi, l.goal, peak, cpu, ok, goal.Verdict(met))
	if met {
		return ""
	}
	return fmt.Sprintf("%s: %.1fs (goal %s), peak %d MB, every path right in every run: %v", l.name, med, l.goal, peak, ok)
}

func perPath(d time.Duration, paths int) float64 {
	if paths == 0 {
		return 0
	}
	return float64(d.Microseconds()) / 1e3 / float64(paths)
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

// loadAvg is the 1-minute load average ("n/a" when /proc does not say).
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "n/a"
}
