package storage

import (
	"path"
	"strings"

	"github.com/interlink/interlink/internal/inventory"
	"github.com/interlink/interlink/internal/rules"
)

// NFS is what a run on an NFS mount adds: the mount's options, what
// /proc/self/mountstats counted for it during the run, and what
// `interlink check` says of the options for the role the profile stands
// for (redo for redo, datafiles for datafile and mkfile, backup, and the
// shared Oracle home for install).
type NFS struct {
	MountPoint string     `json:"mount_point"`
	Device     string     `json:"device"`
	Options    string     `json:"options"` // as mountinfo shows them
	Role       rules.Role `json:"role"`
	// Delta is the per-operation difference of the mount's mountstats
	// between the start and the end of the run; nil when unavailable
	// (DeltaError says why). The counters are the mount's: other processes
	// using the same mount during the run are counted too.
	Delta      *inventory.MountStats `json:"mountstats_delta,omitempty"`
	DeltaError string                `json:"mountstats_error,omitempty"`
	Findings   []rules.Finding       `json:"findings"`
}

// ProfileRole is the mount role a profile stands for, whose option
// requirements (docs/guides/nfs.md) check applies to the mount.
var ProfileRole = map[Profile]rules.Role{
	Redo: rules.RoleRedo, Datafile: rules.RoleDatafiles, Mkfile: rules.RoleDatafiles,
	Backup: rules.RoleBackup, Install: rules.RoleHome,
}

// IsNFS reports whether a filesystem type is an NFS client mount.
func IsNFS(fstype string) bool { return fstype == "nfs" || fstype == "nfs4" }

// nfsMount reads the NFS mount at mountPoint from the node tree at root
// (/ on a live node): its options and mountstats. nil when root's tables
// do not list it as mounted.
func nfsMount(root, mountPoint string) *inventory.Mount {
	src, err := inventory.OpenDir(root)
	if err != nil {
		return nil
	}
	defer src.Close()
	ms, _ := inventory.NFSMounts(src)
	for i := range ms {
		if ms[i].Mounted && ms[i].MountPoint == path.Clean(mountPoint) {
			return &ms[i]
		}
	}
	return nil
}

// NFSReport builds the NFS part of a result from two readings of one
// mount, before and after a run, judged for role.
func NFSReport(before, after *inventory.Mount, role rules.Role) *NFS {
	m := after
	if m == nil {
		m = before
	}
	if m == nil {
		return nil
	}
	n := &NFS{MountPoint: m.MountPoint, Device: m.Device, Role: role, Findings: []rules.Finding{}}
	if o := m.Options(); o != nil {
		n.Options = o.Raw
	}
	switch {
	case before == nil || after == nil:
		n.DeltaError = "the mount was not in the mount table at both ends of the run"
	case before.Stats == nil || after.Stats == nil:
		n.DeltaError = inventory.MountstatsFile + " has no statistics for the mount"
	default:
		d, err := after.Stats.Sub(before.Stats)
		if err != nil {
			n.DeltaError = err.Error()
		} else {
			n.Delta = d
		}
	}
	inv := &inventory.Inventory{Mounts: []inventory.Mount{*m}}
	cfg := &rules.Config{Platform: rules.Linux, MountRoles: map[string]rules.Role{m.MountPoint: role}}
	for _, f := range rules.Evaluate(inv, cfg) {
		if strings.HasPrefix(f.Rule, "NFS-") {
			n.Findings = append(n.Findings, f)
		}
	}
	return n
}
