package traffic

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/roottest"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/interlink/interlink/internal/osthread"
)

// ownLoopback is a loopback of the test's own: a network namespace the
// test creates, with lo up, that goes when the test ends (its last file
// descriptor is closed and the threads that entered it are gone). Both
// ends of a run placed there count their packets in counters no other
// traffic touches: on the host's loopback every other test package of a
// parallel `go test ./...` (and anything else on the machine) adds to the
// same Ip counters. Without root (no CAP_SYS_ADMIN to unshare) it returns
// the host's loopback and false, and the caller leaves out what needs the
// counters to be its own.
func ownLoopback(t *testing.T) (Place, bool) {
	t.Helper()
	if os.Geteuid() != 0 {
		return lo, false
	}
	type made struct {
		fd  int
		err error
	}
	ch := make(chan made, 1)
	// The thread that unshares is changed for good: it ends with this
	// work (osthread.Spent), and the namespace lives on in fd.
	osthread.Spent(func() {
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			ch <- made{err: fmt.Errorf("unshare: %w", err)}
			return
		}
		l, err := netlink.LinkByName("lo")
		if err == nil {
			err = netlink.LinkSetUp(l)
		}
		if err != nil {
			ch <- made{err: fmt.Errorf("lo up: %w", err)}
			return
		}
		fd, err := unix.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		ch <- made{fd: fd, err: err}
	})
	m := <-ch
	if m.err != nil {
		t.Fatalf("own loopback namespace: %v", m.err)
	}
	t.Cleanup(func() { unix.Close(m.fd) })
	do := func(fn func() error) error {
		errc := make(chan error, 1)
		osthread.Spent(func() {
			if err := unix.Setns(m.fd, unix.CLONE_NEWNET); err != nil {
				errc <- fmt.Errorf("enter the test's namespace: %w", err)
				return
			}
			errc <- fn()
		})
		return <-errc
	}
	return Place{Do: do, Addr: lo.Addr}, true
}

// runOwnLo is runLo in a namespace of the test's own (ownLoopback), and
// whether it was (false without root: then on the host's loopback).
func runOwnLo(t *testing.T, ctx context.Context, spec Spec) (*Result, bool) {
	t.Helper()
	p, own := ownLoopback(t)
	return runAt(t, ctx, spec, p), own
}

// TestLoopbackBlocksSharedNetns: a blocks run with both ends in one
// namespace (an agent on loopback) reports an unfragmented 8 KiB block at
// MTU 65536 as 1 fragment and 2 packets both ways (block and request),
// not 2 and 4. On the host's namespace other tests' datagrams would count
// too, so the run has a namespace of its own (root).
func TestLoopbackBlocksSharedNetns(t *testing.T) {
	res, own := runOwnLo(t, context.Background(), Spec{Mode: ModeBlocks, Duration: 200 * time.Millisecond})
	s := res.Flows[0].Summary
	t.Logf("blocks on loopback: %.3f fragments, %.3f packets per block, shared %v", s.FragmentsPerMessage, s.PacketsPerMessage, s.SharedNetns)
	if !s.SharedNetns {
		t.Fatal("both ends in one namespace, not said")
	}
	if !own {
		roottest.Require(t, "the counters need a namespace of its own")
	}
	if s.FragmentsPerMessage < 1 || s.FragmentsPerMessage > 1.02 || s.PacketsPerMessage < 2 || s.PacketsPerMessage > 2.04 {
		t.Errorf("%.3f fragments and %.3f packets per block, want 1 and 2", s.FragmentsPerMessage, s.PacketsPerMessage)
	}
}
