package inventory

import (
	"encoding/json"
	"strings"
	"time"
)

// Interface is one network interface as the kernel reports it in
// /sys/class/net. A speed the kernel would not give (a virtual or down
// link) is 0 and absent in JSON; so is a carrier it would not give (nil).
type Interface struct {
	Name string `json:"name"`
	// Kind is the interface's place in the stack: bond-slave or bridge-port
	// when it has a master, otherwise its Type.
	Kind string `json:"kind"`
	// Type is the device itself: physical, bond, bridge, vlan, veth, tun,
	// loopback, virtual (dummy, ifb and other software devices).
	Type      string `json:"type"`
	MTU       int    `json:"mtu"`
	OperState string `json:"operstate"` // up, down, lowerlayerdown, unknown, ...
	// Carrier is 1 with a link detected, 0 without; nil (absent) when
	// the kernel would not give it (an interface down refuses the read).
	Carrier         *int   `json:"carrier,omitempty"`
	SpeedBitsPerSec int64  `json:"speed_bits_per_sec,omitempty"` // 0 (absent) when the kernel does not know
	Flags           uint64 `json:"flags"`                        // IFF_* from /sys/class/net/IF/flags
	MAC             string `json:"mac,omitempty"`                // hardware address
	// Driver is the kernel driver bound to the interface's device
	// (virtio_net, ixgbe, mlx5_core): the base name of the
	// /sys/class/net/IF/device/driver link. Empty for software links
	// (bond, bridge, veth, vlan, lo), which have no device.
	Driver     string   `json:"driver,omitempty"`
	Master     string   `json:"master,omitempty"`  // bond or bridge this interface belongs to
	Parent     string   `json:"parent,omitempty"`  // lower device of a vlan
	VLANID     int      `json:"vlan_id,omitempty"` // 802.1Q id of a vlan
	Ports      []string `json:"ports,omitempty"`   // slaves of a bond, ports of a bridge
	Addresses  []string `json:"addresses"`         // CIDR, IPv4 then IPv6
	Bond       *Bond    `json:"bond,omitempty"`
	SysfsPath  string   `json:"sysfs"` // /sys/class/net/IF, for evidence
	IfIndex    int      `json:"ifindex"`
	LinkTarget string   `json:"device_path,omitempty"` // where /sys/class/net/IF points
}

// UnmarshalJSON reads what encoding/json writes of an Interface, and the
// results of earlier versions, which wrote an unreadable carrier as -1:
// that is read as not known (nil), never as a carrier value.
func (i *Interface) UnmarshalJSON(data []byte) error {
	type plain Interface // without this method
	if err := json.Unmarshal(data, (*plain)(i)); err != nil {
		return err
	}
	if i.Carrier != nil && *i.Carrier < 0 {
		i.Carrier = nil
	}
	return nil
}

// IFF flags read from /sys/class/net/IF/flags (linux/if.h).
const (
	FlagUp        = 0x1
	FlagLoopback  = 0x8
	FlagMulticast = 0x1000
)

// Up reports whether the interface is administratively up and, where the
// kernel tracks it, running.
func (i *Interface) Up() bool {
	return i.OperState == "up" || i.OperState == "unknown" && i.Flags&FlagUp != 0
}

// File returns the sysfs file of attribute attr ("mtu", "operstate").
func (i *Interface) File(attr string) string { return "/sys/class/net/" + i.Name + "/" + attr }

// Bond is a bonding master's configuration and its slaves' state.
type Bond struct {
	Mode        string        `json:"mode"` // active-backup, 802.3ad, balance-rr, ...
	MIIStatus   string        `json:"mii_status,omitempty"`
	ActiveSlave string        `json:"active_slave,omitempty"`
	MIIPolling  time.Duration `json:"miimon_ns"`
	Slaves      []BondSlave   `json:"slaves"`
	File        string        `json:"file"` // /proc/net/bonding/BOND or the sysfs directory
}

// BondSlave is one slave as /proc/net/bonding lists it.
type BondSlave struct {
	Name            string `json:"name"`
	MIIStatus       string `json:"mii_status"`
	SpeedBitsPerSec int64  `json:"speed_bits_per_sec,omitempty"` // 0 (absent) unknown
	LinkFailures    int    `json:"link_failures"`
	PermanentAddr   string `json:"permanent_mac,omitempty"`
	Driver          string `json:"driver,omitempty"` // the slave interface's driver, as Interface.Driver
}

