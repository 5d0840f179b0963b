package inventory

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// Mount is one NFS file system: the running mount (Linux mountinfo, or
// Solaris/HP-UX mnttab), the static table entry that asks for it (fstab,
// Solaris vfstab, AIX filesystems), or both, joined on the mount point.
// Runtime and Static keep their own option strings and files, so a rule
// can quote exactly what it saw and where.
type Mount struct {
	Device     string `json:"device"` // server:/export
	Server     string `json:"server"`
	Export     string `json:"export"`
	MountPoint string `json:"mount_point"`
	FSType     string `json:"fstype"`
	// Mounted reports whether the running mount table lists it; false
	// means only a static entry exists (or no running table was readable).
	Mounted bool `json:"mounted"`
	// RuntimeTable is the running mount table that was read (mountinfo or
	// mnttab), whether or not it lists this mount; empty when none was
	// readable, so "not mounted" cannot be told from "unknown".
	RuntimeTable string        `json:"runtime_table,omitempty"`
	Runtime      *MountOptions `json:"runtime,omitempty"`
	Static       *MountOptions `json:"static,omitempty"`
	Stats        *MountStats   `json:"stats,omitempty"`
}

// Options returns the options the mount runs with: the running mount's
// when it is mounted, otherwise the static entry's. Options that the
// kernel never shows (bg, nointr, actimeo as written) are only in Static.
func (m *Mount) Options() *MountOptions {
	if m.Runtime != nil {
		return m.Runtime
	}
	return m.Static
}

// Node paths of the mount tables gatherNFS reads.
const (
	MountinfoFile    = "/proc/self/mountinfo"
	MountstatsFile   = "/proc/self/mountstats"
	FstabFile        = "/etc/fstab"
	VfstabFile       = "/etc/vfstab"
	MnttabFile       = "/etc/mnttab"
	AIXFilesystems   = "/etc/filesystems"
	sectionMounts    = "mounts"
	errNoMountTables = "no running mount table (" + MountinfoFile + ", " + MnttabFile + ") and no static table (" + FstabFile + ", " + VfstabFile + ", " + AIXFilesystems + ")"
)

// NFSMounts reads only the mount tables and mountstats under src (what
// Gather's "mounts" section reads) and returns the NFS mounts, sorted by
// mount point, with that section. A caller that wants two readings (before
// and after a run) opens a Source for each: a Source keeps what it read.
func NFSMounts(src *Source) ([]Mount, Section) {
	inv := &Inventory{Mounts: []Mount{}}
	gatherNFS(src, inv)
	return inv.Mounts, inv.Sections[len(inv.Sections)-1]
}

type tableParser func(r io.Reader, file string) ([]tableEntry, error)

// gatherNFS fills inv.Mounts and the "mounts" section. The running table
// is mountinfo (Linux) or else mnttab (Solaris, HP-UX); every static
// table present is read. A table that cannot be read or parsed is named in
// the section detail and the others are still used.
func gatherNFS(src *Source, inv *Inventory) {
	g := nfsGatherer{src: src, mounts: map[string]*Mount{}}
	runtime, rtFile := g.table(MountinfoFile, parseMountinfo), MountinfoFile
	if !g.found[MountinfoFile] {
		runtime, rtFile = g.table(MnttabFile, parseMnttab), MnttabFile
	}
	for _, e := range runtime {
		m := g.mount(e)
		m.Mounted, m.Runtime = true, e.Opts
		m.Device, m.FSType = e.Device, e.FSType
	}
	for _, t := range []struct {
		file  string
		parse tableParser
	}{{FstabFile, parseFstab}, {VfstabFile, parseVfstab}, {AIXFilesystems, parseAIXFilesystems}} {
		for _, e := range g.table(t.file, t.parse) {
			m := g.mount(e)
			m.Static = e.Opts
			if !m.Mounted {
				m.Device, m.FSType = e.Device, e.FSType
			}
		}
	}
	if g.found[rtFile] && rtFile == MountinfoFile {
		g.attachStats()
	}

	rtRead := ""
	if g.parsed[rtFile] {
		rtRead = rtFile
	}
	for _, m := range g.mounts {
		m.RuntimeTable = rtRead
		m.Server, m.Export = splitDevice(m.Device)
		inv.Mounts = append(inv.Mounts, *m)
	}
	sort.Slice(inv.Mounts, func(i, j int) bool { return inv.Mounts[i].MountPoint < inv.Mounts[j].MountPoint })
	inv.Sections = append(inv.Sections, g.section(rtFile))
}

