package inventory

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// gatherInterfaces reads every interface under /sys/class/net.
func gatherInterfaces(src *Source, inv *Inventory) {
	ents, err := src.ReadDir("/sys/class/net")
	if err != nil {
		inv.addSection("interfaces", missingOr(err), fmt.Sprintf("/sys/class/net: %v", errText(err)))
		return
	}
	var problems []string
	for _, e := range ents {
		name := e.Name()
		if strings.HasPrefix(name, ".") || name == "bonding_masters" {
			continue
		}
		ifc, err := readInterface(src, name)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		inv.Interfaces = append(inv.Interfaces, ifc)
	}
	sort.Slice(inv.Interfaces, func(i, j int) bool { return inv.Interfaces[i].Name < inv.Interfaces[j].Name })
	resolveKinds(inv)
	gatherBonds(src, inv)
	switch {
	case len(problems) > 0 && len(inv.Interfaces) == 0:
		inv.addSection("interfaces", "unreadable", strings.Join(problems, "; "))
	case len(problems) > 0:
		inv.addSection("interfaces", "partial", strings.Join(problems, "; "))
	case len(inv.Interfaces) == 0:
		inv.addSection("interfaces", "absent", "/sys/class/net is empty")
	default:
		inv.addSection("interfaces", "ok", fmt.Sprintf("%d interfaces", len(inv.Interfaces)))
	}
}

func readInterface(src *Source, name string) (Interface, error) {
	dir := "/sys/class/net/" + name
	ifc := Interface{Name: name, SysfsPath: dir}
	mtu, err := src.ReadString(dir + "/mtu")
	if err != nil {
		return ifc, fmt.Errorf("%s: %v", name, errText(err))
	}
	if ifc.MTU, err = strconv.Atoi(mtu); err != nil {
		return ifc, fmt.Errorf("%s/mtu: bad value %q", dir, mtu)
	}
	ifc.LinkTarget, _ = src.Readlink(dir)
	ifc.OperState, _ = src.ReadString(dir + "/operstate")
	if s, err := src.ReadString(dir + "/carrier"); err == nil {
		if c, err := strconv.Atoi(s); err == nil && c >= 0 {
			ifc.Carrier = &c
		}
	}
	if s, err := src.ReadString(dir + "/speed"); err == nil {
		ifc.SpeedBitsPerSec = ParseSpeed(s)
	}
	if s, err := src.ReadString(dir + "/flags"); err == nil {
		ifc.Flags, _ = strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 64)
	}
	ifc.IfIndex = atoiOr(readOr(src, dir+"/ifindex"), 0)
	ifc.MAC = readOr(src, dir+"/address")
	if m, err := src.Readlink(dir + "/master"); err == nil {
		ifc.Master = path.Base(m)
	}
	ifc.Driver = readDriver(src, dir)

	uevent := map[string]string{}
	if b, err := src.ReadFile(dir + "/uevent"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, "="); ok {
				uevent[k] = v
			}
		}
	}
	arphrd := atoiOr(readOr(src, dir+"/type"), 1)
	iflink := atoiOr(readOr(src, dir+"/iflink"), ifc.IfIndex)
	virtual := strings.Contains(ifc.LinkTarget, "/virtual/")
	switch dt := uevent["DEVTYPE"]; {
	case arphrd == 772 || name == "lo":
		ifc.Type = "loopback"
	case dt == "bond":
		ifc.Type = "bond"
	case dt == "bridge":
		ifc.Type = "bridge"
		if ports, err := src.ReadDir(dir + "/brif"); err == nil {
			for _, p := range ports {
				ifc.Ports = append(ifc.Ports, p.Name())
			}
		}
	case dt == "vlan":
		ifc.Type = "vlan"
		readVLAN(src, &ifc)
	case dt == "wlan":
		ifc.Type = "wireless"
	case readOr(src, dir+"/tun_flags") != "":
		ifc.Type = "tun"
	case !virtual && (ifc.LinkTarget != "" || readlinkOr(src, dir+"/device") != ""):
		// Under a bus device (pci, virtio, xen vif): a NIC.
		ifc.Type = "physical"
	case iflink != ifc.IfIndex && iflink != 0:
		// A software device linked to another ifindex without a DEVTYPE:
		// veth (iflink is the peer's index).
		ifc.Type = "veth"
	default:
		ifc.Type = "virtual"
	}
	ifc.Kind = ifc.Type
	return ifc, nil
}

