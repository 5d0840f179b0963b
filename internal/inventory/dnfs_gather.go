package inventory

import (
	"context"
	"path"
	"sort"
	"strconv"
	"strings"
)

// DNFS is what check knows about Oracle Direct NFS on the node: the Oracle
// homes, whether each links the Direct NFS ODM library, and the oranfstab
// files read.
type DNFS struct {
	Homes []OracleHome `json:"homes"`
	// Files are the oranfstab files read: each home's dbs/oranfstab, then
	// /etc/oranfstab (Direct NFS's search order).
	Files []*Oranfstab `json:"files"`
	// Oratab is the oratab file read ("" when none was there).
	Oratab string `json:"oratab,omitempty"`
}

// OracleHome is one Oracle home and its Direct NFS state.
type OracleHome struct {
	Path string   `json:"path"`
	From string   `json:"from"`           // "oratab", "--oracle-home"
	SIDs []string `json:"sids,omitempty"` // from oratab
	// DNFS is "on" (the NFS ODM library is linked), "off" (it is there but
	// not linked), or "unknown" (DNFSDetail says why).
	DNFS       string `json:"dnfs"`
	DNFSDetail string `json:"dnfs_detail"`
	// Oranfstab is the home's dbs/oranfstab when it exists.
	Oranfstab string `json:"oranfstab,omitempty"`
}

// Grid reports whether every SID of the home is an ASM or Grid
// Infrastructure instance (+ASM1, +APX1): the home runs no database.
func (h OracleHome) Grid() bool {
	if len(h.SIDs) == 0 {
		return false
	}
	for _, s := range h.SIDs {
		if !strings.HasPrefix(s, "+") && !strings.HasPrefix(s, "-") {
			return false
		}
	}
	return true
}

// DNFSOn, DNFSOff and DNFSUnknown are the values of OracleHome.DNFS.
const (
	DNFSOn      = "on"
	DNFSOff     = "off"
	DNFSUnknown = "unknown"
)

// Where oratab lives (Linux, AIX; Solaris and HP-UX), and the system-wide
// oranfstab.
const (
	OratabFile        = "/etc/oratab"
	OratabFileSolaris = "/var/opt/oracle/oratab"
	EtcOranfstab      = "/etc/oranfstab"
)

// gatherDNFS reads oratab and the homes given with --oracle-home, each
// home's Direct NFS state and dbs/oranfstab, and /etc/oranfstab. It sets
// inv.DNFS only when there is something to say (a home or an oranfstab).
func gatherDNFS(src *Source, inv *Inventory, opts Options) {
	d := &DNFS{Homes: []OracleHome{}, Files: []*Oranfstab{}}
	var problems []string
	byPath := map[string]int{}
	add := func(home, from, sid string) {
		home = path.Clean(home)
		i, ok := byPath[home]
		if !ok {
			i = len(d.Homes)
			byPath[home] = i
			d.Homes = append(d.Homes, OracleHome{Path: home, From: from})
		}
		if sid != "" {
			d.Homes[i].SIDs = append(d.Homes[i].SIDs, sid)
		}
	}
	for _, f := range []string{OratabFile, OratabFileSolaris} {
		b, err := src.ReadFile(f)
		if err != nil {
			if !isNotExist(err) {
				problems = append(problems, f+": "+errText(err))
			}
			continue
		}
		entries, _ := ParseOratab(strings.NewReader(string(b)))
		d.Oratab = f
		for _, e := range entries {
			add(e.Home, "oratab", e.SID)
		}
		break
	}
	for _, h := range opts.OracleHomes {
		add(h, "--oracle-home", "")
	}
	for i := range d.Homes {
		h := &d.Homes[i]
		h.DNFS, h.DNFSDetail = odmState(src, h.Path)
		f := path.Join(h.Path, "dbs/oranfstab")
		if t, err := readOranfstab(src, f); err == nil {
			h.Oranfstab = f
			d.Files = append(d.Files, t)
		} else if !isNotExist(err) {
			problems = append(problems, f+": "+errText(err))
		}
	}
	if t, err := readOranfstab(src, EtcOranfstab); err == nil {
		d.Files = append(d.Files, t)
	} else if !isNotExist(err) {
		problems = append(problems, EtcOranfstab+": "+errText(err))
	}
	switch {
	case len(d.Homes) == 0 && len(d.Files) == 0 && len(problems) == 0:
		inv.addSection("dnfs", "absent", "no oratab, --oracle-home or oranfstab")
		return
	case len(problems) > 0:
		inv.addSection("dnfs", "partial", strings.Join(problems, "; "))
	default:
		inv.addSection("dnfs", "ok", dnfsSummary(d))
	}
	inv.DNFS = d
}

