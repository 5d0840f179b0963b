package rules

import (
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/interlink/interlink/internal/inventory"
)

// Sources the NFS rules cite.
const (
	srcOracleNFS = "Oracle note 359515.1 (mount options for Oracle files on NFS) via NetApp TR-3633"
	srcNFS5      = "nfs(5)"
)

// nfsNeed is one cell of the documented option table (docs/guides/nfs.md):
// what a role needs on a platform on top of the base set
// rw,bg,hard,proto=tcp,vers=3|4.1,timeo=600,rsize>=32768,wsize>=32768.
type nfsNeed struct {
	NoIntr, NoAC, Actimeo0, ForceDirectIO, Suid bool
}

// nfsTable is Oracle's table; datafiles, redo and control files share a row.
var nfsTable = map[Platform]map[Role]nfsNeed{
	Linux: {
		RoleDatafiles: {NoIntr: true, Actimeo0: true},
		RoleCRS:       {NoIntr: true, NoAC: true, Actimeo0: true},
		RoleHome:      {NoIntr: true, Actimeo0: true},
	},
	Solaris: {
		RoleDatafiles: {NoIntr: true, NoAC: true, ForceDirectIO: true},
		RoleCRS:       {NoIntr: true, NoAC: true, ForceDirectIO: true},
		RoleHome:      {NoIntr: true, NoAC: true, Suid: true},
	},
	AIX: {
		RoleDatafiles: {NoIntr: true, NoAC: true},
		RoleCRS:       {NoIntr: true, NoAC: true},
		RoleHome:      {NoIntr: true},
	},
	HPUX: {
		RoleDatafiles: {NoIntr: true, NoAC: true, ForceDirectIO: true, Suid: true},
		RoleCRS:       {NoIntr: true, NoAC: true, ForceDirectIO: true, Suid: true},
		RoleHome:      {NoIntr: true, NoAC: true, Suid: true},
	},
}

// need returns the table cell for a role (redo shares the datafiles row);
// ok is false for roles the table does not cover (backup, other, none).
func need(p Platform, r Role) (nfsNeed, bool) {
	if r == RoleRedo {
		r = RoleDatafiles
	}
	n, ok := nfsTable[platform(p)][r]
	return n, ok
}

// Name is the platform as vendors spell it, for messages.
func (p Platform) Name() string {
	switch platform(p) {
	case Solaris:
		return "Solaris"
	case AIX:
		return "AIX"
	case HPUX:
		return "HP-UX"
	}
	return "Linux"
}

func platform(p Platform) Platform {
	if p == "" {
		return Linux
	}
	return p
}

// isOracleRole: the roles Oracle validates mount options for.
func isOracleRole(r Role) bool {
	switch r {
	case RoleDatafiles, RoleRedo, RoleCRS, RoleHome:
		return true
	}
	return false
}

// isDataRole: roles holding database files Oracle refuses to open on a
// wrongly mounted file system (ORA-27054).
func isDataRole(r Role) bool { return r == RoleDatafiles || r == RoleRedo || r == RoleCRS }

// nfsMount is one mount with the role the operator gave it ("" = none).
type nfsMount struct {
	*inventory.Mount
	Role Role
	Key  string // the --mount-role path that gave the role
}

func (m nfsMount) object() string { return "mount " + m.MountPoint }

