package inventory

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
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

// dnfsKeys are the attribute names an oranfstab line may hold. A line
// holds one or more NAME: VALUE pairs: Oracle's own examples write
// "local: 192.0.2.0 path: 192.0.2.1" and "export: /vol/a mount: /a" on one
// line, others write each pair on its own line or "path:192.0.2.1".
var dnfsKeys = regexp.MustCompile(`(?i)(?:^|\s)(server|local|path|export|mount|security|nfs_version|mnt_timeout|security_default|management|community|uid|gid)\s*:`)

// dnfsPair is one NAME: VALUE of a line.
type dnfsPair struct{ key, val string }

// splitDNFSLine cuts a line into its pairs. ok is false when the line does
// not start with a known NAME: (then key is its first word).
func splitDNFSLine(line string) (pairs []dnfsPair, first string, ok bool) {
	idx := dnfsKeys.FindAllStringSubmatchIndex(line, -1)
	if len(idx) == 0 || strings.TrimSpace(line[:idx[0][2]]) != "" {
		first, _, _ = strings.Cut(line, ":")
		return nil, strings.ToLower(strings.TrimSpace(first)), false
	}
	for i, m := range idx {
		end := len(line)
		if i+1 < len(idx) {
			end = idx[i+1][0]
		}
		pairs = append(pairs, dnfsPair{strings.ToLower(line[m[2]:m[3]]), strings.TrimSpace(line[m[1]:end])})
	}
	return pairs, "", true
}

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
		if strings.EqualFold(line, "dontroute") {
			if cur == nil {
				bad("dontroute before any server: entry")
			} else {
				cur.Dontroute = true
			}
			continue
		}
		pairs, first, ok := splitDNFSLine(line)
		if !ok {
			if !strings.Contains(line, ":") {
				bad("not an attribute: want NAME: VALUE")
			} else {
				bad("unknown attribute %q", first)
			}
			continue
		}
		if pairs[0].key == "export" {
			e, err := dnfsExport(pairs, n)
			switch {
			case err != "":
				bad("%s", err)
			case cur == nil:
				bad("export: before any server: entry")
			default:
				cur.Exports = append(cur.Exports, e)
			}
			continue
		}
		for _, p := range pairs {
			if p.key == "server" {
				if p.val == "" {
					bad("server: without a name")
					cur = nil
					continue
				}
				t.Servers = append(t.Servers, DNFSServer{Name: p.val, Line: n})
				cur = &t.Servers[len(t.Servers)-1]
				continue
			}
			if cur == nil {
				bad("%s: before any server: entry", p.key)
				continue
			}
			if msg := cur.set(p, n); msg != "" {
				bad("%s", msg)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return t, fmt.Errorf("oranfstab %s: %w", file, err)
	}
	return t, nil
}

// set stores one attribute of a server entry, or says what is wrong
// with it.
func (cur *DNFSServer) set(p dnfsPair, n int) string {
	key, val := p.key, p.val
	v := DNFSValue{Value: val, Line: n}
	if val == "" {
		return key + ": has no value"
	}
	if strings.ContainsAny(val, " \t") && key != "community" {
		return fmt.Sprintf("%s %q: one value per %s: (put each on its own line)", key, val, key)
	}
	switch key {
	case "local":
		cur.Locals = append(cur.Locals, v)
	case "path":
		cur.Paths = append(cur.Paths, v)
	case "nfs_version":
		if !oneOf(strings.ToLower(val), DNFSVersions) {
			return fmt.Sprintf("nfs_version %q: want one of %s", val, strings.Join(DNFSVersions, ", "))
		}
		v.Value = strings.ToLower(val)
		cur.NFSVersion = &v
	case "mnt_timeout":
		if s, err := strconv.Atoi(val); err != nil || s <= 0 {
			return fmt.Sprintf("mnt_timeout %q: want a number of seconds", val)
		}
		cur.MountTimeout = &v
	case "security_default":
		if !oneOf(strings.ToLower(val), DNFSSecurities) {
			return fmt.Sprintf("security_default %q: want one of %s", val, strings.Join(DNFSSecurities, ", "))
		}
		cur.SecurityDefault = &v
	case "management":
		cur.Management = append(cur.Management, v)
	case "community":
		cur.Community = &v
	case "uid", "gid":
		if id, err := strconv.Atoi(val); err != nil || id < 0 {
			return fmt.Sprintf("%s %q: want a numeric id", key, val)
		}
		if key == "uid" {
			cur.UID = &v
		} else {
			cur.GID = &v
		}
	case "mount", "security":
		return key + ": belongs on an export: line (export: PATH mount: DIR)"
	}
	return ""
}

// dnfsExport builds an export from "export: PATH mount: DIR [security: FLAVOR]".
func dnfsExport(pairs []dnfsPair, n int) (DNFSExport, string) {
	e := DNFSExport{Line: n}
	for _, p := range pairs {
		switch p.key {
		case "export":
			e.Export = p.val
		case "mount":
			e.Mount = p.val
		case "security":
			if !oneOf(strings.ToLower(p.val), DNFSSecurities) {
				return e, fmt.Sprintf("security %q: want one of %s", p.val, strings.Join(DNFSSecurities, ", "))
			}
			e.Security = strings.ToLower(p.val)
		default:
			return e, fmt.Sprintf("export line: %s: does not belong on it (want export: PATH mount: DIR [security: FLAVOR])", p.key)
		}
	}
	switch {
	case e.Export == "":
		return e, "export: without a path"
	case e.Mount == "":
		return e, fmt.Sprintf("export %s has no mount: on its line", e.Export)
	case strings.ContainsAny(e.Export+e.Mount, " \t"):
		return e, "export line: one export: and one mount: per line"
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
