package lab

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/interlink/interlink/internal/vm"
	"github.com/interlink/interlink/internal/vm/channel"
)

// GuestTimeout bounds how long status waits for a VM node's guest to say
// how its services are (every guest is asked at once). A guest answers in
// well under a second even in software emulation; one that does not
// answer in this time has its services reported ServiceUnknown.
var GuestTimeout = 3 * time.Second

// guestAnswer is what a VM node's guest said about its services, by kind,
// or why it said nothing.
type guestAnswer struct {
	byKind map[string]channel.ServiceAnswer
	err    error
	// onChannel: it was asked on its command channel, which a lab exec
	// command can hold, since it has no status channel (vmState.Status).
	onChannel bool
}

// askGuests asks the guest of every VM node whose qemu runs about its
// services, all at once, each within GuestTimeout: on its status channel,
// which only queries use, so that a command running in the guest (lab
// exec) does not keep the answer; on its command channel when it has none.
// Keyed by node name.
func askGuests(st *state, in *serviceInspector) map[string]*guestAnswer {
	out := map[string]*guestAnswer{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, n := range st.Topology.Nodes {
		// Only a VM node has a VM recorded.
		if len(n.Services) == 0 || !st.vmRunning(n.Name) {
			continue
		}
		var probes []channel.ServiceProbe
		for _, spec := range n.Services {
			// channel.ServiceAgent and channel.ServiceSSHD are the topology's kinds.
			probes = append(probes, channel.ServiceProbe{Kind: spec.Kind, Address: probeAddress(spec, in.addresses(i, spec))})
		}
		g := &guestAnswer{byKind: map[string]channel.ServiceAnswer{}}
		sock := st.vmStatusSocket(n.Name)
		if sock == "" {
			sock, g.onChannel = filepath.Join(st.vmDir(n.Name), vm.ChannelFile), true
		}
		wg.Add(1)
		go func(node string) {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), GuestTimeout)
			defer cancel()
			answers, err := vm.Services(ctx, sock, probes)
			g.err = err
			for _, a := range answers {
				g.byKind[a.Kind] = a
			}
			mu.Lock()
			out[node] = g
			mu.Unlock()
		}(n.Name)
	}
	wg.Wait()
	return out
}

// vmDir is the VM node's directory as recorded: LAB.d/NODE in a lab
// brought up before node directories went to LAB.d/nodes; nodeDir when
// nothing is recorded.
func (st *state) vmDir(node string) string {
	for _, v := range st.VMs {
		if v.Node == node && v.Dir != "" {
			return v.Dir
		}
	}
	return nodeDir(st.Name, node)
}

// vmStatusSocket is the VM node's status channel, as recorded ("" when
// its guest has none).
func (st *state) vmStatusSocket(node string) string {
	for _, v := range st.VMs {
		if v.Node == node {
			return v.Status
		}
	}
	return ""
}

// probeAddress is where a service should take a connection, as a
// namespace node's is probed (serviceInspector.service): the agent on
// loopback, the others on the node's first address.
func probeAddress(spec ServiceSpec, ss ServiceStatus) string {
	if spec.Kind == KindAgent || ss.Address == "" {
		return netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(spec.Port)).String()
	}
	return ss.Address
}

// vmRunning reports whether the VM node's qemu, as recorded, runs.
func (st *state) vmRunning(node string) bool {
	for _, v := range st.VMs {
		if v.Node == node && v.PID != 0 {
			return vmAlive(v)
		}
	}
	return false
}

// serviceStatus is a VM node's service as its guest says (vmServiceStatus);
// the first asks every guest at once (askGuests).
func (vmNode) serviceStatus(in *serviceInspector, i int, spec ServiceSpec) ServiceStatus {
	in.askGuests.Do(func() { in.guests = askGuests(in.st, in) })
	n := &in.t.Nodes[i]
	return vmServiceStatus(in.st, n, in.addresses(i, spec), in.guests[n.Name])
}

// vmServiceStatus is a VM node's service as its guest, asked just now,
// says it is (g: nil when the guest was not asked, its VM not running).
// Running means what it means in a namespace node: the process started
// for it lives (the guest tracks it by the PID it started) and a connect
// to where it should listen is taken.
func vmServiceStatus(st *state, n *NodeSpec, ss ServiceStatus, g *guestAnswer) ServiceStatus {
	switch ss.Kind {
	case KindAgent:
		ss.TokenFile = tokenFile(st.Name)
		ss.Detail = "inside the VM (PID in the guest)"
	case KindSSHD:
		ss.Detail = fmt.Sprintf("root with -i %s, host keys in %s", SSHIdentityFile(st.Name), SSHKnownHostsFile(st.Name))
	}
	ss.State = ServiceNotStarted
	recorded := false
	for _, v := range st.VMs {
		recorded = recorded || (v.Node == n.Name && v.PID != 0)
	}
	if !recorded {
		return ss
	}
	ss.State = ServiceStopped
	if g == nil {
		// askGuests asked every VM node whose qemu runs.
		ss.Reason = "its VM is not running"
		return ss
	}
	if g.err != nil {
		ss.State = ServiceUnknown
		ss.Reason = fmt.Sprintf("guest not answering within %s", GuestTimeout)
		switch {
		case !errors.Is(g.err, vm.ErrNotAnswering):
			ss.Reason = "guest not answering: " + g.err.Error()
		case g.onChannel:
			// Busy or hung: without a status channel, status cannot tell.
			ss.Reason += " on its command channel, which a lab exec command may hold (no status channel: the lab was brought up by an older interlink, or the guest's kernel has no ttyS2)"
		}
		return ss
	}
	a, ok := g.byKind[ss.Kind]
	switch {
	case !ok || a.PID == 0:
		ss.Reason = a.Error
		if !ok {
			ss.Reason = "the guest did not answer for " + ss.Kind
		}
	case !a.Alive:
		ss.Reason = "process " + strconv.Itoa(a.PID) + " in the guest has exited"
	case !a.Listening:
		ss.PID = a.PID
		// The guest's dial error names the address.
		ss.Reason = fmt.Sprintf("process %d lives in the guest but takes no connection (%s)", a.PID, a.Error)
	default:
		ss.State, ss.PID = ServiceRunning, a.PID
	}
	return ss
}
