//go:build linux

package labtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/interlink/interlink/internal/counters"
	"github.com/interlink/interlink/internal/lab"
	"github.com/interlink/interlink/internal/storm"
)

// Storm parameters: the lab's PostgreSQL keeps its default max_connections
// (100); each session is held 4 s after its logon, as a pool would. Straight
// at the server, logons complete at what its CPU allows (about 40/s on two
// cores with SCRAM), so more than 100 sessions would be open at once after
// 2.5 s: refusals. The gate admits 20/s, which the server absorbs and
// which keeps about 80 open; 200 clients pass it in 10 s, the 160 between
// the 10th and the 90th percentile give its rate.
const (
	stormClients = 200
	stormSources = 20
	stormHold    = "4s"
	gateRate     = 20.0
	gateBurst    = 5
)

// stormThroughGate runs a logon storm from the client node of the pg lab
// name (TestPGLab's, up) against the primary, its DSN from `lab status
// --json`, first straight at PostgreSQL and then through `interlink gate` on the
// primary node, as users run both: clients fail straight at the server;
// through the gate none fails, the logons arrive at the server at the
// gate's rate, each waits about its place in the queue divided by the
// rate, sources are served fairly, and the gate's accept queue never
// overflows.
func stormThroughGate(t *testing.T, name string) {
	var doc labDoc
	r := run(t, "lab", "status", name, "--json")
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || len(doc.Labs) != 1 {
		t.Fatalf("lab status --json: %v: %s", err, r.stdout)
	}
	dsn, err := url.Parse(service(t, doc.Labs[0], "primary", "postgres").DSN)
	if err != nil {
		t.Fatal(err)
	}
	password, _ := dsn.User.Password()
	l, err := lab.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	client, primary := mustNode(t, l, "client"), mustNode(t, l, "primary")

	// The client node speaks from 20 addresses of the public network, as 20
	// application servers would.
	base := netip.MustParseAddr("198.18.99.100")
	err = client.Do(func() error {
		link, err := netlink.LinkByName("eth0")
		if err != nil {
			return err
		}
		for a, i := base, 0; i < stormSources; a, i = a.Next(), i+1 {
			if err := netlink.AddrAdd(link, &netlink.Addr{IPNet: &net.IPNet{IP: a.AsSlice(), Mask: net.CIDRMask(24, 32)}}); err != nil {
				return fmt.Errorf("add %s: %w", a, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	stormArgs := func(target string) []string {
		return []string{"storm", target, "--protocol", "postgres", "--user", "postgres", "--clients", fmt.Sprint(stormClients),
			"--sources", fmt.Sprint(stormSources), "--source-base", base.String(), "--hold", stormHold, "--timeout", "60s", "--json"}
	}

	// Straight at the server.
	direct := runStorm(t, client, password, stormArgs("198.18.99.1:5432"))
	t.Logf("direct: %d logged on, %d failed %v in %v", direct.LoggedOn, direct.Failed, direct.Errors, time.Duration(direct.Duration))
	if direct.LoggedOn == 0 || direct.Failed == 0 || direct.Errors["too many connections"] == 0 {
		t.Errorf("direct storm of %d against max_connections 100: %d logged on, %d failed %v; want some of each, refusals among them",
			stormClients, direct.LoggedOn, direct.Failed, direct.Errors)
	}

	// Through the gate, on the primary node in front of its listener.
	gate := exec.Command(binary, "gate", "--listen", "198.18.99.1:6432", "--upstream", "198.18.99.1:5432",
		"--rate", fmt.Sprint(gateRate), "--burst", fmt.Sprint(gateBurst), "--queue", "1000", "--per-source", "100", "--queue-timeout", "60s")
	var gateLog bytes.Buffer
	gate.Stdout, gate.Stderr = &gateLog, &gateLog
	gate.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := primary.Start(gate); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gate.Process.Kill(); gate.Wait() })
	waitListening(t, client, "198.18.99.1:6432")
	before := listenOverflows(t, primary)
	res := runStorm(t, client, password, stormArgs("198.18.99.1:6432"))
	overflows := listenOverflows(t, primary) - before
	t.Logf("through the gate: %d logged on, %d failed %v in %v; fairness %v; ListenOverflows +%d",
		res.LoggedOn, res.Failed, res.Errors, time.Duration(res.Duration), *res.Fairness, overflows)
	if res.Failed != 0 || res.LoggedOn != stormClients {
		t.Fatalf("through the gate: %d logged on, %d failed %v; want all %d (gate log: %s)", res.LoggedOn, res.Failed, res.Errors, stormClients, gateLog.String())
	}
	if overflows != 0 {
		t.Errorf("the gate's accept queue overflowed %d times", overflows)
	}
	if res.Fairness == nil || *res.Fairness < 0.9 {
		t.Errorf("Jain's fairness across sources %v, want >= 0.9", res.Fairness)
	}
	// The server's first byte follows each admission at once, so the
	// first-byte times are the admission times: their slope between the
	// 10th and the 90th client is the rate at which logons reached the
	// server, and each client waited about its place over the rate.
	first := make([]int64, 0, len(res.Clients))
	for _, c := range res.Clients {
		first = append(first, c.FirstNs)
	}
	slices.Sort(first)
	lo, hi := len(first)/10, len(first)*9/10
	rate := float64(hi-lo) / (time.Duration(first[hi] - first[lo]).Seconds())
	t.Logf("logons reached the server at %.2f/s (gate --rate %.0f)", rate, gateRate)
	// Never faster than the gate's rate, nor a client before its place
	// over the rate; slower only by a lot (a stall on a loaded machine
	// costs the bucket tokens: those bounds only catch a stuck gate).
	if rate < gateRate/2 || rate > 1.05*gateRate {
		t.Errorf("arrival rate at the server %.2f/s, want at most %.0f (and more than half of it)", rate, gateRate)
	}
	for _, k := range []int{lo, len(first) / 2, hi} {
		want := time.Duration(float64(k-gateBurst) / gateRate * float64(time.Second))
		if got := time.Duration(first[k]); got < want-500*time.Millisecond || got > 2*want+time.Second {
			t.Errorf("client %d in the queue got its first byte after %v, want about %v (place / rate)", k, got, want)
		}
	}
}

func mustNode(t *testing.T, l *lab.Lab, name string) *lab.Node {
	t.Helper()
	n, err := l.Node(name)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// runStorm runs `interlink storm` in node n and decodes its JSON.
func runStorm(t *testing.T, n *lab.Node, password string, args []string) storm.Result {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "PGPASSWORD="+password)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := n.Start(cmd); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(3*time.Minute, func() { cmd.Process.Kill() })
	cmd.Wait()
	timer.Stop()
	var res storm.Result
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("storm %s: %v: %s%s", strings.Join(args, " "), err, out.String(), errb.String())
	}
	return res
}

// waitListening waits until addr accepts a connection from node n.
func waitListening(t *testing.T, n *lab.Node, addr string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		err := n.Do(func() error {
			c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
			if err == nil {
				c.Close()
			}
			return err
		})
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not listening: %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// listenOverflows reads TcpExt ListenOverflows in node n.
func listenOverflows(t *testing.T, n *lab.Node) int64 {
	t.Helper()
	var v int64
	err := n.Do(func() error {
		f, err := os.Open("/proc/thread-self/net/netstat")
		if err != nil {
			return err
		}
		defer f.Close()
		tab, err := counters.ParseSNMP(f, nil)
		if err != nil {
			return err
		}
		v, _ = tab.Get("TcpExt", "ListenOverflows")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}
