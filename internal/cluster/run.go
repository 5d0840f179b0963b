package cluster

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/interlink/interlink/internal/agent"
	"github.com/interlink/interlink/internal/mesh"
	"github.com/interlink/interlink/internal/parallel"
	"github.com/interlink/interlink/internal/wire"
)

// Options tune Run. Zero values take the defaults named.
type Options struct {
	User       string   // default login user (inventory host variables win)
	Identities []string // identity files (default: ~/.ssh/config's, then ~/.ssh/id_*)
	KnownHosts []string // known_hosts files (default: ~/.ssh/known_hosts, /etc/ssh/ssh_known_hosts)
	SSHConfig  SSHConfig
	Parallel   int           // nodes set up and cleaned up at once (default 8)
	Connect    time.Duration // SSH connect and handshake timeout (default 10s)
	// Stall cuts a node off when a transfer to or from it (the binary's
	// copy, the token, the check bundle) stands still this long: nothing
	// taken, arrived or acknowledged (default DefaultStall). It is named
	// a stall, with the likely cause, and the node is cleaned up over a
	// new connection.
	Stall     time.Duration
	AgentPort int // the agents' port (default wire.DefaultPort)
	// AgentLifetime bounds how long an agent outlives a run that was
	// killed before it could clean up (default 15m).
	AgentLifetime time.Duration
	// Collect, when set, is a local directory for each node's check
	// bundle (NAME.tar.gz, like check --collect).
	Collect string
	Probe   agent.ProbeOptions
	// Binary is this interlink's executable (default os.Executable).
	Binary   string
	Software string
	// Bench, when set (blocks, tcp or udp), runs interlink bench for
	// BenchTime (default 3s) from each node to the next after the mesh
	// (see Bench); BenchGC runs one bench --mode gc over every node for
	// BenchTime instead (see GC).
	Bench     string
	BenchTime time.Duration
	// Clusterware, when set, is where the hosts came from: each node's
	// check runs with GRID_HOME set to its grid home, and the interconnect
	// addresses of the hosts that name none are found on the node itself
	// (see InterconnectAddrs).
	Clusterware *Clusterware
	// Progress, when set, is told each node's steps. Calls are serialised.
	Progress func(node, step string)
}

// cleanupTimeout bounds the cleanup of one node after the run, even when
// the run was interrupted.
const cleanupTimeout = 20 * time.Second

// stopGrace bounds the cleanup of every node once the run's ctx has ended
// (Ctrl-C, --timeout): the run returns by then, whatever a node does.
const stopGrace = 10 * time.Second

// MeshFrom is where the mesh is orchestrated from: this host, with each
// agent's control session carried inside that node's SSH connection. The
// operator's host needs no route to the agents' port (only SSH, which the
// run already needs), no node has to hold the orchestration state, and
// Ctrl-C stops the mesh and the cleanup from one place.
const MeshFrom = "this host, control sessions tunnelled through each node's SSH connection"

// Run runs interlink on every host. It returns a Result covering every
// host; a host that cannot be reached or fails a step is reported in its
// NodeResult and does not stop the others. When ctx ends first, Run stops
// what is under way, still cleans up every node, and returns the partial
// Result with Stopped set and the error context.Cause(ctx), within
// stopGrace of ctx's end: every SSH operation under way is cut off then
// (its TCP connection closed), and the cleanup that follows has that long.
func Run(ctx context.Context, hosts []Host, opt Options) (*Result, error) {
	start := time.Now()
	opt = opt.withDefaults()
	bin, binSum, token, err := runInputs(opt.Binary)
	if err != nil {
		return nil, err
	}
	res := &Result{Schema: Schema, MeshFrom: MeshFrom, Parallel: opt.Parallel}
	nodes := make([]*node, len(hosts))
	res.Nodes = make([]NodeResult, len(hosts))
	for i, h := range hosts {
		t := Resolve(h, opt.SSHConfig, opt)
		res.Nodes[i] = NodeResult{Name: h.Name, HostName: t.HostName, User: t.User, Port: t.Port, Interconnect: h.Interconnect}
		nodes[i] = &node{t: t, res: &res.Nodes[i], connect: opt.Connect, stall: opt.Stall}
	}
	var mu sync.Mutex
	progress := func(n *node, step string) {
		if opt.Progress != nil {
			mu.Lock()
			opt.Progress(n.res.Name, step)
			mu.Unlock()
		}
	}
	defer func() {
		for _, n := range nodes {
			if n.link != nil {
				n.link.Close()
			}
		}
	}()

	parallel.Run(len(nodes), opt.Parallel, func(i int) {
		n := nodes[i]
		t0 := time.Now()
		defer func() { n.res.Elapsed += time.Since(t0) }()
		if err := n.setup(ctx, opt, bin, binSum, token, progress); err != nil {
			n.fail(ctx, err)
		}
	})

	if cw := opt.Clusterware; cw != nil {
		var derive []*NodeResult
		for i, n := range nodes {
			if n.res.Status == "" && n.pid > 0 && len(hosts[i].Interconnect) == 0 {
				derive = append(derive, n.res)
			}
		}
		alignInterconnect(cw, derive)
		res.Clusterware = cw
	}

	stopCut := cutAllOnEnd(ctx, nodes)
	upNodes := runMesh(ctx, res, nodes, opt, token, progress)
	runBench(ctx, res, nodes, upNodes, &opt, progress)
	stopCut()

	cleanupAll(ctx, nodes, opt.Parallel, progress)
	res.Elapsed = time.Since(start)
	if ctx.Err() != nil {
		err := context.Cause(ctx)
		res.Stopped = err.Error()
		return res, err
	}
	return res, nil
}

