package inventory

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Oranfstab is one Direct NFS configuration file ($ORACLE_HOME/dbs/oranfstab
// or /etc/oranfstab) parsed into its server entries, with the line of every
// value so findings can quote their evidence. Lines that could not be
// understood are in Problems; the rest is still parsed.
type Oranfstab struct {
	File     string          `json:"file"`
	Servers  []DNFSServer    `json:"servers"`
	Problems []DNFSLineIssue `json:"problems,omitempty"`
}

// DNFSServer is one `server:` entry: the filer, up to four network paths to
// it (each `path:` paired with the `local:` of the same position), and the
// exports the database reaches through them.
type DNFSServer struct {
	Name            string       `json:"name"`
	Line            int          `json:"line"`
	Locals          []DNFSValue  `json:"locals,omitempty"`
	Paths           []DNFSValue  `json:"paths,omitempty"`
	Exports         []DNFSExport `json:"exports,omitempty"`
	NFSVersion      *DNFSValue   `json:"nfs_version,omitempty"` // nfsv3 (the default), nfsv4, nfsv4.1, pnfs
	Dontroute       bool         `json:"dontroute,omitempty"`
	MountTimeout    *DNFSValue   `json:"mnt_timeout,omitempty"`
	SecurityDefault *DNFSValue   `json:"security_default,omitempty"`
	Management      []DNFSValue  `json:"management,omitempty"`
	Community       *DNFSValue   `json:"community,omitempty"`
	UID             *DNFSValue   `json:"uid,omitempty"`
	GID             *DNFSValue   `json:"gid,omitempty"`
}

// DNFSValue is an attribute's value and the line it came from.
type DNFSValue struct {
	Value string `json:"value"`
	Line  int    `json:"line"`
}

// DNFSExport is an `export: PATH mount: DIR [security: FLAVOR]` line.
type DNFSExport struct {
	Export   string `json:"export"`
	Mount    string `json:"mount"`
	Security string `json:"security,omitempty"`
	Line     int    `json:"line"`
}

// DNFSLineIssue is a line of an oranfstab that is not valid.
type DNFSLineIssue struct {
	Line    int    `json:"line"`
	Text    string `json:"text"`
	Problem string `json:"problem"`
}

// Values of the enumerated attributes (Oracle Database installation
// guides, "Configurable Attributes for the oranfstab File").
var (
	DNFSVersions   = []string{"nfsv3", "nfsv4", "nfsv4.1", "pnfs"}
	DNFSSecurities = []string{"sys", "krb5", "krb5i", "krb5p"}
)

// DNFSMaxPaths is how many network paths one server entry may list.
const DNFSMaxPaths = 4

// ParseOranfstab reads an oranfstab. It fails only when r cannot be read;
// bad lines become Problems.
func ParseOranfstab(r io.Reader, file string) (*Oranfstab, error) {
	t := &Oranfstab{File: file}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	var cur *DNFSServer
	n := 0
	for sc.Scan() {
		n++
		raw := sc.Text()
		line := strings.TrimSpace(raw)
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		if line == "" {
			continue
		}
		bad := func(format string, a ...any) {
			t.Problems = append(t.Problems, DNFSLineIssue{Line: n, Text: raw, Problem: fmt.Sprintf(format, a...)})
		}
		key, val, hasColon := strings.Cut(line, ":")
		key, val = strings.ToLower(strings.TrimSpace(key)), strings.TrimSpace(val)
		if !hasColon {
			if key == "dontroute" {
				if cur == nil {
					bad("dontroute before any server: entry")
				} else {
					cur.Dontroute = true
				}
				continue
			}
			bad("not an attribute: want NAME: VALUE")
			continue
		}
		if key == "server" {
			if val == "" {
				bad("server: without a name")
				cur = nil
				continue
			}
			t.Servers = append(t.Servers, DNFSServer{Name: val, Line: n})
			cur = &t.Servers[len(t.Servers)-1]
			continue
		}
		if cur == nil {
			bad("%s: before any server: entry", key)
			continue
		}
		v := DNFSValue{Value: val, Line: n}
		if val == "" && key != "export" {
			bad("%s: has no value", key)
			continue
		}
		switch key {
		case "local":
			cur.Locals = append(cur.Locals, v)
		case "path":
			cur.Paths = append(cur.Paths, v)
		case "export":
			e, err := parseDNFSExport(line, n)
			if err != "" {
				bad("%s", err)
				continue
			}
			cur.Exports = append(cur.Exports, e)
		case "nfs_version":
			if !oneOf(strings.ToLower(val), DNFSVersions) {
				bad("nfs_version %q: want one of %s", val, strings.Join(DNFSVersions, ", "))
				continue
			}
			v.Value = strings.ToLower(val)
			cur.NFSVersion = &v
		case "mnt_timeout":
			if s, err := strconv.Atoi(val); err != nil || s <= 0 {
				bad("mnt_timeout %q: want a number of seconds", val)
				continue
			}
			cur.MountTimeout = &v
		case "security_default":
			if !oneOf(strings.ToLower(val), DNFSSecurities) {
				bad("security_default %q: want one of %s", val, strings.Join(DNFSSecurities, ", "))
				continue
			}
			cur.SecurityDefault = &v
		case "management":
			cur.Management = append(cur.Management, v)
		case "community":
			cur.Community = &v
		case "uid", "gid":
			if id, err := strconv.Atoi(val); err != nil || id < 0 {
				bad("%s %q: want a numeric id", key, val)
				continue
			}
			if key == "uid" {
				cur.UID = &v
			} else {
				cur.GID = &v
			}
		case "mount", "security":
			bad("%s: belongs on an export: line (export: PATH mount: DIR)", key)
		default:
			bad("unknown attribute %q", key)
		}
	}
	if err := sc.Err(); err != nil {
		return t, fmt.Errorf("oranfstab %s: %w", file, err)
	}
	return t, nil
}

// parseDNFSExport parses "export: PATH mount: DIR [security: FLAVOR]".
func parseDNFSExport(line string, n int) (DNFSExport, string) {
	e := DNFSExport{Line: n}
	f := strings.Fields(line)
	for i := 0; i < len(f); i++ {
		k := strings.ToLower(strings.TrimSuffix(f[i], ":"))
		if !strings.HasSuffix(f[i], ":") || i+1 >= len(f) {
			return e, fmt.Sprintf("export line: expected 'export: PATH mount: DIR', found %q", f[i])
		}
		i++
		switch k {
		case "export":
			e.Export = f[i]
		case "mount":
			e.Mount = f[i]
		case "security":
			if !oneOf(strings.ToLower(f[i]), DNFSSecurities) {
				return e, fmt.Sprintf("security %q: want one of %s", f[i], strings.Join(DNFSSecurities, ", "))
			}
			e.Security = strings.ToLower(f[i])
		default:
			return e, fmt.Sprintf("export line: unknown attribute %q", k)
		}
	}
	switch {
	case e.Export == "":
		return e, "export: without a path"
	case e.Mount == "":
		return e, fmt.Sprintf("export %s has no mount: on its line", e.Export)
	}
	return e, ""
}

func oneOf(s string, set []string) bool {
	for _, x := range set {
		if s == x {
			return true
		}
	}
	return false
}
