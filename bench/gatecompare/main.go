// Command gatecompare measures what `interlink gate` adds to a connection
// against a direct connection and against HAProxy (mode tcp, with a
// maxconn queue: what operators put in front of a database today), on
// loopback, alternating runs, and prints medians and ratios with their
// spread. Part of `make bench`; it installs haproxy with apt-get when
// missing. Both proxies run as users run them: interlink gate as its own
// process with its defaults and the two required limits (--rate and
// --burst) high enough not to shape the test, HAProxy from a config file in
// the foreground.
//
// Two goals, judged on the median of the per-round ratios: gate's time per
// connection at most HAProxy's, its stream at least HAProxy's. gatecompare
// exits 1 naming each missed goal; the CPU time and context switches each
// proxy spent per connection are printed beside them, the first place to
// look for the cause of a miss. Timing on a shared machine is noisy: read
// medians and spreads, not single runs.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/interlink/interlink/bench/goal"
)

var (
	rounds   = flag.Int("rounds", 7, "runs of each target per measurement (alternating)")
	conns    = flag.Int("conns", 500, "sequential connections per target and round")
	duration = flag.Duration("time", 2*time.Second, "length of each target's stream per round")
	slices   = flag.Int("slices", 5, "slices per round that the targets alternate in")
	bin      = flag.String("bin", "bin/interlink", "the interlink binary")
)

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "gatecompare: %v\n", err)
		os.Exit(1)
	}
}

// target is one way to reach the upstream; pid is the proxy's process (0
// for the direct connection) and cost what it spent over the latency runs.
type target struct {
	name, addr string
	pid        int
	lat, thr   []float64 // per round: median time per connection (us), Gbit/s
	conns      int
	cost       cost
}

func run() error {
	if _, err := exec.LookPath("haproxy"); err != nil {
		fmt.Println("installing haproxy (apt-get) ...")
		if out, err := exec.Command("sh", "-c", "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq haproxy").CombinedOutput(); err != nil {
			return fmt.Errorf("install haproxy: %v\n%s", err, out)
		}
	}
	up, err := upstream()
	if err != nil {
		return err
	}
	defer up.Close()
	gate, err := startGate(up.Addr().String())
	if err != nil {
		return err
	}
	defer gate.stop()
	ha, err := startHAProxy(up.Addr().String())
	if err != nil {
		return err
	}
	defer ha.stop()
	direct := &target{name: "direct", addr: up.Addr().String()}
	viaGate := &target{name: "interlink gate", addr: gate.addr, pid: gate.pid}
	viaHA := &target{name: "haproxy", addr: ha.addr, pid: ha.pid}
	targets := []*target{direct, viaGate, viaHA}
	load0 := loadAverage()
	for r := 0; r < *rounds; r++ {
		if err := round(targets, r); err != nil {
			return err
		}
	}
	fmt.Printf("interlink gate (defaults, --rate 1000000 --burst 100000) vs %s (mode tcp) on loopback: %d rounds;\n"+
		"per round and target %d sequential connections (connect, 64 B request and reply, close) and a %s stream,\n"+
		"each in %d slices alternating with the other targets' (load average before: %s)\n\n",
		haproxyVersion(), *rounds, *conns, *duration, *slices, load0)
	const row = "%-16s %-32s %-32s %s\n"
	fmt.Printf(row, "target", "per connection, med [min..max]", "stream, med [min..max]", "proxy per connection: cpu, context switches")
	for _, t := range targets {
		lm, llo, lhi := goal.Spread(t.lat)
		tm, tlo, thi := goal.Spread(t.thr)
		c := "-"
		if t.pid != 0 {
			c = t.cost.per(t.conns)
		}
		fmt.Printf(row, t.name, fmt.Sprintf("%.1f us [%.1f..%.1f]", lm, llo, lhi), fmt.Sprintf("%.2f Gbit/s [%.2f..%.2f]", tm, tlo, thi), c)
	}
	fmt.Println()
	for _, p := range []*target{viaGate, viaHA} {
		fmt.Printf("%-16s adds %.1f us per connection (%s), streams at %s of direct\n", p.name,
			median(p.lat)-median(direct.lat), spread(p.lat, direct.lat, true), spread(p.thr, direct.thr, false))
	}
	fmt.Println()
	var missed goal.Missed
	fmt.Println(missed.Judge(goal.Ratio{Name: "gate per connection", Op: "<=", Bound: 1, Peer: "HAProxy"}, ratios(viaGate.lat, viaHA.lat)))
	fmt.Println(missed.Judge(goal.Ratio{Name: "gate streaming", Op: ">=", Bound: 1, Peer: "HAProxy"}, ratios(viaGate.thr, viaHA.thr)))
	fmt.Printf("load average after: %s (other work on this machine skews single runs; read medians and spreads)\n", loadAverage())
	return missed.Err()
}

// round measures every target once: its connections and its stream come
// in slices, alternating with the other targets' (the order rotated from
// round to round), so that what other work on the machine does to one
// target it does to the others within the same second, and each round's
// ratio compares like with like.
func round(targets []*target, r int) error {
	lats := make([][]float64, len(targets))
	bytes := make([]int64, len(targets))
	secs := make([]float64, len(targets))
	n := max(*slices, 1)
	for s := 0; s < n; s++ {
		for i := range targets {
			k := (i + r) % len(targets)
			t := targets[k]
			before := costOf(t.pid)
			l, err := connTimes(t.addr, *conns/n)
			if err != nil {
				return fmt.Errorf("%s: %w", t.name, err)
			}
			t.cost = t.cost.add(costOf(t.pid).sub(before))
			b, d, err := stream(t.addr, *duration/time.Duration(n))
			if err != nil {
				return fmt.Errorf("%s: %w", t.name, err)
			}
			lats[k] = append(lats[k], l...)
			bytes[k] += b
			secs[k] += d
		}
	}
	for k, t := range targets {
		t.lat = append(t.lat, median(lats[k]))
		t.thr = append(t.thr, float64(bytes[k])*8/secs[k]/1e9)
		t.conns += len(lats[k])
	}
	return nil
}

func median(xs []float64) float64 {
	m, _, _ := goal.Spread(xs)
	return m
}

// ratios are a[i]/b[i], round by round.
func ratios(a, b []float64) []float64 {
	var rs []float64
	for i := range a {
		rs = append(rs, a[i]/b[i])
	}
	return rs
}

// spread returns "a/b" as a ratio of medians with min..max of the
// per-round ratios; with diff, the per-round differences in us instead.
func spread(a, b []float64, diff bool) string {
	if diff {
		var ds []float64
		for i := range a {
			ds = append(ds, a[i]-b[i])
		}
		_, lo, hi := goal.Spread(ds)
		return fmt.Sprintf("%.1f..%.1f us over rounds", lo, hi)
	}
	_, lo, hi := goal.Spread(ratios(a, b))
	return fmt.Sprintf("%.2fx (%.2f..%.2f)", median(a)/median(b), lo, hi)
}

func loadAverage() string {
	b, _ := os.ReadFile("/proc/loadavg")
	return strings.Fields(string(b) + " ?")[0]
}

func haproxyVersion() string {
	out, _ := exec.Command("haproxy", "-v").Output()
	f := strings.Fields(string(out))
	if len(f) >= 3 {
		return "HAProxy " + strings.SplitN(f[2], "-", 2)[0]
	}
	return "HAProxy"
}
