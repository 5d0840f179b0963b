package rules

import (
	"fmt"
	"sort"
	"strings"

	"github.com/interlink/interlink/internal/inventory"
)

// NFS rules on attribute caching and the options of each file role.

// attrCacheEv shows the attribute-cache setting as read.
func attrCacheEv(o *inventory.MountOptions) Evidence {
	return optEv(o, "attribute cache", o.AttrCacheText())
}

func checkACDatafiles(inv *inventory.Inventory, cfg *Config) []Finding {
	return eachMount(inv, cfg, func(m nfsMount, o *inventory.MountOptions, p Platform) *Finding {
		if m.Role != RoleDatafiles && m.Role != RoleRedo {
			return nil
		}
		nd, _ := need(p, m.Role)
		var msg string
		switch {
		case nd.NoAC && !o.NoAC:
			msg = fmt.Sprintf("no noac%s: on %s Oracle requires noac for datafiles, redo and control files so that every node sees the others' writes and file sizes at once", roleText(m), p.Name())
		case nd.Actimeo0 && !o.AttrCacheOff():
			msg = fmt.Sprintf("attribute caching is on%s: other RAC nodes can see stale file sizes and times for up to acregmax seconds; Oracle requires actimeo=0 for datafiles, redo and control files on Linux (and refuses to open them in RAC, ORA-27054)", roleText(m))
		default:
			return nil
		}
		return &Finding{Severity: Critical, Message: msg,
			Evidence: []Evidence{attrCacheEv(o), rawEv(o)},
			Fix:      fixLine(m, p)}
	})
}

func checkNoacCRS(inv *inventory.Inventory, cfg *Config) []Finding {
	return eachMount(inv, cfg, func(m nfsMount, o *inventory.MountOptions, p Platform) *Finding {
		if m.Role != RoleCRS || o.NoAC {
			return nil
		}
		return &Finding{Severity: Critical,
			Message:  "no noac (role crs): the OCR and voting files need attribute caching off and synchronous writes, or a node can read a stale voting disk and be evicted; Oracle requires noac for CRS/voting files on every platform",
			Evidence: []Evidence{attrCacheEv(o), rawEv(o)},
			Fix:      fixLine(m, p)}
	})
}

func checkACHome(inv *inventory.Inventory, cfg *Config) []Finding {
	return eachMount(inv, cfg, func(m nfsMount, o *inventory.MountOptions, p Platform) *Finding {
		if m.Role != RoleHome {
			return nil
		}
		nd, _ := need(p, m.Role)
		var want string
		switch {
		case nd.NoAC && !o.NoAC:
			want = "noac"
		case nd.Actimeo0 && !o.AttrCacheOff():
			want = "actimeo=0"
		default:
			return nil
		}
		return &Finding{Severity: Warning,
			Message:  fmt.Sprintf("shared ORACLE_HOME without %s (role home): on %s Oracle documents %s so that patches, logs and configuration written on one node are seen by the others at once", want, p.Name(), want),
			Evidence: []Evidence{attrCacheEv(o), rawEv(o)},
			Fix:      fixLine(m, p)}
	})
}

func checkForceDirectIO(inv *inventory.Inventory, cfg *Config) []Finding {
	return eachMount(inv, cfg, func(m nfsMount, o *inventory.MountOptions, p Platform) *Finding {
		nd, ok := need(p, m.Role)
		if !ok || !nd.ForceDirectIO || o.ForceDirectIO {
			return nil
		}
		return &Finding{Severity: Warning,
			Message:  fmt.Sprintf("no forcedirectio%s: on %s database I/O then goes through the client page cache as well as the SGA (double caching, no direct I/O); Oracle documents forcedirectio here", roleText(m), p.Name()),
			Evidence: []Evidence{optEv(o, "forcedirectio", "(not set)"), rawEv(o)},
			Fix:      fixLine(m, p)}
	})
}

func checkNosuid(inv *inventory.Inventory, cfg *Config) []Finding {
	return eachMount(inv, cfg, func(m nfsMount, o *inventory.MountOptions, p Platform) *Finding {
		nd, _ := need(p, m.Role)
		if !o.NoSuid || m.Role != RoleHome && !nd.Suid {
			return nil
		}
		ev := optEv(o, "nosuid", "nosuid")
		if o.MountFlags != "" {
			ev = optEv(o, "mount flags", o.MountFlags)
		}
		return &Finding{Severity: Warning,
			Message:  fmt.Sprintf("nosuid%s: the setuid bits of the Oracle binaries (oracle, extjob, jssu) are ignored, so local connections and scheduler jobs fail; Oracle documents suid", roleText(m)),
			Evidence: []Evidence{ev, rawEv(o)},
			Fix:      fixLine(m, p)}
	})
}

