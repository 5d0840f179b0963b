package rules

import (
	"fmt"
	"sort"
	"strings"

	"github.com/interlink/interlink/internal/inventory"
	"github.com/interlink/interlink/internal/shellq"
)

// NFS rules that hold the running mounts against the static tables.

func checkSolarisOpt(inv *inventory.Inventory, cfg *Config) []Finding {
	return eachMount(inv, cfg, func(m nfsMount, o *inventory.MountOptions, p Platform) *Finding {
		if p != Linux || m.Static == nil || m.Static.File != inventory.FstabFile {
			return nil
		}
		var bad []string
		for _, n := range nonLinux {
			if m.Static.Has(n) {
				bad = append(bad, n)
			}
		}
		if len(bad) == 0 {
			return nil
		}
		sev := Warning
		if isOracleRole(m.Role) {
			sev = Critical
		}
		return &Finding{Severity: sev,
			Message:  fmt.Sprintf("%s in a Linux fstab%s: an option of Solaris, HP-UX or AIX that Linux mount.nfs rejects (\"an incorrect mount option was specified\"), so this entry fails at the next boot or mount; on Linux the database gets direct I/O per file (O_DIRECT) instead", strings.Join(bad, ","), roleText(m)),
			Evidence: []Evidence{optEv(m.Static, "option", strings.Join(bad, ",")), rawEv(m.Static)},
			Fix:      "in " + m.Static.File + " use: " + recommendedLine(m, p) + "; for direct I/O set filesystemio_options=SETALL in the Oracle instance"}
	})
}

// optDiff is one option whose static and running values differ.
type optDiff struct{ name, static, running string }

func diffOptions(s, r *inventory.MountOptions) []optDiff {
	var out []optDiff
	add := func(name, sv, rv string) {
		if sv != rv {
			out = append(out, optDiff{name, sv, rv})
		}
	}
	if s.Vers != "" && !(s.Vers == "4" && strings.HasPrefix(r.Vers, "4")) {
		add("vers", s.Vers, r.Vers)
	}
	if s.Proto != "" {
		add("proto", strings.TrimSuffix(s.Proto, "6"), strings.TrimSuffix(r.Proto, "6"))
	}
	add("hard/soft", hardSoft(s), hardSoft(r))
	if s.Timeo > 0 {
		add("timeo", optValue(s, "timeo"), optValue(r, "timeo"))
	}
	if s.NoAC != r.NoAC || s.AttrCacheOff() != r.AttrCacheOff() {
		out = append(out, optDiff{"attribute cache", s.AttrCacheText(), r.AttrCacheText()})
	}
	add("nosharecache", yesNo(s.NoShareCache), yesNo(r.NoShareCache))
	if s.Sync {
		add("sync", "sync", onOff(r.Sync, "sync", "async"))
	}
	add("nosuid", yesNo(s.NoSuid), yesNo(r.NoSuid))
	if r.File == inventory.MnttabFile {
		// mnttab shows what was written, so these can be compared too.
		add("forcedirectio", yesNo(s.ForceDirectIO), yesNo(r.ForceDirectIO))
	}
	return out
}

// optValue is "name=value" as written, or "(not set)".
func optValue(o *inventory.MountOptions, name string) string {
	if v, ok := o.Get(name); ok {
		return name + "=" + v
	}
	return name + " (not set)"
}

func hardSoft(o *inventory.MountOptions) string { return onOff(o.Soft, "soft", "hard") }
func yesNo(b bool) string                       { return onOff(b, "yes", "no") }
func onOff(b bool, t, f string) string {
	if b {
		return t
	}
	return f
}