// PersistedConfig is what the network configuration on disk will apply at
// the next boot for one interface.
type PersistedConfig struct {
	Interface string `json:"interface"`
	MTU       int    `json:"mtu,omitempty"` // 0: not set (the default applies)
	// MTULine is the line of File that sets the MTU (0 when not set).
	MTULine int    `json:"mtu_line,omitempty"`
	File    string `json:"file"`
	Format  string `json:"format"`           // ifcfg, networkmanager, netplan, interfaces
	Type    string `json:"type,omitempty"`   // ethernet, bond, bridge, vlan, ... when the file says
	Master  string `json:"master,omitempty"` // bond or bridge it is enslaved to
	// OnBoot is false when the file says the interface is not brought up at
	// boot (ONBOOT=no, autoconnect=false, no "auto" line).
	OnBoot bool `json:"onboot"`
	// MAC is the hardware address a profile is bound to when it names no
	// interface (a NetworkManager keyfile with only mac-address=).
	MAC string `json:"mac,omitempty"`
	// Connection is a NetworkManager profile's name (connection.id, else
	// the keyfile's name), what nmcli connection modify is given.
	Connection string `json:"connection,omitempty"`
}

// Counters holds the kernel counters docs/check.md lists. Without an
// interval they are totals since boot; with one, Delta and PerSec of each
// counter are set from two samples Interval apart.
type Counters struct {
	IntervalNs time.Duration `json:"interval_ns"` // 0: one sample, totals only
	Kernel     []Counter     `json:"kernel"`
	Interfaces []IfCounters  `json:"interfaces"`
}

// Counter is one kernel counter ("Ip ReasmFails").
type Counter struct {
	Group  string   `json:"group"` // Ip, Udp, TcpExt, ...
	Name   string   `json:"name"`
	File   string   `json:"file"`
	Total  int64    `json:"total"`
	Delta  *int64   `json:"delta,omitempty"`
	PerSec *float64 `json:"per_sec,omitempty"`
}

// IfCounters are one interface's error counters from
// /sys/class/net/IF/statistics.
type IfCounters struct {
	Interface string    `json:"interface"`
	Counters  []Counter `json:"counters"` // Group is the interface name
}

// Cluster is what Oracle Clusterware's own configuration on the node says.
type Cluster struct {
	GPnPProfile string           `json:"gpnp_profile"`
	Networks    []ClusterNetwork `json:"networks"`
}

// ClusterNetwork is one <gpnp:Network> of the GPnP profile.
type ClusterNetwork struct {
	Adapter string `json:"adapter"` // interface name, may be a pattern like eth*
	Subnet  string `json:"subnet"`
	Use     string `json:"use"` // public, cluster_interconnect, asm, ... comma separated
}

// Interconnect reports whether the network carries the private interconnect.
func (n ClusterNetwork) Interconnect() bool {
	for _, u := range strings.Split(n.Use, ",") {
		if strings.TrimSpace(u) == "cluster_interconnect" {
			return true
		}
	}
	return false
}

// Interface returns the interface called name, or nil.
func (inv *Inventory) Interface(name string) *Interface {
	for i := range inv.Interfaces {
		if inv.Interfaces[i].Name == name {
			return &inv.Interfaces[i]
		}
	}
	return nil
}

// PersistedFor returns the persisted configurations of interface name.
func (inv *Inventory) PersistedFor(name string) []PersistedConfig {
	var out []PersistedConfig
	for _, p := range inv.Persisted {
		if p.Interface == name {
			out = append(out, p)
		}
	}
	return out
}

// Section returns the status of the named section, or nil.
func (inv *Inventory) Section(name string) *Section {
	for i := range inv.Sections {
		if inv.Sections[i].Name == name {
			return &inv.Sections[i]
		}
	}
	return nil
}

func (inv *Inventory) addSection(name, status, detail string) {
	inv.Sections = append(inv.Sections, Section{Name: name, Status: status, Detail: detail})
}

// gatherNetwork reads interfaces, addresses, persisted configuration and
// sysctls; Gather reads the cluster profile and the counters after it.
func gatherNetwork(src *Source, inv *Inventory) {
	gatherInterfaces(src, inv)
	gatherAddresses(src, inv)
	gatherPersisted(src, inv)
	gatherSysctls(src, inv)
}
