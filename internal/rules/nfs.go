package rules

import (
	"fmt"
	"strings"
	"time"

	"github.com/interlink/interlink/internal/inventory"
	"github.com/interlink/interlink/internal/shellq"
)

// NFS rules (docs/guides/nfs.md). Role-independent rules judge every NFS
// mount; the role rules judge only mounts the operator gave a role
// (Config.MountRoles), with the platform's row of Oracle's option table.
// A mount's running options (mountinfo, mnttab) are judged when it is
// mounted, otherwise its static entry; options the kernel never shows
// (bg, intr/nointr) are judged on the static entry.
func init() {
	register(
		Rule{ID: "NFS-SOFT", Severity: Warning, Also: []SeverityCase{{Critical, "on datafiles, redo, crs, home and other mounts: Oracle and PostgreSQL need hard"}},
			Title:  "soft NFS mount (databases need hard)",
			Source: srcNFS5 + " (soft, \"silent data corruption\"); " + srcOracleNFS, Check: checkSoft},
		Rule{ID: "NFS-PROTO-UDP", Severity: Warning, Also: []SeverityCase{{Critical, "on datafiles, redo and crs mounts, where a mis-reassembled fragment corrupts blocks"}},
			Title:  "NFS over UDP",
			Source: srcNFS5 + " (\"Using NFS over UDP on high-speed links\"); " + srcOracleNFS, Check: checkUDP},
		Rule{ID: "NFS-RSIZE", Severity: Warning, Also: []SeverityCase{{Critical, "on datafiles, redo and crs mounts, whose files Oracle refuses to open (ORA-27054)"}},
			Title:  "rsize or wsize below 32768",
			Source: srcOracleNFS + "; Oracle alert log \"Expected NFS mount options: rsize>=32768,wsize>=32768,hard\" (ORA-27054)", Check: checkRsize},
		Rule{ID: "NFS-VERS", Severity: Warning, Also: []SeverityCase{{Critical, "for vers=2 on datafiles, redo, crs and home mounts: 8 KiB per RPC, no file above 2 GiB"}},
			Title:  "NFS version other than 3 or 4.1",
			Source: srcOracleNFS, Check: checkVers},
		Rule{ID: "NFS-TIMEO", Severity: Warning, Title: "timeo below 600 over TCP",
			Source: srcNFS5 + " (timeo: TCP default 600); " + srcOracleNFS, Check: checkTimeo},
		Rule{ID: "NFS-INTR", Severity: Warning, Also: []SeverityCase{{Info, "on Linux, where intr is ignored since 2.6.25"}},
			Title:  "intr given (ignored on Linux) or nointr missing elsewhere",
			Source: srcNFS5 + " (intr/nointr ignored since 2.6.25); " + srcOracleNFS, Check: checkIntr},
		Rule{ID: "NFS-BG", Severity: Info, Title: "database mount without bg",
			Source: srcOracleNFS + "; " + srcNFS5 + " (bg/fg)", Check: checkBg},
		Rule{ID: "NFS-AC-DATAFILES", Severity: Critical, Title: "attribute caching on for datafiles/redo (actimeo=0 on Linux, noac elsewhere)",
			Source: srcOracleNFS, Check: checkACDatafiles},
		Rule{ID: "NFS-NOAC-CRS", Severity: Critical, Title: "CRS/voting mount without noac",
			Source: srcOracleNFS, Check: checkNoacCRS},
		Rule{ID: "NFS-AC-HOME", Severity: Warning, Title: "shared ORACLE_HOME attribute caching (actimeo=0 on Linux, noac on Solaris/HP-UX)",
			Source: srcOracleNFS, Check: checkACHome},
		Rule{ID: "NFS-FORCEDIRECTIO", Severity: Warning, Title: "Solaris/HP-UX database mount without forcedirectio",
			Source: srcOracleNFS, Check: checkForceDirectIO},
		Rule{ID: "NFS-NOSUID", Severity: Warning, Title: "nosuid where the Oracle binaries need setuid",
			Source: srcOracleNFS, Check: checkNosuid},
		Rule{ID: "NFS-BACKUP-NOAC", Severity: Warning, Title: "noac or actimeo=0 on a backup mount",
			Source: srcOracleNFS + " (backup, Data Pump and staging mounts); " + srcNFS5 + " (noac forces synchronous writes and no read caching); docs/sources.md", Check: checkBackupNoac},
		Rule{ID: "NFS-NOAC-SYNC", Severity: Info, Title: "noac where not required (it makes every write synchronous)",
			Source: srcNFS5 + " (noac: \"also forces synchronous writes\")", Check: checkNoacSync},
		Rule{ID: "NFS-SHARECACHE", Severity: Warning, Title: "one export mounted twice with different options and no nosharecache",
			Source: srcNFS5 + " (sharecache: \"the mount options from the first mount point take effect\")", Check: checkShareCache},
		Rule{ID: "NFS-FSTAB-SOLARIS-OPT", Severity: Warning, Also: []SeverityCase{{Critical, "on datafiles, redo, crs and home mounts, which then fail at the next mount"}},
			Title:  "Solaris/HP-UX/AIX-only option in a Linux fstab",
			Source: srcNFS5 + " (no forcedirectio on Linux); " + srcOracleNFS, Check: checkSolarisOpt},
		Rule{ID: "NFS-RUNTIME-VS-FSTAB", Severity: Warning, Title: "running mount differs from its static table entry",
			Source: srcNFS5 + "; " + srcOracleNFS, Check: checkRuntimeVsStatic},
		Rule{ID: "NFS-NOT-MOUNTED", Severity: Info, Title: "static NFS entry (mounted at boot) not mounted",
			Source: "fstab(5), vfstab(4)", Check: checkNotMounted},
		Rule{ID: "NFS-NOT-PERSISTED", Severity: Info, Title: "database mount in no static table (gone after reboot)",
			Source: "fstab(5), vfstab(4)", Check: checkNotPersisted},
		Rule{ID: "NFS-ROLE-UNMATCHED", Severity: Warning, Title: "--mount-role path matches no NFS mount",
			Source: "interlink check --mount-role", Check: checkRoleUnmatched},
	)
}

