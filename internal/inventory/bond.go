package inventory

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"
)

// gatherBonds fills Interface.Bond for every bond master from
// /proc/net/bonding/BOND, or from sysfs when that file is unreadable.
func gatherBonds(src *Source, inv *Inventory) {
	for i := range inv.Interfaces {
		ifc := &inv.Interfaces[i]
		if ifc.Type != "bond" {
			continue
		}
		file := "/proc/net/bonding/" + ifc.Name
		if b, err := src.ReadFile(file); err == nil {
			if bond, err := ParseBonding(strings.NewReader(string(b))); err == nil {
				bond.File = file
				ifc.Bond = bond
				slaveDrivers(src, inv, bond)
				continue
			}
		}
		dir := ifc.SysfsPath + "/bonding"
		bond := &Bond{File: dir, MIIPolling: time.Duration(atoiOr(readOr(src, dir+"/miimon"), 0)) * time.Millisecond}
		// sysfs mode reads "active-backup 1".
		bond.Mode, _, _ = strings.Cut(readOr(src, dir+"/mode"), " ")
		bond.MIIStatus = readOr(src, dir+"/mii_status")
		bond.ActiveSlave = readOr(src, dir+"/active_slave")
		for _, s := range strings.Fields(readOr(src, dir+"/slaves")) {
			bs := BondSlave{Name: s}
			bs.MIIStatus = readOr(src, "/sys/class/net/"+s+"/bonding_slave/mii_status")
			bond.Slaves = append(bond.Slaves, bs)
		}
		if bond.Mode == "" && len(bond.Slaves) == 0 {
			continue
		}
		ifc.Bond = bond
		slaveDrivers(src, inv, bond)
	}
}

// slaveDrivers fills each slave's driver from its interface, or reads it
// when the slave is not among the interfaces listed.
func slaveDrivers(src *Source, inv *Inventory, bond *Bond) {
	for i := range bond.Slaves {
		s := &bond.Slaves[i]
		if ifc := inv.Interface(s.Name); ifc != nil {
			s.Driver = ifc.Driver
			continue
		}
		if s.Name != "" && !strings.ContainsAny(s.Name, "/") && s.Name != ".." {
			s.Driver = readDriver(src, "/sys/class/net/"+s.Name)
		}
	}
}

// bondModes maps the text of "Bonding Mode:" to the names sysfs and ifcfg
// BONDING_OPTS use.
var bondModes = map[string]string{
	"load balancing (round-robin)":          "balance-rr",
	"fault-tolerance (active-backup)":       "active-backup",
	"load balancing (xor)":                  "balance-xor",
	"fault-tolerance (broadcast)":           "broadcast",
	"IEEE 802.3ad Dynamic link aggregation": "802.3ad",
	"transmit load balancing":               "balance-tlb",
	"adaptive load balancing":               "balance-alb",
}

// ParseBonding parses a /proc/net/bonding/BOND file.
func ParseBonding(r io.Reader) (*Bond, error) {
	b := &Bond{}
	var slave *BondSlave
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch {
		case k == "Bonding Mode":
			if m, ok := bondModes[v]; ok {
				b.Mode = m
			} else {
				b.Mode = v
			}
		case k == "Slave Interface":
			b.Slaves = append(b.Slaves, BondSlave{Name: v})
			slave = &b.Slaves[len(b.Slaves)-1]
		case k == "Currently Active Slave":
			b.ActiveSlave = v
		case k == "MII Polling Interval (ms)":
			b.MIIPolling = time.Duration(atoiOr(v, 0)) * time.Millisecond
		case k == "MII Status" && slave == nil:
			b.MIIStatus = v
		case k == "MII Status":
			slave.MIIStatus = v
		case k == "Speed" && slave != nil:
			slave.SpeedBitsPerSec = ParseSpeed(v)
		case k == "Link Failure Count" && slave != nil:
			slave.LinkFailures = atoiOr(v, 0)
		case k == "Permanent HW addr" && slave != nil:
			slave.PermanentAddr = v // Cut split at the first colon: v is the whole MAC
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if b.Mode == "" {
		return nil, fmt.Errorf("no \"Bonding Mode\" line")
	}
	return b, nil
}