// cutAllOnEnd makes the run's end cut every link at once, from here on
// until the returned function is called: the mesh's control sessions and
// the bench run in them. (Each command of the setup cut its own; a run
// that has already ended runs neither and leaves its idle links to the
// cleanup.) The cleanup makes new links where it must.
func cutAllOnEnd(ctx context.Context, nodes []*node) (stop func()) {
	if ctx.Err() != nil {
		return func() {}
	}
	var links []*link
	for _, n := range nodes {
		if n.link != nil {
			links = append(links, n.link)
		}
	}
	return cutOnEnd(ctx, nil, links...)
}

// withDefaults returns opt with the defaults named on Options filled in.
func (opt Options) withDefaults() Options {
	if opt.Parallel <= 0 {
		opt.Parallel = 8
	}
	if opt.Connect <= 0 {
		opt.Connect = 10 * time.Second
	}
	if opt.Stall <= 0 {
		opt.Stall = DefaultStall
	}
	if opt.AgentPort == 0 {
		opt.AgentPort = wire.DefaultPort
	}
	if opt.AgentLifetime <= 0 {
		opt.AgentLifetime = 15 * time.Minute
	}
	return opt
}

// runInputs reads the binary every node is given (binPath, or this
// executable when empty) and its SHA-256, and makes the run's agent token
// (newline-terminated, as written to each node).
func runInputs(binPath string) (bin []byte, binSum string, token []byte, err error) {
	if binPath == "" {
		p, err := os.Executable()
		if err != nil {
			return nil, "", nil, fmt.Errorf("find this binary: %w", err)
		}
		binPath = p
	}
	bin, err = os.ReadFile(binPath)
	if err != nil {
		return nil, "", nil, fmt.Errorf("read this binary: %w", err)
	}
	tok := make([]byte, 32)
	rand.Read(tok)
	return bin, sha256Hex(bin), []byte(base64.StdEncoding.EncodeToString(tok) + "\n"), nil
}

// runMesh runs one mesh over every node whose agent listens (res.Mesh,
// or res.MeshSkipped saying why not) and returns those nodes. A node SSH
// reached at the same address as another fails here.
func runMesh(ctx context.Context, res *Result, nodes []*node, opt Options, token []byte, progress func(*node, string)) []*node {
	var up []mesh.Node
	var upNodes []*node
	byAddr := map[string]*node{}
	for _, n := range nodes {
		if n.res.Status == "" && n.pid > 0 {
			if other := byAddr[n.res.Agent]; other != nil {
				n.fail(ctx, &remoteError{step: "mesh", msg: fmt.Sprintf("SSH reached it at the same address as %s (%s): the agents cannot tell them apart", other.res.Name, n.res.Agent)})
				continue
			}
			byAddr[n.res.Agent] = n
			upNodes = append(upNodes, n)
			up = append(up, mesh.Node{Name: n.res.Name, Agent: n.res.Agent, Addrs: n.res.Interconnect})
		}
	}
	switch {
	case ctx.Err() != nil:
		res.MeshSkipped = "the run stopped first"
	case len(up) < 2:
		res.MeshSkipped = fmt.Sprintf("needs agents on at least 2 nodes, %d started", len(up))
	default:
		dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
			n := byAddr[addr]
			if n == nil {
				var d net.Dialer
				return d.DialContext(ctx, network, addr)
			}
			c, err := n.link.DialContext(ctx, network, addr)
			var oce *ssh.OpenChannelError
			if errors.As(err, &oce) && oce.Reason == ssh.Prohibited {
				// sshd forbids forwarding: go direct.
				var d net.Dialer
				return d.DialContext(ctx, network, addr)
			}
			return c, err
		}
		for _, n := range byAddr {
			progress(n, "mesh")
		}
		m, _ := mesh.Run(ctx, up, mesh.Options{Token: trimNL(token), Probe: opt.Probe, Software: opt.Software, Dial: dial})
		res.Mesh = m
	}
	return upNodes
}