// eachMount runs fn on every NFS mount that has options to judge.
func eachMount(inv *inventory.Inventory, cfg *Config, fn func(m nfsMount, o *inventory.MountOptions, p Platform) *Finding) []Finding {
	var out []Finding
	p := Linux
	if cfg != nil {
		p = platform(cfg.Platform)
	}
	for _, m := range nfsMounts(inv, cfg) {
		o := m.Options()
		if o == nil {
			continue
		}
		if f := fn(m, o, p); f != nil {
			if f.Object == "" {
				f.Object = m.object()
			}
			out = append(out, *f)
		}
	}
	return out
}

// roleText is " (role datafiles)" or "" for messages.
func roleText(m nfsMount) string {
	if m.Role == "" {
		return ""
	}
	return " (role " + string(m.Role) + ")"
}

// staticTable is the table a fix should be written to.
func staticTable(m nfsMount, p Platform) string {
	if m.Static != nil {
		return m.Static.File
	}
	switch platform(p) {
	case Solaris:
		return inventory.VfstabFile
	case AIX:
		return inventory.AIXFilesystems
	}
	return inventory.FstabFile
}

// fixLine is the standard fix: the corrected table line, and a remount
// when the running mount must change too.
func fixLine(m nfsMount, p Platform) string {
	s := "in " + staticTable(m, p) + " use: " + recommendedLine(m, p)
	if m.Mounted {
		s += "; then remount in a maintenance window (" + remount(m) + ")"
	}
	return s
}

// remount is the command pair that mounts m again from its table entry.
func remount(m nfsMount) string {
	return "umount " + shellq.Quote(m.MountPoint) + "; mount " + shellq.Quote(m.MountPoint)
}