type nfsGatherer struct {
	src    *Source
	mounts map[string]*Mount
	found  map[string]bool // tables that exist
	good   int             // tables read and parsed
	parsed map[string]bool // which ones
	notes  []string        // per-table results for the section detail
	failed bool
}

func (g *nfsGatherer) mount(e tableEntry) *Mount {
	mp := path.Clean(e.MountPoint)
	m := g.mounts[mp]
	if m == nil {
		m = &Mount{MountPoint: mp}
		g.mounts[mp] = m
	}
	return m
}

// table reads and parses one table and returns its NFS entries.
func (g *nfsGatherer) table(file string, parse tableParser) []tableEntry {
	if g.found == nil {
		g.found, g.parsed = map[string]bool{}, map[string]bool{}
	}
	b, err := g.src.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	g.found[file] = true
	if err == nil {
		var all []tableEntry
		all, err = parse(bytes.NewReader(b), file)
		if err == nil {
			var nfs []tableEntry
			for _, e := range all {
				if e.Opts != nil {
					nfs = append(nfs, e)
				}
			}
			g.good++
			g.parsed[file] = true
			g.notes = append(g.notes, fmt.Sprintf("%s: %d NFS of %d entries", file, len(nfs), len(all)))
			return nfs
		}
	}
	g.failed = true
	g.notes = append(g.notes, fmt.Sprintf("%s: %v", file, unwrapPathError(err)))
	return nil
}

// attachStats joins mountstats to the running mounts by mount point.
func (g *nfsGatherer) attachStats() {
	b, err := g.src.ReadFile(MountstatsFile)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	var stats map[string]*MountStats
	if err == nil {
		stats, err = ParseMountstats(bytes.NewReader(b), MountstatsFile)
	}
	if err != nil {
		g.failed = true
		g.notes = append(g.notes, fmt.Sprintf("%s: %v", MountstatsFile, unwrapPathError(err)))
		return
	}
	n := 0
	for mp, st := range stats {
		if m := g.mounts[path.Clean(mp)]; m != nil && m.Mounted {
			m.Stats = st
			n++
		}
	}
	g.notes = append(g.notes, fmt.Sprintf("%s: statistics for %d NFS mounts", MountstatsFile, n))
}

func (g *nfsGatherer) section(rtFile string) Section {
	s := Section{Name: sectionMounts, Status: "ok", Detail: strings.Join(g.notes, "; ")}
	switch {
	case len(g.found) == 0:
		s.Status, s.Detail = "absent", errNoMountTables
	case g.good == 0:
		s.Status = "unreadable"
	case g.failed:
		s.Status = "partial"
	case !g.found[rtFile]:
		s.Status = "partial"
		s.Detail += "; no running mount table (" + MountinfoFile + ", " + MnttabFile + "): judged the static tables only"
	}
	return s
}

// unwrapPathError drops the machine path of a *fs.PathError (the root
// prefix of a fixture or bundle) so the detail names only the node path.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// splitDevice splits "server:/export" (or "[v6addr]:/export").
func splitDevice(dev string) (server, export string) {
	if strings.HasPrefix(dev, "[") {
		if i := strings.Index(dev, "]:"); i > 0 {
			return dev[1:i], dev[i+2:]
		}
	}
	if i := strings.Index(dev, ":"); i >= 0 {
		return dev[:i], dev[i+1:]
	}
	return "", dev
}

// ExportKey identifies an export independent of how it was written:
// "nas01:/vol/oradata/" and "nas01:/vol/oradata" are the same export.
func (m *Mount) ExportKey() string {
	if m.Export == "" {
		return m.Device
	}
	return strings.ToLower(m.Server) + ":" + path.Clean(m.Export)
}
