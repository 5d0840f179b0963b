package rules

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/interlink/interlink/internal/inventory"
)

// NFS rules (DOMAIN.md section 5). Role-independent rules judge every NFS
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
			Source: srcOracleNFS + " (backup, Data Pump and staging mounts); DOMAIN.md section 5 measurements", Check: checkBackupNoac},
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
		s += "; then remount in a maintenance window (umount " + m.MountPoint + "; mount " + m.MountPoint + ")"
	}
	return s
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
			Fix: "remount from the table in a maintenance window (umount " + m.MountPoint + "; mount " + m.MountPoint + "), after correcting the entry if other findings say so"}
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
			Fix:      "mount " + m.MountPoint + " (and find out why it is not mounted: bg retries, a failed boot mount), or remove the entry"}
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