func checkSoft(inv *inventory.Inventory, cfg *Config) []Finding {
	return eachMount(inv, cfg, func(m nfsMount, o *inventory.MountOptions, p Platform) *Finding {
		if !o.Soft {
			return nil
		}
		word := "soft"
		if o.Has("softerr") {
			word = "softerr"
		}
		sev := Warning
		if isOracleRole(m.Role) || m.Role == RoleOther {
			sev = Critical
		}
		return &Finding{Severity: sev,
			Message:  fmt.Sprintf("%s mount%s: after the retries time out the client returns an I/O error instead of waiting for the server, which can silently corrupt files (a database's above all); Oracle and PostgreSQL need hard", word, roleText(m)),
			Evidence: []Evidence{optEv(o, "hard/soft", word), rawEv(o)},
			Fix:      fixLine(m, p)}
	})
}

func checkUDP(inv *inventory.Inventory, cfg *Config) []Finding {
	return eachMount(inv, cfg, func(m nfsMount, o *inventory.MountOptions, p Platform) *Finding {
		if o.Proto != "udp" && o.Proto != "udp6" {
			return nil
		}
		sev := Warning
		if isDataRole(m.Role) {
			sev = Critical
		}
		return &Finding{Severity: sev,
			Message:  fmt.Sprintf("NFS over UDP%s: every large read or write is IP-fragmented and one lost fragment loses the whole RPC; at gigabit rates the 16-bit IP ID wraps within a second and fragments can be mis-reassembled into silently corrupt data; Oracle requires proto=tcp", roleText(m)),
			Evidence: []Evidence{optEv(o, "proto", o.Proto), rawEv(o)},
			Fix:      fixLine(m, p)}
	})
}

func checkRsize(inv *inventory.Inventory, cfg *Config) []Finding {
	return eachMount(inv, cfg, func(m nfsMount, o *inventory.MountOptions, p Platform) *Finding {
		var ev []Evidence
		var parts []string
		if o.RsizeBytes > 0 && o.RsizeBytes < 32768 {
			ev = append(ev, optEv(o, "rsize", fmt.Sprint(o.RsizeBytes)))
			parts = append(parts, fmt.Sprintf("rsize=%d", o.RsizeBytes))
		}
		if o.WsizeBytes > 0 && o.WsizeBytes < 32768 {
			ev = append(ev, optEv(o, "wsize", fmt.Sprint(o.WsizeBytes)))
			parts = append(parts, fmt.Sprintf("wsize=%d", o.WsizeBytes))
		}
		if len(ev) == 0 {
			return nil
		}
		sev := Warning
		if isDataRole(m.Role) {
			sev = Critical
		}
		return &Finding{Severity: sev,
			Message:  fmt.Sprintf("%s below 32768%s: Oracle refuses to open database files on it (\"mounted with incorrect options\", ORA-27054) and a 1 MiB multiblock read takes %d RPCs", strings.Join(parts, ", "), roleText(m), (1<<20)/max(1, min(nonZero(o.RsizeBytes), nonZero(o.WsizeBytes)))),
			Evidence: append(ev, rawEv(o)),
			Fix:      fixLine(m, p)}
	})
}

func nonZero(n int) int {
	if n == 0 {
		return 1 << 20
	}
	return n
}

