package inventory

import "context"

// Interface is one network interface as the kernel reports it.
type Interface struct {
	Name string `json:"name"`
	Kind string `json:"kind"` // physical, bond, bond-slave, bridge, bridge-port, vlan, veth, loopback, ...
	MTU  int    `json:"mtu"`
}

// PersistedConfig is what the network configuration on disk will apply at
// the next boot for one interface.
type PersistedConfig struct {
	Interface string `json:"interface"`
	MTU       int    `json:"mtu,omitempty"` // 0: not set (the default applies)
	File      string `json:"file"`
	Format    string `json:"format"` // ifcfg, networkmanager, netplan, interfaces
}

// Counters holds the kernel counters check reads.
type Counters struct{}

func gatherNetwork(ctx context.Context, src *Source, inv *Inventory, opts Options) {}
