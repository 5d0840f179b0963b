package agent

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"

	"github.com/interlink/interlink/internal/inventory"
	"github.com/interlink/interlink/internal/units"
)

// The agent's default send limit per session (Limits.MaxRateBitsPerSec
// zero, `interlink agent --max-rate auto`) is an abuse guard, not a shaper:
// it must never be what a benchmark measures. It is RateSpeedMultiple times
// the speed of the interface the session arrived on, and at least
// RateFloorBitsPerSec.
//
//   - The multiple leaves headroom over the line rate: the bucket counts
//     payload bytes, a bond reports the sum of its members, and a reply can
//     leave by a sibling port of the same speed; the wire bounds a single
//     session before the guard does.
//   - The floor covers interfaces without a line rate: veth, bridges,
//     loopback and tunnels either report no speed or a made-up one (veth
//     says 10000 Mbit/s and moves data as fast as the CPU copies it: 20 to
//     40 Gbit/s per TCP stream on current hosts). 40 Gbit/s is above what
//     one session pushes through a virtual link on this class of machine,
//     and still bounds a runaway client on a lab or container host.
//
// A run that the limit held back anyway is reported as limited by it.
const (
	RateSpeedMultiple   = 2
	RateFloorBitsPerSec = 40e9
)

// AutoRate is the default send limit for a session whose control
// connection arrived on local, and a phrase saying how it was chosen.
func AutoRate(local netip.Addr) (bitsPerSec float64, basis string) {
	name, speed := interfaceSpeed(local)
	if speed > 0 && RateSpeedMultiple*speed > RateFloorBitsPerSec {
		return RateSpeedMultiple * speed, fmt.Sprintf("%d x the %s of %s", RateSpeedMultiple, units.FormatRate(speed), name)
	}
	switch {
	case name == "":
		return RateFloorBitsPerSec, "floor: interface unknown"
	case speed > 0:
		return RateFloorBitsPerSec, fmt.Sprintf("floor: %s is %s", name, units.FormatRate(speed))
	default:
		return RateFloorBitsPerSec, fmt.Sprintf("floor: %s has no line rate", name)
	}
}

// interfaceSpeed finds the interface holding addr and its line rate in
// bit/s from sysfs; 0 when the interface is virtual (no device behind it:
// veth, bridge, loopback, tunnel; bonds, teams and VLANs count, they pass
// on their members' speeds) or reports none.
func interfaceSpeed(addr netip.Addr) (name string, bitsPerSec float64) {
	ifs, err := net.Interfaces()
	if err != nil {
		return "", 0
	}
	addr = addr.Unmap()
	for _, ifc := range ifs {
		as, _ := ifc.Addrs()
		for _, a := range as {
			p, err := netip.ParsePrefix(a.String())
			if err != nil || p.Addr().Unmap() != addr {
				continue
			}
			return ifc.Name, sysfsSpeed(ifc.Name)
		}
	}
	return "", 0
}

func sysfsSpeed(ifname string) float64 {
	dir := filepath.Join("/sys/class/net", ifname)
	if _, err := os.Stat(filepath.Join(dir, "device")); err != nil {
		ue, _ := os.ReadFile(filepath.Join(dir, "uevent"))
		if !strings.Contains(string(ue), "DEVTYPE=bond") && !strings.Contains(string(ue), "DEVTYPE=vlan") &&
			!strings.Contains(string(ue), "DEVTYPE=team") {
			return 0
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "speed"))
	if err != nil {
		return 0
	}
	// Not the number as read: 3.10 prints an unknown speed as 4294967295.
	return float64(inventory.ParseSpeed(string(b)))
}
