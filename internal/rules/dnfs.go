package rules

import (
	"fmt"
	"strings"

	"github.com/interlink/interlink/internal/inventory"
	"github.com/interlink/interlink/internal/shellq"
)

// Direct NFS rules. Oracle's dNFS client reads $ORACLE_HOME/dbs/oranfstab,
// then /etc/oranfstab, then the mount table, and takes the first entry that
// matches a mount; each server: entry lists up to four network paths
// (local: paired with path: by position). The rules judge every oranfstab
// check read, with the line as evidence.
const srcDNFS = "Oracle Database Installation Guide for Linux, \"Creating an oranfstab File for Direct NFS Client\" and \"Configurable Attributes for the oranfstab File\""

func init() {
	register(
		Rule{ID: "DNFS-SYNTAX", Severity: Warning, Title: "oranfstab line dNFS cannot use (malformed, unknown attribute)",
			Source: srcDNFS, Check: checkDNFSSyntax},
		Rule{ID: "DNFS-PATHS-MAX", Severity: Warning, Title: "server entry with more than four network paths",
			Source: srcDNFS + " (\"up to four network paths\")", Check: checkDNFSPathsMax},
		Rule{ID: "DNFS-PAIRS", Severity: Warning, Title: "local: and path: counts of a server entry do not pair",
			Source: srcDNFS + " (local: pairs with the path: of the same position)", Check: checkDNFSPairs},
		Rule{ID: "DNFS-LOCAL-ABSENT", Severity: Critical, Title: "local: address on no interface of this node",
			Source: srcDNFS, Check: checkDNFSLocalAbsent},
		Rule{ID: "DNFS-ONE-INTERFACE", Severity: Warning, Title: "storage paths that leave by the same interface",
			Source: srcDNFS + " (dontroute: \"outgoing messages should not be routed by the operating system\")", Check: checkDNFSOneInterface},
		Rule{ID: "DNFS-MTU", Severity: Warning, Title: "storage interfaces of one server with different MTUs, or not the --storage-mtu",
			Source: srcDNFS + "; docs/sources.md (one MTU per storage path: every hop must agree)", Check: checkDNFSMTU},
		Rule{ID: "DNFS-MOUNT", Severity: Critical, Title: "oranfstab mount: that is not an NFS mount of this node",
			Source: srcDNFS + " (the kernel NFS mount must exist; mount points identical on each node)", Check: checkDNFSMount},
		Rule{ID: "DNFS-NFS-VERSION", Severity: Warning, Title: "nfs_version other than the version the export is mounted with",
			Source: srcDNFS + " (nfs_version: nfsv3, nfsv4, nfsv4.1, pnfs)", Check: checkDNFSVersion},
		Rule{ID: "DNFS-UID-ZERO", Severity: Warning, Title: "uid: or gid: 0 (ignored by dNFS)",
			Source: srcDNFS + " (uid, gid: \"the default is 65534 ... 0 is ignored\")", Check: checkDNFSUIDZero},
		Rule{ID: "DNFS-DUP-MOUNT", Severity: Warning, Title: "one mount served by two oranfstab entries",
			Source: srcDNFS + " (the first matching entry is used)", Check: checkDNFSDupMount},
		Rule{ID: "DNFS-OFF", Severity: Warning, Title: "oranfstab in an Oracle home whose Direct NFS is off",
			Source: srcDNFS + " (make -f ins_rdbms.mk dnfs_on)", Check: checkDNFSOff},
	)
}

// dnfsLine is the evidence of one oranfstab line.
func dnfsLine(file string, line int, text string) Evidence {
	return Evidence{What: fmt.Sprintf("oranfstab line %d", line), Value: text, File: file}
}

// eachDNFSServer calls fn for every server entry of every oranfstab read.
func eachDNFSServer(inv *inventory.Inventory, fn func(t *inventory.Oranfstab, s *inventory.DNFSServer)) {
	if inv.DNFS == nil {
		return
	}
	for _, t := range inv.DNFS.Files {
		for i := range t.Servers {
			fn(t, &t.Servers[i])
		}
	}
}

func serverObject(t *inventory.Oranfstab, s *inventory.DNFSServer) string {
	return fmt.Sprintf("dNFS server %s (%s)", s.Name, t.File)
}