// runBench runs the bench opt asks for, if any, over the nodes whose
// agent listens (upNodes), into res.GC or res.Bench; it sets
// opt.BenchTime's default.
func runBench(ctx context.Context, res *Result, nodes, upNodes []*node, opt *Options, progress func(*node, string)) {
	if opt.Bench != "" && opt.BenchTime <= 0 {
		opt.BenchTime = 3 * time.Second
	}
	if opt.Bench == BenchGC {
		res.GC = benchGC(ctx, nodes, upNodes, opt.BenchTime, progress)
	} else if opt.Bench != "" {
		res.Bench = benchRing(ctx, upNodes, opt.Bench, opt.BenchTime, opt.AgentPort, progress)
		if ctx.Err() != nil && res.Bench.Skipped == "" && len(res.Bench.Pairs) == 0 {
			res.Bench.Skipped = "the run stopped first"
		}
	}
}

// cleanupAll cleans up every node, even after Ctrl-C: each within
// cleanupTimeout, all within stopGrace of the run's end, and all at once
// when it has ended (the cleanup is one short command per node). A node
// without a status is then StatusOK.
func cleanupAll(ctx context.Context, nodes []*node, par int, progress func(*node, string)) {
	cctx, stopClean := context.WithCancelCause(context.WithoutCancel(ctx))
	defer stopClean(nil)
	graceOver := context.AfterFunc(ctx, func() {
		time.AfterFunc(stopGrace, func() {
			stopClean(fmt.Errorf("cleanup cut off %s after the run stopped (%v)", stopGrace, context.Cause(ctx)))
		})
	})
	defer graceOver()
	if ctx.Err() != nil {
		par = max(par, min(len(nodes), 64))
	}
	parallel.Run(len(nodes), par, func(i int) {
		n := nodes[i]
		t0 := time.Now()
		if n.dir != "" || n.pid > 0 {
			step := n.stepper(progress)
			step("cleanup")
			c, cancel := context.WithTimeout(cctx, cleanupTimeout)
			n.cleanup(c)
			cancel()
			step("")
		}
		if n.link == nil || (n.res.Cleanup.Error == "" && n.res.TempDir == "") {
			n.res.Cleanup.Done = n.res.Cleanup.Error == ""
		}
		if n.res.Status == "" {
			n.res.Status = StatusOK
		}
		n.res.Elapsed += time.Since(t0)
	})
}

// setup connects to the node and runs every step before the mesh.
func (n *node) setup(ctx context.Context, opt Options, bin []byte, binSum string, token []byte, progress func(*node, string)) error {
	step := n.stepper(progress)
	step("connect")
	defer step("")
	l, notes, err := n.dial(ctx)
	n.res.Notes = append(n.res.Notes, notes...)
	if err != nil {
		return err
	}
	n.link = l
	a, err := n.agentAddr(opt.AgentPort)
	if err != nil {
		return err
	}
	n.res.Agent = a.String()
	// The agent listens on the family of the address SSH reached: the
	// other agents and this host reach it there.
	listen := fmt.Sprintf("0.0.0.0:%d", opt.AgentPort)
	if a.Addr().Is6() {
		listen = fmt.Sprintf("[::]:%d", opt.AgentPort)
	}
	step("copy")
	if err := n.prepare(ctx, bin, binSum, token); err != nil {
		return err
	}
	step("agent")
	if err := n.startAgent(ctx, listen, opt.AgentLifetime); err != nil {
		return err
	}
	step("check")
	gridHome := ""
	if opt.Clusterware != nil {
		gridHome = opt.Clusterware.GridHome
	}
	if err := n.check(ctx, opt.Collect != "", gridHome); err != nil {
		// A check that cannot run is recorded; the mesh still runs.
		if ctx.Err() != nil {
			return err
		}
		n.res.CheckError = err.Error()
		return nil
	}
	if opt.Collect != "" {
		step("bundle")
		if err := n.fetchBundle(ctx, opt.Collect); err != nil {
			if ctx.Err() != nil {
				return err
			}
			n.res.Notes = append(n.res.Notes, err.Error())
		}
	}
	return nil
}

func trimNL(b []byte) []byte { return b[:len(b)-1] }