func checkVers(inv *inventory.Inventory, cfg *Config) []Finding {
	return eachMount(inv, cfg, func(m nfsMount, o *inventory.MountOptions, p Platform) *Finding {
		v := o.Vers
		var msg string
		sev := Warning
		switch {
		case v == "2":
			msg = "vers=2: NFSv2 moves at most 8 KiB per RPC and cannot address files above 2 GiB"
			if isOracleRole(m.Role) {
				sev = Critical
			}
		case !isOracleRole(m.Role) || v == "3" || v == "4.1":
			return nil
		case v == "":
			msg = "vers not set: the client negotiates the highest version the server offers (4.2 on current Linux), so the version can change with a server or client upgrade; Oracle documents vers=3 or vers=4.1"
		case v == "4":
			msg = "vers=4: the minor version is negotiated (4.0 on older kernels, 4.2 on current ones); Oracle documents vers=3 or vers=4.1 (4.0 has no sessions, so retransmitted requests are not exactly-once)"
		case v == "4.0":
			msg = "vers=4.0: no sessions, so retransmitted requests are not exactly-once; Oracle documents vers=3 or vers=4.1"
		default:
			msg = fmt.Sprintf("vers=%s is not a version Oracle documents for database files (3 or 4.1)", v)
		}
		value := v
		if value == "" {
			value = "(not set)"
		}
		return &Finding{Severity: sev, Message: msg + roleText(m),
			Evidence: []Evidence{optEv(o, "vers", value), rawEv(o)},
			Fix:      fixLine(m, p)}
	})
}

func checkTimeo(inv *inventory.Inventory, cfg *Config) []Finding {
	return eachMount(inv, cfg, func(m nfsMount, o *inventory.MountOptions, p Platform) *Finding {
		if o.Timeo <= 0 || o.Timeo >= 60*time.Second || o.Proto == "udp" || o.Proto == "udp6" {
			return nil
		}
		raw, _ := o.Get("timeo")
		return &Finding{Severity: Warning,
			Message:  fmt.Sprintf("timeo=%s (%s)%s: over TCP the client waits this long before retrying a request, so a busy filer sees needless retransmissions (and a soft mount fails early); use the TCP default timeo=600 (60 s)", raw, o.Timeo, roleText(m)),
			Evidence: []Evidence{optEv(o, "timeo", raw), rawEv(o)},
			Fix:      fixLine(m, p)}
	})
}

func checkIntr(inv *inventory.Inventory, cfg *Config) []Finding {
	return eachMount(inv, cfg, func(m nfsMount, o *inventory.MountOptions, p Platform) *Finding {
		if p == Linux {
			if m.Static == nil || m.Static.Intr != "intr" {
				return nil
			}
			return &Finding{Severity: Info,
				Message:  "intr has no effect since Linux 2.6.25 (only SIGKILL interrupts an NFS wait); remove it to avoid suggesting otherwise",
				Evidence: []Evidence{optEv(m.Static, "intr", "intr"), rawEv(m.Static)},
				Fix:      "in " + m.Static.File + " use: " + recommendedLine(m, p)}
		}
		if !isOracleRole(m.Role) {
			return nil
		}
		// Solaris mnttab shows what was written; prefer the static table.
		so := m.Static
		if so == nil {
			so = o
		}
		if so.Intr == "nointr" {
			return nil
		}
		value := so.Intr
		if value == "" {
			value = "(not set: intr is the default)"
		}
		return &Finding{Severity: Warning,
			Message:  fmt.Sprintf("no nointr%s: on %s a signal can interrupt an NFS call and the database sees an error on a datafile write; Oracle documents nointr", roleText(m), p.Name()),
			Evidence: []Evidence{optEv(so, "intr", value), rawEv(so)},
			Fix:      fixLine(m, p)}
	})
}

func checkBg(inv *inventory.Inventory, cfg *Config) []Finding {
	return eachMount(inv, cfg, func(m nfsMount, o *inventory.MountOptions, p Platform) *Finding {
		if !isOracleRole(m.Role) || m.Static == nil || m.Static.Bg {
			return nil
		}
		return &Finding{Severity: Info,
			Message:  fmt.Sprintf("no bg%s: if the filer is unreachable at boot the mount is retried in the foreground and holds up the boot; Oracle's documented set has bg", roleText(m)),
			Evidence: []Evidence{optEv(m.Static, "bg", "(not set)"), rawEv(m.Static)},
			Fix:      "in " + m.Static.File + " use: " + recommendedLine(m, p)}
	})
}
