package inventory

import (
	"fmt"
	"sort"
	"strings"
)

// persistedReader parses the files of one configuration system.
type persistedReader struct {
	format string
	gather func(src *Source) ([]PersistedConfig, []string, bool) // configs, problems, found any file
}

var persistedReaders = []persistedReader{
	{"ifcfg", gatherIfcfg},
	{"networkmanager", gatherKeyfiles},
	{"netplan", gatherNetplan},
	{"interfaces", gatherInterfacesFile},
}

// gatherPersisted reads every persisted network configuration system the
// node has; several may coexist (ifcfg and NetworkManager keyfiles on RHEL
// 8/9, netplan and a loopback-only /etc/network/interfaces on Debian).
func gatherPersisted(src *Source, inv *Inventory) {
	var problems, found []string
	for _, r := range persistedReaders {
		cfgs, probs, any := r.gather(src)
		if any {
			found = append(found, r.format)
		}
		inv.Persisted = append(inv.Persisted, cfgs...)
		problems = append(problems, probs...)
	}
	// Profiles bound to a MAC address belong to the interface that has it.
	for i := range inv.Persisted {
		c := &inv.Persisted[i]
		if c.Interface != "" || c.MAC == "" {
			continue
		}
		c.Interface = "(mac " + c.MAC + ")"
		if name := nicByMAC(inv, c.MAC); name != "" {
			c.Interface = name
		}
	}
	sort.SliceStable(inv.Persisted, func(i, j int) bool {
		a, b := inv.Persisted[i], inv.Persisted[j]
		if a.Interface != b.Interface {
			return a.Interface < b.Interface
		}
		return a.File < b.File
	})
	switch {
	case len(found) == 0 && len(problems) == 0:
		inv.addSection("persisted", "absent", "no ifcfg, NetworkManager keyfile, netplan or /etc/network/interfaces found")
	case len(problems) > 0 && len(inv.Persisted) == 0:
		inv.addSection("persisted", "unreadable", strings.Join(problems, "; "))
	case len(problems) > 0:
		inv.addSection("persisted", "partial", strings.Join(problems, "; "))
	default:
		inv.addSection("persisted", "ok", fmt.Sprintf("%s: %d interfaces", strings.Join(found, ", "), len(inv.Persisted)))
	}
}

// listDir returns the node paths of the regular entries of dir whose names
// pass keep, sorted, or an error text when dir exists but cannot be read.
func listDir(src *Source, dir string, keep func(string) bool) ([]string, string) {
	ents, err := src.ReadDir(dir)
	if err != nil {
		if isNotExist(err) {
			return nil, ""
		}
		return nil, fmt.Sprintf("%s: %s", dir, errText(err))
	}
	var out []string
	for _, e := range ents {
		if !e.IsDir() && keep(e.Name()) {
			out = append(out, dir+"/"+e.Name())
		}
	}
	sort.Strings(out)
	return out, ""
}

// readEach reads the files of dir that pass keep, in name order, and parses
// each; unreadable or malformed files become problems. found says whether
// the directory exists (the configuration system is present).
func readEach(src *Source, dir string, keep func(string) bool, parse func(text, file string) ([]PersistedConfig, error)) (out []PersistedConfig, problems []string, found bool) {
	files, problem := listDir(src, dir, keep)
	if problem != "" {
		problems = append(problems, problem)
	}
	for _, f := range files {
		b, err := src.ReadFile(f)
		if err != nil {
			// Keyfiles and recent netplan files are mode 0600 (they may
			// hold secrets): an ordinary user cannot read them.
			problems = append(problems, f+": "+errText(err))
			continue
		}
		cfgs, err := parse(string(b), f)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		out = append(out, cfgs...)
	}
	return out, problems, len(files) > 0 || problem != ""
}

// nicByMAC returns the NIC whose own hardware address is mac. Bonds, vlans
// and bridges carry a slave's or parent's address, and a bond's slaves all
// show the bond's, so slaves are matched by the permanent address the
// bonding driver reports.
func nicByMAC(inv *Inventory, mac string) string {
	for _, ifc := range inv.Interfaces {
		if ifc.Bond != nil {
			for _, s := range ifc.Bond.Slaves {
				if strings.EqualFold(s.PermanentAddr, mac) {
					return s.Name
				}
			}
		}
	}
	for _, ifc := range inv.Interfaces {
		if ifc.Type == "physical" && ifc.Kind != "bond-slave" && strings.EqualFold(ifc.MAC, mac) {
			return ifc.Name
		}
	}
	return ""
}