// readDriver returns the name of the driver bound to the device under the
// interface directory dir, from the device/driver link (read as a link, so
// --collect keeps it and a bundle answers the same); "" when there is no
// device (a software link) or no driver bound to it.
func readDriver(src *Source, dir string) string {
	t, err := src.Readlink(dir + "/device/driver")
	if err != nil {
		return ""
	}
	switch b := path.Base(t); b {
	case ".", "/", "..":
		return ""
	default:
		return b
	}
}

// readVLAN finds a vlan's parent and id: /proc/net/vlan/IF when the 8021q
// module exposes it, otherwise the lower_* link in sysfs.
func readVLAN(src *Source, ifc *Interface) {
	if b, err := src.ReadFile("/proc/net/vlan/" + ifc.Name); err == nil {
		// "eth1.100  VID: 100	 REORDER_HDR: 1  dev->priv_flags: 1001"
		// ...
		// "Device: eth1"
		for _, l := range strings.Split(string(b), "\n") {
			f := strings.Fields(l)
			for i := 0; i+1 < len(f); i++ {
				switch f[i] {
				case "VID:":
					ifc.VLANID = atoiOr(f[i+1], 0)
				case "Device:":
					ifc.Parent = f[i+1]
				}
			}
		}
	}
	if ifc.Parent == "" {
		if m, _ := src.Glob(ifc.SysfsPath + "/lower_*"); len(m) == 1 {
			ifc.Parent = strings.TrimPrefix(path.Base(m[0]), "lower_")
		}
	}
	if ifc.VLANID == 0 && ifc.Parent != "" {
		if _, id, ok := strings.Cut(ifc.Name, "."); ok {
			ifc.VLANID = atoiOr(id, 0)
		}
	}
}

// resolveKinds marks enslaved interfaces by their master's type and fills
// in the port lists of bonds.
func resolveKinds(inv *Inventory) {
	for i := range inv.Interfaces {
		ifc := &inv.Interfaces[i]
		if ifc.Master == "" {
			continue
		}
		m := inv.Interface(ifc.Master)
		if m == nil {
			continue
		}
		switch m.Type {
		case "bond":
			ifc.Kind = "bond-slave"
			if !contains(m.Ports, ifc.Name) {
				m.Ports = append(m.Ports, ifc.Name)
			}
		case "bridge":
			ifc.Kind = "bridge-port"
			if !contains(m.Ports, ifc.Name) {
				m.Ports = append(m.Ports, ifc.Name)
			}
		}
	}
	for i := range inv.Interfaces {
		sort.Strings(inv.Interfaces[i].Ports)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// readlinkOr reads a link (recorded for --collect) or returns "".
func readlinkOr(src *Source, p string) string {
	t, _ := src.Readlink(p)
	return t
}

func readOr(src *Source, p string) string {
	s, _ := src.ReadString(p)
	return s
}

// maxSpeedMbit bounds a believable link speed (4 Tbit/s): above it is
// SPEED_UNKNOWN printed unsigned, as kernels before 4.6 print it.
const maxSpeedMbit = 4_000_000

// ParseSpeed reads a link speed in Mbit/s, as /sys/class/net/IF/speed and
// /proc/net/bonding's "Speed:" give it, into bit/s; 0 when the kernel does
// not know it (a virtual or down link): -1 (SPEED_UNKNOWN), 4294967295
// (the same printed unsigned, as 3.10's sysfs does), "Unknown", or
// anything else that is not a positive number of believable size.
func ParseSpeed(s string) int64 {
	v, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "Mbps")), 10, 64)
	if err != nil || v <= 0 || v >= maxSpeedMbit {
		return 0
	}
	return v * 1e6
}

func atoiOr(s string, def int) int {
	v, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return def
	}
	return v
}

// errText shortens an error from os to what a report needs ("permission
// denied", "no such file or directory") without the repeated path.
func errText(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 {
		return s[i+2:]
	}
	return s
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// missingOr is the section status for an error: "absent" when the file is
// not there (a tree captured from another system, such as a Solaris mount
// table), "unreadable" otherwise (permissions).
func missingOr(err error) string {
	if isNotExist(err) {
		return "absent"
	}
	return "unreadable"
}