// nfsMounts pairs every NFS mount with its role. A role given for PATH
// applies to the mount whose mount point is PATH or lies below it, the
// longest such PATH winning (so /u02=datafiles covers /u02/oradata1 and
// /u02/oradata2, and /u02/oradata2=redo overrides it). A PATH below a mount
// point (a directory inside the mount, such as /u02/oradata/PROD) gives its
// role to the deepest NFS mount containing it when no PATH covers that
// mount; if several such paths disagree, the first role in Roles order
// (the strictest) wins.
func nfsMounts(inv *inventory.Inventory, cfg *Config) []nfsMount {
	out := make([]nfsMount, len(inv.Mounts))
	for i := range inv.Mounts {
		out[i] = nfsMount{Mount: &inv.Mounts[i]}
	}
	if cfg == nil {
		return out
	}
	keys := make([]string, 0, len(cfg.MountRoles))
	for k := range cfg.MountRoles {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i := range out {
		best := ""
		for _, k := range keys {
			if within(out[i].MountPoint, k) && (best == "" || len(path.Clean(k)) > len(path.Clean(best))) {
				best = k
			}
		}
		if best != "" {
			out[i].Role, out[i].Key = cfg.MountRoles[best], best
		}
	}
	for _, k := range keys {
		host := deepestContaining(out, k)
		if host < 0 || out[host].Key != "" && within(out[host].MountPoint, out[host].Key) {
			continue
		}
		if r := cfg.MountRoles[k]; out[host].Role == "" || roleRank(r) < roleRank(out[host].Role) {
			out[host].Role, out[host].Key = r, k
		}
	}
	return out
}

// within reports whether p is dir or lies below it.
func within(p, dir string) bool {
	p, dir = path.Clean(p), path.Clean(dir)
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// deepestContaining returns the index of the mount with the longest mount
// point that contains p strictly below it, or -1.
func deepestContaining(ms []nfsMount, p string) int {
	best := -1
	for i, m := range ms {
		if path.Clean(p) != m.MountPoint && within(p, m.MountPoint) && (best < 0 || len(m.MountPoint) > len(ms[best].MountPoint)) {
			best = i
		}
	}
	return best
}

func roleRank(r Role) int {
	for i, x := range Roles {
		if x == r {
			return i
		}
	}
	return len(Roles)
}

// optEv is the evidence of one option value as read from o.
func optEv(o *inventory.MountOptions, what, value string) Evidence {
	return Evidence{What: what, Value: value, File: o.File}
}

// rawEv quotes the whole option string with its line.
func rawEv(o *inventory.MountOptions) Evidence {
	what := "options"
	if o.Line > 0 {
		what = "options (line " + strconv.Itoa(o.Line) + ")"
	}
	return Evidence{What: what, Value: o.Raw, File: o.File}
}

// managed are the options the recommended line decides; every other option
// the admin wrote (_netdev, nodev, x-systemd.*, sec=...) is kept.
var managed = map[string]bool{
	"rw": true, "ro": true, "bg": true, "fg": true, "hard": true, "soft": true, "softerr": true,
	"intr": true, "nointr": true, "tcp": true, "udp": true, "proto": true, "vers": true, "nfsvers": true,
	"minorversion": true, "timeo": true, "rsize": true, "wsize": true, "noac": true, "ac": true,
	"actimeo": true, "acregmin": true, "acregmax": true, "acdirmin": true, "acdirmax": true,
	"forcedirectio": true, "noforcedirectio": true, "suid": true, "nosuid": true, "sync": true,
	"async": true, "defaults": true,
}

// nonLinux are options Linux mount.nfs rejects that other systems accept
// (Solaris and HP-UX forcedirectio and llock, AIX cio and dio).
var nonLinux = []string{"forcedirectio", "noforcedirectio", "llock", "cio", "dio"}

// recommendedOptions is the option string that satisfies every NFS rule
// for this mount's platform and role, keeping the admin's unrelated
// options. It is built from the static entry when there is one (the
// running options list kernel-reported values such as addr= that do not
// belong in a table).
func recommendedOptions(m nfsMount, p Platform) string {
	p = platform(p)
	o := m.Static
	var kept []string
	rw := "rw"
	vers, rsize, wsize := "3", 32768, 32768
	if cur := m.Options(); cur != nil {
		if cur.Vers == "3" || cur.Vers == "4.1" {
			vers = cur.Vers
		}
		rsize, wsize = max(rsize, cur.RsizeBytes), max(wsize, cur.WsizeBytes)
		if cur.Has("ro") && !cur.Has("rw") {
			rw = "ro"
		}
	}
	if o != nil {
		for _, n := range o.Names() {
			if managed[n] || p == Linux && contains(nonLinux, n) {
				continue
			}
			opt := n
			if v, ok := o.Get(n); ok && v != "" {
				opt += "=" + v
			}
			if !contains(kept, opt) {
				kept = append(kept, opt)
			}
		}
	}
	opts := []string{rw, "bg", "hard"}
	nd, covered := need(p, m.Role)
	if covered && nd.NoIntr {
		opts = append(opts, "nointr")
	}
	opts = append(opts, fmt.Sprintf("rsize=%d", rsize), fmt.Sprintf("wsize=%d", wsize), "proto=tcp", "vers="+vers, "timeo=600")
	if nd.NoAC {
		opts = append(opts, "noac")
	}
	if nd.Actimeo0 {
		opts = append(opts, "actimeo=0")
	}
	if nd.ForceDirectIO {
		opts = append(opts, "forcedirectio")
	}
	if nd.Suid {
		opts = append(opts, "suid")
	}
	return strings.Join(append(opts, kept...), ",")
}

// recommendedLine is the whole table line to use, in the format of the
// table the mount came from (fstab, vfstab or an AIX options attribute).
func recommendedLine(m nfsMount, p Platform) string {
	opts := recommendedOptions(m, p)
	dev := m.Device
	fstype := "nfs"
	file := ""
	if m.Static != nil {
		file, dev = m.Static.File, m.Static.Device
	}
	switch {
	case file == inventory.VfstabFile || file == "" && platform(p) == Solaris:
		return fmt.Sprintf("%s - %s %s - yes %s", dev, m.MountPoint, fstype, opts)
	case file == inventory.AIXFilesystems || file == "" && platform(p) == AIX:
		return fmt.Sprintf("%s: options = %s", m.MountPoint, opts)
	}
	return fmt.Sprintf("%s %s %s %s 0 0", escapeFstab(dev), escapeFstab(m.MountPoint), fstype, opts)
}

// escapeFstab writes the blanks and backslashes of a device or mount point
// as fstab(5) octal escapes, so each stays one field of the line. The line
// is for the table, not a shell: no shell quoting.
func escapeFstab(s string) string {
	return strings.NewReplacer(" ", `\040`, "\t", `\011`, "\n", `\012`, `\`, `\134`).Replace(s)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