func checkBackupNoac(inv *inventory.Inventory, cfg *Config) []Finding {
	return eachMount(inv, cfg, func(m nfsMount, o *inventory.MountOptions, p Platform) *Finding {
		if m.Role != RoleBackup || !o.AttrCacheOff() {
			return nil
		}
		return &Finding{Severity: Warning,
			Message:  "attribute caching off on a backup mount (role backup): every access revalidates attributes, which defeats read-ahead and caching (and noac makes every write synchronous); backup, Data Pump and staging mounts should keep the defaults (unzip of a 1.2 GB patch set on Solaris 10: 33 min 34 s with noac, 7 min 44 s with defaults)",
			Evidence: []Evidence{attrCacheEv(o), rawEv(o)},
			Fix:      fixLine(m, p)}
	})
}

func checkNoacSync(inv *inventory.Inventory, cfg *Config) []Finding {
	return eachMount(inv, cfg, func(m nfsMount, o *inventory.MountOptions, p Platform) *Finding {
		if !o.NoAC || m.Role == RoleBackup {
			return nil
		}
		if nd, ok := need(p, m.Role); ok && nd.NoAC {
			return nil
		}
		ev := []Evidence{optEv(o, "noac", "noac")}
		if o.Sync {
			ev = append(ev, optEv(o, "sync", "sync (the kernel added it for noac)"))
		}
		return &Finding{Severity: Info,
			Message:  fmt.Sprintf("noac%s also makes every write synchronous, which is slow (creating a 1 GB file: about 1 min with noac, 15 s without); where only attribute caching must be off, actimeo=0 keeps writes cached", roleText(m)),
			Evidence: append(ev, rawEv(o)),
			Fix:      "unless synchronous writes are wanted, replace noac with actimeo=0 (or drop it) in " + staticTable(m, p)}
	})
}

// cacheSignature is what sharing one superblock would make identical.
func cacheSignature(o *inventory.MountOptions) string {
	a, b, c, d := o.AttrCache()
	return fmt.Sprintf("vers=%s proto=%s soft=%v rsize=%d wsize=%d timeo=%v ac=%v/%v/%v/%v noac=%v sync=%v",
		o.Vers, strings.TrimSuffix(o.Proto, "6"), o.Soft, o.RsizeBytes, o.WsizeBytes, o.Timeo, a, b, c, d, o.NoAC, o.Sync)
}

// intended returns the options an admin asked for: the static entry (the
// running options of a shared mount only echo the first mount's).
func intended(m nfsMount) *inventory.MountOptions {
	if m.Static != nil {
		return m.Static
	}
	return m.Runtime
}

func noShareCache(m nfsMount) bool {
	return m.Static != nil && m.Static.NoShareCache || m.Runtime != nil && m.Runtime.NoShareCache
}

// shareGroups returns the mounts of every export mounted more than once,
// keyed by export.
func shareGroups(ms []nfsMount) map[string][]nfsMount {
	groups := map[string][]nfsMount{}
	for _, m := range ms {
		if m.Options() != nil {
			groups[m.ExportKey()] = append(groups[m.ExportKey()], m)
		}
	}
	for k, g := range groups {
		if len(g) < 2 {
			delete(groups, k)
		}
	}
	return groups
}

func checkShareCache(inv *inventory.Inventory, cfg *Config) []Finding {
	p := Linux
	if cfg != nil {
		p = platform(cfg.Platform)
	}
	groups := shareGroups(nfsMounts(inv, cfg))
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []Finding
	for _, k := range keys {
		g := groups[k]
		sigs := map[string]bool{}
		any := false
		for _, m := range g {
			sigs[cacheSignature(intended(m))] = true
			any = any || noShareCache(m)
		}
		if any || len(sigs) < 2 {
			continue
		}
		var ev []Evidence
		var points, lines []string
		for _, m := range g {
			o := intended(m)
			ev = append(ev, Evidence{What: "options of " + m.MountPoint, Value: o.Raw, File: o.File})
			points = append(points, m.MountPoint)
			l := recommendedLine(m, p)
			lines = append(lines, strings.Replace(l, recommendedOptions(m, p), recommendedOptions(m, p)+",nosharecache", 1))
		}
		out = append(out, Finding{Severity: Warning, Object: "export " + g[0].Device,
			Message:  fmt.Sprintf("export %s is mounted %d times (%s) with different options and no nosharecache: the mounts share one cache and superblock, so each later mount silently runs with the options of the one mounted first", g[0].Device, len(g), strings.Join(points, ", ")),
			Evidence: ev,
			Fix:      "add nosharecache to every entry of this export (or give them identical options), e.g.: " + strings.Join(lines, " | ")})
	}
	return out
}
