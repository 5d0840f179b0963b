// Command gatecompare measures what `interlink gate` adds to a connection
// against a direct connection and against HAProxy (mode tcp, with a
// maxconn queue: what operators put in front of a database today), on
// loopback, alternating runs, and prints medians and ratios with their
// spread. Part of `make bench`; it installs haproxy with apt-get when
// missing. Both proxies run as users run them: interlink gate as its own
// process with its defaults except a rate and queue high enough not to
// shape the test, HAProxy from a config file in the foreground.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/interlink/interlink/internal/stats"
)

var (
	rounds   = flag.Int("rounds", 5, "runs of each target per measurement (alternating)")
	conns    = flag.Int("conns", 500, "sequential connections per latency run")
	duration = flag.Duration("time", 2*time.Second, "length of each throughput run")
	bin      = flag.String("bin", "bin/interlink", "the interlink binary")
)

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "gatecompare: %v\n", err)
		os.Exit(1)
	}
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
	gateAddr, stopGate, err := startGate(up.Addr().String())
	if err != nil {
		return err
	}
	defer stopGate()
	haAddr, stopHA, err := startHAProxy(up.Addr().String())
	if err != nil {
		return err
	}
	defer stopHA()
	targets := []struct{ name, addr string }{{"direct", up.Addr().String()}, {"interlink gate", gateAddr}, {"haproxy", haAddr}}
	lat := map[string][]float64{}
	thr := map[string][]float64{}
	for r := 0; r < *rounds; r++ {
		for i := range targets {
			t := targets[(i+r)%len(targets)] // rotate the order every round
			l, err := connLatency(t.addr, *conns)
			if err != nil {
				return fmt.Errorf("%s: %w", t.name, err)
			}
			g, err := throughput(t.addr, *duration)
			if err != nil {
				return fmt.Errorf("%s: %w", t.name, err)
			}
			lat[t.name] = append(lat[t.name], l)
			thr[t.name] = append(thr[t.name], g)
		}
	}
	fmt.Printf("interlink gate vs HAProxy on loopback: %d rounds, alternating; %d sequential connections (connect, 64 B request and reply, close) and one %s stream per run\n\n",
		*rounds, *conns, *duration)
	fmt.Printf("%-16s %22s %18s\n", "target", "per connection (med)", "stream (med)")
	for _, t := range targets {
		fmt.Printf("%-16s %19.1f us %13.2f Gbit/s\n", t.name, stats.Median(lat[t.name]), stats.Median(thr[t.name]))
	}
	fmt.Println()
	for _, p := range []string{"interlink gate", "haproxy"} {
		fmt.Printf("%-16s adds %.1f us per connection (%s), streams at %s of direct\n", p,
			stats.Median(lat[p])-stats.Median(lat["direct"]), spread(lat[p], lat["direct"], true), spread(thr[p], thr["direct"], false))
	}
	fmt.Printf("interlink gate / haproxy: per-connection time %s, stream %s\n", spread(lat["interlink gate"], lat["haproxy"], false),
		spread(thr["interlink gate"], thr["haproxy"], false))
	return nil
}

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

func startGate(upstream string) (string, func(), error) {
	addr, err := freeAddr()
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command(*bin, "gate", "--listen", addr, "--upstream", upstream, "--rate", "1000000", "--burst", "100000",
		"--queue", "100000", "--per-source", "100000")
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("start %s gate: %w", *bin, err)
	}
	stop := func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }
	if err := waitListen(addr); err != nil {
		stop()
		return "", nil, fmt.Errorf("interlink gate: %w", err)
	}
	return addr, stop, nil
}

func startHAProxy(upstream string) (string, func(), error) {
	addr, err := freeAddr()
	if err != nil {
		return "", nil, err
	}
	dir, err := os.MkdirTemp("", "gatecompare-")
	if err != nil {
		return "", nil, err
	}
	cfg := filepath.Join(dir, "haproxy.cfg")
	conf := strings.Join([]string{
		"global", "  maxconn 8000",
		"defaults", "  mode tcp", "  timeout connect 5s", "  timeout client 60s", "  timeout server 60s", "  timeout queue 60s",
		"frontend fe", "  bind " + addr, "  default_backend be",
		"backend be", "  server db " + upstream + " maxconn 8000", ""}, "\n")
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	cmd := exec.Command("haproxy", "-db", "-f", cfg)
	var logs strings.Builder
	cmd.Stdout, cmd.Stderr = io.Discard, &logs
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	stop := func() { cmd.Process.Kill(); cmd.Wait(); os.RemoveAll(dir) }
	if err := waitListen(addr); err != nil {
		stop()
		return "", nil, fmt.Errorf("haproxy: %w: %s", err, strings.TrimSpace(logs.String()))
	}
	return addr, stop, nil
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

// connLatency returns the median time in us of n sequential connections,
// each: connect, a 64-byte request, its reply, close.
func connLatency(addr string, n int) (float64, error) {
	req := make([]byte, 64)
	req[0] = 'p'
	times := make([]float64, 0, n)
	for i := 0; i < n; i++ {
		t := time.Now()
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			return 0, err
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Write(req); err != nil {
			c.Close()
			return 0, err
		}
		if _, err := io.ReadFull(c, make([]byte, 64)); err != nil {
			c.Close()
			return 0, err
		}
		c.Close()
		times = append(times, float64(time.Since(t).Microseconds()))
	}
	return stats.Median(times), nil
}

// throughput returns the Gbit/s one connection receives for d.
func throughput(addr string, d time.Duration) (float64, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	req := make([]byte, 64)
	req[0] = 's'
	if _, err := c.Write(req); err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	c.SetReadDeadline(time.Now().Add(d))
	buf := make([]byte, 256<<10)
	var n int64
	start := time.Now()
	for ctx.Err() == nil {
		m, err := c.Read(buf)
		n += int64(m)
		if err != nil {
			break
		}
	}
	return float64(n) * 8 / time.Since(start).Seconds() / 1e9, nil
}

// spread returns "a/b" as a ratio of medians with min..max of the
// per-round ratios; with diff, the per-round differences in us instead.
func spread(a, b []float64, diff bool) string {
	var rs []float64
	for i := range a {
		if diff {
			rs = append(rs, a[i]-b[i])
		} else {
			rs = append(rs, a[i]/b[i])
		}
	}
	sort.Float64s(rs)
	if diff {
		return fmt.Sprintf("%.1f..%.1f us over rounds", rs[0], rs[len(rs)-1])
	}
	return fmt.Sprintf("%.2fx (%.2f..%.2f)", stats.Median(a)/stats.Median(b), rs[0], rs[len(rs)-1])
}