func checkDNFSSyntax(inv *inventory.Inventory, cfg *Config) []Finding {
	if inv.DNFS == nil {
		return nil
	}
	var out []Finding
	for _, t := range inv.DNFS.Files {
		for _, p := range t.Problems {
			out = append(out, Finding{Severity: Warning, Object: "oranfstab " + t.File,
				Message:  fmt.Sprintf("line %d: %s; dNFS skips or misreads it", p.Line, p.Problem),
				Evidence: []Evidence{dnfsLine(t.File, p.Line, strings.TrimSpace(p.Text))},
				Fix:      "write it as NAME: VALUE with one of server, local, path, export (with mount), nfs_version, dontroute, mnt_timeout, security_default, management, community, uid, gid"})
		}
	}
	return out
}

func checkDNFSPathsMax(inv *inventory.Inventory, cfg *Config) []Finding {
	var out []Finding
	eachDNFSServer(inv, func(t *inventory.Oranfstab, s *inventory.DNFSServer) {
		if len(s.Paths) <= inventory.DNFSMaxPaths {
			return
		}
		ev := []Evidence{dnfsLine(t.File, s.Line, "server: "+s.Name)}
		for _, p := range s.Paths[inventory.DNFSMaxPaths:] {
			ev = append(ev, dnfsLine(t.File, p.Line, "path: "+p.Value))
		}
		out = append(out, Finding{Severity: Warning, Object: serverObject(t, s),
			Message:  fmt.Sprintf("%d paths: dNFS uses at most %d per server", len(s.Paths), inventory.DNFSMaxPaths),
			Evidence: ev, Fix: "keep the four best paths (one per storage interface) and remove the others"})
	})
	return out
}

func checkDNFSPairs(inv *inventory.Inventory, cfg *Config) []Finding {
	var out []Finding
	eachDNFSServer(inv, func(t *inventory.Oranfstab, s *inventory.DNFSServer) {
		if len(s.Locals) == 0 || len(s.Locals) == len(s.Paths) {
			return
		}
		out = append(out, Finding{Severity: Warning, Object: serverObject(t, s),
			Message: fmt.Sprintf("%d local: and %d path: lines: each path is used from the local of the same position, so %s",
				len(s.Locals), len(s.Paths), unpaired(s)),
			Evidence: []Evidence{dnfsLine(t.File, s.Line, "server: "+s.Name)},
			Fix:      "give every path: its local: (the address of the storage interface it leaves by), in the same order"})
	})
	return out
}

func unpaired(s *inventory.DNFSServer) string {
	if len(s.Locals) > len(s.Paths) {
		return fmt.Sprintf("%d local address(es) have no path", len(s.Locals)-len(s.Paths))
	}
	return fmt.Sprintf("%d path(s) have no local address", len(s.Paths)-len(s.Locals))
}

func checkDNFSLocalAbsent(inv *inventory.Inventory, cfg *Config) []Finding {
	var out []Finding
	eachDNFSServer(inv, func(t *inventory.Oranfstab, s *inventory.DNFSServer) {
		for _, l := range s.Locals {
			a, ok := parseIP(l.Value)
			if !ok || ifaceWithAddr(inv, a) != nil {
				continue // a name (not judged) or present
			}
			out = append(out, Finding{Severity: Critical, Object: serverObject(t, s),
				Message:  fmt.Sprintf("local %s is on no interface of this node: dNFS cannot bind it, and that path to %s fails", l.Value, s.Name),
				Evidence: []Evidence{dnfsLine(t.File, l.Line, "local: "+l.Value), {What: "addresses", Value: allAddrs(inv), File: "/proc/net/fib_trie, /proc/net/if_inet6"}},
				Fix:      "put the node's storage address on local: (ip -br addr shows them), or bring the storage interface up with it"})
		}
	})
	return out
}

func checkDNFSOneInterface(inv *inventory.Inventory, cfg *Config) []Finding {
	var out []Finding
	eachDNFSServer(inv, func(t *inventory.Oranfstab, s *inventory.DNFSServer) {
		legs := storageLegs(inv, s)
		by := map[string][]leg{}
		var order []string
		for _, l := range legs {
			if l.iface == nil {
				continue
			}
			if by[l.iface.Name] == nil {
				order = append(order, l.iface.Name)
			}
			by[l.iface.Name] = append(by[l.iface.Name], l)
		}
		for _, name := range order {
			ls := by[name]
			if len(ls) < 2 {
				continue
			}
			var ev []Evidence
			var paths []string
			for _, l := range ls {
				ev = append(ev, dnfsLine(t.File, l.path.Line, "path: "+l.path.Value))
				paths = append(paths, l.path.Value)
			}
			why := "the routing table sends them all out of " + name
			if s.Dontroute {
				why = "with dontroute they leave by the interfaces of their local addresses, all on " + name
			}
			ev = append(ev, Evidence{What: "routes", Value: ls[0].how, File: "/proc/net/route"})
			out = append(out, Finding{Severity: Warning, Object: serverObject(t, s),
				Message:  fmt.Sprintf("paths %s are one path: %s, so one cable or switch port carries them all", strings.Join(paths, ", "), why),
				Evidence: ev,
				Fix:      "give each path its own storage interface and subnet with a local: address on it, and add dontroute so each leaves by its local address"})
		}
	})
	return out
}

