package db

import (
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/interlink/interlink/internal/counters"
)

// localMeter snapshots this node's counters at the start of the run.
type localMeter struct {
	before *counters.Snapshot
	cpu0   time.Duration
}

func startLocal() (*localMeter, error) {
	s, err := counters.Take()
	if err != nil {
		return nil, err
	}
	return &localMeter{before: s, cpu0: processCPU()}, nil
}

func (m *localMeter) stop(l *Local, tx int64) error {
	after, err := counters.Take()
	if err != nil {
		return err
	}
	localFromDelta(l, counters.Sub(m.before, after), processCPU()-m.cpu0, tx)
	return nil
}

// processCPU is this process's user + system time (the workload driver).
func processCPU() time.Duration {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// routeInterface names the interface the kernel routes addr through (as
// `ip route get ADDR` does), in the calling thread's namespace.
func routeInterface(addr netip.Addr) (string, error) {
	routes, err := netlink.RouteGet(net.IP(addr.Unmap().AsSlice()))
	if err != nil {
		return "", fmt.Errorf("route to %s: %w", addr, err)
	}
	if len(routes) == 0 || routes[0].LinkIndex == 0 {
		return "", fmt.Errorf("route to %s: no interface", addr)
	}
	ifc, err := net.InterfaceByIndex(routes[0].LinkIndex)
	if err != nil {
		return "", fmt.Errorf("route to %s: %w", addr, err)
	}
	return ifc.Name, nil
}