func dnfsSummary(d *DNFS) string {
	var on []string
	for _, h := range d.Homes {
		if h.DNFS == DNFSOn {
			on = append(on, h.Path)
		}
	}
	s := pluralN(len(d.Homes), "Oracle home") + ", " + pluralN(len(d.Files), "oranfstab")
	if len(on) > 0 {
		s += "; Direct NFS on in " + strings.Join(on, ", ")
	}
	return s
}

func pluralN(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

func readOranfstab(src *Source, f string) (*Oranfstab, error) {
	b, err := src.ReadFile(f)
	if err != nil {
		return nil, err
	}
	return ParseOranfstab(strings.NewReader(string(b)), f)
}

// odmState says whether the home links the Direct NFS ODM library. Since
// 12c `make -f ins_rdbms.mk dnfs_on` copies lib/libnfsodmNN.so into
// rdbms/lib/odm/ (dnfs_off removes it); in 11g it made lib/libodmNN.so a
// link to lib/libnfsodmNN.so. Only names and links are read, never the
// libraries.
func odmState(src *Source, home string) (state, detail string) {
	lib := path.Join(home, "lib")
	odm := path.Join(home, "rdbms/lib/odm")
	if ents, err := src.ReadDir(odm); err == nil {
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), "libnfsodm") {
				src.notePresent(path.Join(odm, e.Name()))
				return DNFSOn, path.Join(odm, e.Name()) + " is there (make -f ins_rdbms.mk dnfs_on)"
			}
		}
	}
	ents, err := src.ReadDir(lib)
	if err != nil {
		if isNotExist(err) {
			return DNFSUnknown, lib + " is not there (not an Oracle home, or not on this node)"
		}
		return DNFSUnknown, lib + ": " + errText(err)
	}
	var nfsodm []string
	for _, e := range ents {
		n := e.Name()
		switch {
		case strings.HasPrefix(n, "libnfsodm") && strings.Contains(n, ".so"):
			nfsodm = append(nfsodm, n)
			src.notePresent(path.Join(lib, n))
		case strings.HasPrefix(n, "libodm") && strings.Contains(n, ".so"):
			if t, err := src.Readlink(path.Join(lib, n)); err == nil && strings.HasPrefix(path.Base(t), "libnfsodm") {
				return DNFSOn, path.Join(lib, n) + " -> " + t + " (11g dnfs_on)"
			}
		}
	}
	sort.Strings(nfsodm)
	if len(nfsodm) > 0 {
		return DNFSOff, path.Join(lib, nfsodm[0]) + " is there but not linked (" + odm + " has no libnfsodm): dnfs_off"
	}
	return DNFSUnknown, lib + " has no libnfsodm library (not a database home?)"
}

// DNFSMount is the oranfstab entry Direct NFS uses for one mount of one
// Oracle home: the first file in its search order that lists the mount.
type DNFSMount struct {
	Mount  string `json:"mount"`
	Server string `json:"server"`
	Export string `json:"export"`
	File   string `json:"file"`
	Line   int    `json:"line"`
	// Paths are the server's network paths, in order.
	Paths []string `json:"paths"`
	// Shadowed lists later entries for the same mount that dNFS ignores
	// ("FILE line N").
	Shadowed []string `json:"shadowed,omitempty"`
}

// Effective returns, for the home at index i, the entry dNFS takes for
// each mount: its dbs/oranfstab first, then /etc/oranfstab (mounts listed
// in neither come from the mount table and are not listed).
func (d *DNFS) Effective(i int) []DNFSMount {
	h := d.Homes[i]
	var order []*Oranfstab
	for _, want := range []string{h.Oranfstab, EtcOranfstab} {
		for _, t := range d.Files {
			if want != "" && t.File == want {
				order = append(order, t)
			}
		}
	}
	var out []DNFSMount
	at := map[string]int{}
	for _, t := range order {
		for _, s := range t.Servers {
			for _, e := range s.Exports {
				if j, ok := at[e.Mount]; ok {
					out[j].Shadowed = append(out[j].Shadowed, t.File+" line "+strconv.Itoa(e.Line))
					continue
				}
				m := DNFSMount{Mount: e.Mount, Server: s.Name, Export: e.Export, File: t.File, Line: e.Line}
				for _, p := range s.Paths {
					m.Paths = append(m.Paths, p.Value)
				}
				at[e.Mount] = len(out)
				out = append(out, m)
			}
		}
	}
	return out
}

// ReadDNFS reads only the Direct NFS part of the node under src: oratab,
// the homes (with extra homes besides oratab's), their oranfstab files and
// /etc/oranfstab. It returns nil and the section's detail when there is
// nothing to read.
func ReadDNFS(ctx context.Context, src *Source, homes []string) (*DNFS, string) {
	inv := &Inventory{}
	src.bind(ctx)
	defer src.unbind()
	gatherDNFS(src, inv, Options{OracleHomes: homes})
	detail := ""
	if len(inv.Sections) > 0 {
		detail = inv.Sections[0].Detail
	}
	return inv.DNFS, detail
}