func checkDNFSMTU(inv *inventory.Inventory, cfg *Config) []Finding {
	var out []Finding
	want := 0
	if cfg != nil {
		want = cfg.StorageMTU
	}
	eachDNFSServer(inv, func(t *inventory.Oranfstab, s *inventory.DNFSServer) {
		seen := map[string]bool{}
		var ifcs []*inventory.Interface
		via := map[string][]string{} // interface -> "10.20.1.21 (route 10.20.1.0/24 dev eth3)"
		for _, l := range storageLegs(inv, s) {
			if l.iface == nil {
				continue
			}
			via[l.iface.Name] = append(via[l.iface.Name], l.path.Value+" by "+l.how)
			if !seen[l.iface.Name] {
				seen[l.iface.Name] = true
				ifcs = append(ifcs, l.iface)
			}
		}
		mtus := map[int]bool{}
		var ev []Evidence
		var bad []string
		for _, ifc := range ifcs {
			mtus[ifc.MTU] = true
			e := mtuEvidence(ifc)
			e.What = ifc.Name + " mtu (path " + strings.Join(via[ifc.Name], "; ") + ")"
			ev = append(ev, e)
			if want > 0 && ifc.MTU != want {
				bad = append(bad, fmt.Sprintf("%s has %d", ifc.Name, ifc.MTU))
			}
		}
		switch {
		case len(mtus) > 1:
			out = append(out, Finding{Severity: Warning, Object: serverObject(t, s),
				Message:  fmt.Sprintf("the storage interfaces of %s have different MTUs: I/O is fast on one path and fragmented or stalled on another", s.Name),
				Evidence: ev, Fix: "give every storage interface to this server the MTU its switch ports and the filer use, persist it, and prove each path with 'interlink pmtu --storage'"})
		case len(bad) > 0:
			out = append(out, Finding{Severity: Warning, Object: serverObject(t, s),
				Message:  fmt.Sprintf("storage MTU is not the expected %d (%s)", want, strings.Join(bad, ", ")),
				Evidence: ev, Fix: fmt.Sprintf("set MTU %d on the storage interfaces, their switch ports and the filer, or correct --storage-mtu", want)})
		}
	})
	return out
}

func checkDNFSMount(inv *inventory.Inventory, cfg *Config) []Finding {
	if !runningMountsRead(inv) {
		return nil // not mounted cannot be told from unknown
	}
	var out []Finding
	eachDNFSServer(inv, func(t *inventory.Oranfstab, s *inventory.DNFSServer) {
		for _, e := range s.Exports {
			if nfsMountAt(inv, e.Mount) != nil {
				continue
			}
			out = append(out, Finding{Severity: Critical, Object: serverObject(t, s),
				Message:  fmt.Sprintf("mount %s (export %s) is not an NFS mount of this node: dNFS still needs the kernel mount to find the files, and RAC needs the same mount point on every node", e.Mount, e.Export),
				Evidence: []Evidence{dnfsLine(t.File, e.Line, "export: "+e.Export+" mount: "+e.Mount), {What: "NFS mounts", Value: nfsMountList(inv), File: inventory.MountinfoFile}},
				Fix: fmt.Sprintf("mount %s on %s with the options Oracle requires (an fstab entry, then: mount %[2]s), or correct the mount: of this line",
					shellq.Quote(s.Name+":"+e.Export), shellq.Quote(e.Mount))})
		}
	})
	return out
}