func checkRuntimeVsStatic(inv *inventory.Inventory, cfg *Config) []Finding {
	ms := nfsMounts(inv, cfg)
	groups := shareGroups(ms)
	return eachMount(inv, cfg, func(m nfsMount, o *inventory.MountOptions, p Platform) *Finding {
		if m.Runtime == nil || m.Static == nil {
			return nil
		}
		d := diffOptions(m.Static, m.Runtime)
		if len(d) == 0 {
			return nil
		}
		var ev []Evidence
		var names []string
		for _, x := range d {
			names = append(names, fmt.Sprintf("%s %s (table) vs %s (running)", x.name, x.static, x.running))
			ev = append(ev, optEv(m.Static, x.name+" (table)", x.static), optEv(m.Runtime, x.name+" (running)", x.running))
		}
		msg := fmt.Sprintf("the running mount is not what %s asks for: %s; the next mount (reboot, remount) changes it, and until then the database runs with options nobody wrote down", m.Static.File, strings.Join(names, "; "))
		for _, other := range groups[m.ExportKey()] {
			if other.MountPoint != m.MountPoint && !noShareCache(m) && !noShareCache(other) {
				msg += fmt.Sprintf("; it shares its cache with mount %s (same export, no nosharecache) and may be running with that mount's options", other.MountPoint)
				break
			}
		}
		return &Finding{Severity: Warning, Message: msg, Evidence: ev,
			Fix: "remount from the table in a maintenance window (" + remount(m) + "), after correcting the entry if other findings say so"}
	})
}

func checkNotMounted(inv *inventory.Inventory, cfg *Config) []Finding {
	return eachMount(inv, cfg, func(m nfsMount, o *inventory.MountOptions, p Platform) *Finding {
		if m.Mounted || m.RuntimeTable == "" || m.Static == nil || m.Static.NoAuto {
			return nil
		}
		return &Finding{Severity: Info,
			Message:  fmt.Sprintf("%s lists this NFS mount%s but %s does not: it is not mounted now", m.Static.File, roleText(m), m.RuntimeTable),
			Evidence: []Evidence{rawEv(m.Static), {What: "running mount table", Value: "no entry for " + m.MountPoint, File: m.RuntimeTable}},
			Fix:      "mount " + shellq.Quote(m.MountPoint) + " (and find out why it is not mounted: bg retries, a failed boot mount), or remove the entry"}
	})
}

func checkNotPersisted(inv *inventory.Inventory, cfg *Config) []Finding {
	return eachMount(inv, cfg, func(m nfsMount, o *inventory.MountOptions, p Platform) *Finding {
		if !m.Mounted || m.Static != nil || m.Role == "" {
			return nil
		}
		return &Finding{Severity: Info,
			Message:  fmt.Sprintf("mounted%s but in no static mount table: it will not come back after a reboot (mounted by hand, or by an automounter)", roleText(m)),
			Evidence: []Evidence{rawEv(m.Runtime), {What: "static table entry", Value: "none"}},
			Fix:      "add to " + staticTable(m, p) + ": " + recommendedLine(m, p)}
	})
}

func checkRoleUnmatched(inv *inventory.Inventory, cfg *Config) []Finding {
	if cfg == nil || len(cfg.MountRoles) == 0 {
		return nil
	}
	var seen []string
	var file string
	for _, m := range inv.Mounts {
		seen = append(seen, m.MountPoint)
		if o := m.Options(); o != nil && file == "" {
			file = o.File
		}
	}
	keys := make([]string, 0, len(cfg.MountRoles))
	for k := range cfg.MountRoles {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []Finding
	for _, k := range keys {
		// A path that covers a mount or lies inside one matched, even if
		// a longer or stricter path gave that mount its role.
		matched := false
		for _, mp := range seen {
			matched = matched || within(mp, k) || within(k, mp)
		}
		if matched {
			continue
		}
		list := strings.Join(seen, " ")
		if list == "" {
			list = "none"
		}
		out = append(out, Finding{Severity: Warning, Object: "mount role " + k,
			Message:  fmt.Sprintf("--mount-role %s=%s matches no NFS mount, so the %s rules were not applied there (a typo, or the files are not on NFS)", k, cfg.MountRoles[k], cfg.MountRoles[k]),
			Evidence: []Evidence{{What: "--mount-role", Value: k + "=" + string(cfg.MountRoles[k])}, {What: "NFS mount points", Value: list, File: file}},
			Fix:      "give the NFS mount point (or a directory inside it) with --mount-role PATH=ROLE"})
	}
	return out
}
