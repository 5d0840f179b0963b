package rules

import (
	"net/netip"
	"path"
	"sort"
	"strings"

	"github.com/interlink/interlink/internal/inventory"
)

// Schema is the schema of `interlink check --json`.
const Schema = "interlink.check/v1"

// Result is the outcome of an audit: the inventory, what was judged and
// the findings. It is what `check` renders as text or JSON.
type Result struct {
	Schema       string               `json:"schema"`
	Node         inventory.Node       `json:"node"`
	Interconnect Interconnect         `json:"interconnect"`
	Inventory    *inventory.Inventory `json:"inventory"`
	// MountRoles gives the role each NFS mount was judged with, in the
	// order of Inventory.Mounts (role "" when no --mount-role covers it).
	MountRoles []MountRole `json:"mount_roles"`
	Findings   []Finding   `json:"findings"`
	Summary    Summary     `json:"summary"`
}

// Interconnect says which interfaces were judged as the interconnect and
// how that was decided.
type Interconnect struct {
	Interfaces []string `json:"interfaces"`
	// From is "flag", "gpnp" or "" (unknown: interconnect rules stayed
	// silent).
	From string `json:"from"`
	File string `json:"file,omitempty"` // the GPnP profile, when From is gpnp
}

// MountRole is the role an NFS mount was judged with and the --mount-role
// path that gave it.
type MountRole struct {
	MountPoint string `json:"mount_point"`
	Role       Role   `json:"role"`
	From       string `json:"from,omitempty"`
}

// Summary counts findings by severity and gives the verdict.
type Summary struct {
	Critical int    `json:"critical"`
	Warning  int    `json:"warning"`
	Info     int    `json:"info"`
	Status   string `json:"status"`    // OK, WARNING or CRITICAL
	ExitCode int    `json:"exit_code"` // 0, 1 or 2
	// NotFullyRead names the inventory sections that were unreadable or
	// only partly read; rules about them may have stayed silent.
	NotFullyRead []string `json:"not_fully_read"`
}

// Summarize counts findings by severity and gives the verdict they make,
// the worst one's: CRITICAL (exit code 2), WARNING (1) or OK (0; info
// findings alone are OK). NotFullyRead is empty, for the caller to fill.
// check and awr summarise their findings with it.
func Summarize(fs []Finding) Summary {
	s := Summary{NotFullyRead: []string{}}
	for _, f := range fs {
		switch f.Severity {
		case Critical:
			s.Critical++
		case Warning:
			s.Warning++
		default:
			s.Info++
		}
	}
	switch {
	case s.Critical > 0:
		s.Status, s.ExitCode = "CRITICAL", 2
	case s.Warning > 0:
		s.Status, s.ExitCode = "WARNING", 1
	default:
		s.Status = "OK"
	}
	return s
}

// Check evaluates every rule on inv and summarises the findings. cfg's
// Interconnect, when empty, is taken from the GPnP profile in inv.
func Check(inv *inventory.Inventory, cfg Config) *Result {
	ic := Interconnect{Interfaces: cfg.Interconnect, From: "flag"}
	if len(cfg.Interconnect) == 0 {
		ic = FromGPnP(inv)
		cfg.Interconnect = ic.Interfaces
	}
	if ic.Interfaces == nil {
		ic.Interfaces = []string{}
	}
	if cfg.Platform == "" {
		cfg.Platform = Linux
	}
	r := &Result{Schema: Schema, Node: inv.Node, Interconnect: ic, Inventory: inv, Findings: Evaluate(inv, &cfg),
		MountRoles: []MountRole{}}
	for _, m := range nfsMounts(inv, &cfg) {
		r.MountRoles = append(r.MountRoles, MountRole{MountPoint: m.MountPoint, Role: m.Role, From: m.Key})
	}
	if r.Findings == nil {
		r.Findings = []Finding{}
	}
	s := Summarize(r.Findings)
	for _, sec := range inv.Sections {
		if sec.Status == "unreadable" || sec.Status == "partial" {
			s.NotFullyRead = append(s.NotFullyRead, sec.Name)
		}
	}
	r.Summary = s
	return r
}

// FromGPnP returns the interfaces the GPnP profile marks
// cluster_interconnect. An Adapter may be a pattern ("eth*"); it then
// matches the interfaces whose IPv4 network is the profile's subnet, as
// Clusterware itself does.
func FromGPnP(inv *inventory.Inventory) Interconnect {
	if inv.Cluster == nil {
		return Interconnect{From: ""}
	}
	var names []string
	seen := map[string]bool{}
	for _, n := range inv.Cluster.Networks {
		if !n.Interconnect() {
			continue
		}
		subnet, _ := netip.ParseAddr(n.Subnet)
		for _, ifc := range inv.Interfaces {
			ok, _ := path.Match(n.Adapter, ifc.Name)
			if !ok || seen[ifc.Name] {
				continue
			}
			if strings.ContainsAny(n.Adapter, "*?[") && subnet.IsValid() && !inSubnet(ifc.Addresses, subnet) {
				continue
			}
			seen[ifc.Name] = true
			names = append(names, ifc.Name)
		}
		if !strings.ContainsAny(n.Adapter, "*?[") && !seen[n.Adapter] {
			// Named but absent: keep it, so the rules report it missing.
			seen[n.Adapter] = true
			names = append(names, n.Adapter)
		}
	}
	sort.Strings(names)
	if names == nil {
		return Interconnect{From: ""}
	}
	return Interconnect{Interfaces: names, From: "gpnp", File: inv.Cluster.GPnPProfile}
}

// inSubnet reports whether one of the CIDR addresses has network subnet.
func inSubnet(addrs []string, subnet netip.Addr) bool {
	for _, a := range addrs {
		p, err := netip.ParsePrefix(a)
		if err == nil && p.Masked().Addr() == subnet {
			return true
		}
	}
	return false
}