func checkDNFSVersion(inv *inventory.Inventory, cfg *Config) []Finding {
	var out []Finding
	eachDNFSServer(inv, func(t *inventory.Oranfstab, s *inventory.DNFSServer) {
		want := "nfsv3"
		line, text := s.Line, "server: "+s.Name+" (no nfs_version: nfsv3)"
		if s.NFSVersion != nil {
			want, line, text = s.NFSVersion.Value, s.NFSVersion.Line, "nfs_version: "+s.NFSVersion.Value
		}
		judged := map[string]bool{}
		for _, e := range s.Exports {
			m := nfsMountAt(inv, e.Mount)
			if m == nil || m.Options() == nil || m.Options().Vers == "" || judged[e.Mount] {
				continue
			}
			judged[e.Mount] = true
			got := m.Options().Vers
			if dnfsVersionMatches(want, got) {
				continue
			}
			out = append(out, Finding{Severity: Warning, Object: serverObject(t, s),
				Message: fmt.Sprintf("dNFS speaks %s to %s but the kernel mounts %s with vers=%s: the filer may not offer %s for this export, and dNFS then falls back or fails at open",
					want, s.Name, e.Mount, got, want),
				Evidence: []Evidence{dnfsLine(t.File, line, text), {What: "vers", Value: got, File: m.Options().File}},
				Fix:      fmt.Sprintf("set nfs_version: %s (what the export is mounted with), or mount it with the version dNFS should use", "nfsv"+got)})
		}
	})
	return out
}

// dnfsVersionMatches compares an nfs_version with a mount's vers=.
func dnfsVersionMatches(nfsVersion, vers string) bool {
	switch nfsVersion {
	case "nfsv3":
		return vers == "3"
	case "nfsv4":
		return vers == "4" || vers == "4.0"
	case "nfsv4.1", "pnfs":
		return vers == "4.1" || vers == "4.2"
	}
	return true
}

func checkDNFSUIDZero(inv *inventory.Inventory, cfg *Config) []Finding {
	var out []Finding
	eachDNFSServer(inv, func(t *inventory.Oranfstab, s *inventory.DNFSServer) {
		for _, v := range []struct {
			key string
			val *inventory.DNFSValue
		}{{"uid", s.UID}, {"gid", s.GID}} {
			if v.val == nil || strings.TrimLeft(v.val.Value, "0") != "" {
				continue
			}
			out = append(out, Finding{Severity: Warning, Object: serverObject(t, s),
				Message:  fmt.Sprintf("%s: 0 is ignored: dNFS sends AUTH_SYS as %s 65534 (nobody), which a root-squashing filer maps the same way", v.key, v.key),
				Evidence: []Evidence{dnfsLine(t.File, v.val.Line, v.key+": "+v.val.Value)},
				Fix:      fmt.Sprintf("remove %s: 0, or give the numeric %s the filer's export grants", v.key, v.key)})
		}
	})
	return out
}

func checkDNFSDupMount(inv *inventory.Inventory, cfg *Config) []Finding {
	if inv.DNFS == nil {
		return nil
	}
	var out []Finding
	for _, t := range inv.DNFS.Files {
		first := map[string]Evidence{}
		for i := range t.Servers {
			s := &t.Servers[i]
			for _, e := range s.Exports {
				ev := dnfsLine(t.File, e.Line, "server: "+s.Name+" export: "+e.Export+" mount: "+e.Mount)
				if f, dup := first[e.Mount]; dup {
					out = append(out, Finding{Severity: Warning, Object: "oranfstab " + t.File,
						Message:  fmt.Sprintf("mount %s is listed twice: dNFS uses the first entry (%s) and ignores line %d", e.Mount, f.What, e.Line),
						Evidence: []Evidence{f, ev},
						Fix:      "list each mount once, under the server that exports it"})
					continue
				}
				first[e.Mount] = ev
			}
		}
	}
	return out
}

func checkDNFSOff(inv *inventory.Inventory, cfg *Config) []Finding {
	if inv.DNFS == nil {
		return nil
	}
	var out []Finding
	for _, h := range inv.DNFS.Homes {
		if h.DNFS != inventory.DNFSOff || h.Oranfstab == "" {
			continue
		}
		out = append(out, Finding{Severity: Warning, Object: "Oracle home " + h.Path,
			Message:  "the home has an oranfstab but Direct NFS is off: the database uses the kernel NFS client and the file has no effect",
			Evidence: []Evidence{{What: "dNFS", Value: h.DNFSDetail, File: h.Path + "/lib"}, {What: "oranfstab", Value: "present", File: h.Oranfstab}},
			Fix:      "with the databases of this home stopped: cd " + shellq.Quote(h.Path+"/rdbms/lib") + " && make -f ins_rdbms.mk dnfs_on (or remove the oranfstab if dNFS is not wanted)"})
	}
	return out
}
