package inventory

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// tableEntry is one line (or AIX stanza) of a mount table. Opts is filled
// only for NFS entries; other file systems are kept so callers can count
// them but are never judged.
type tableEntry struct {
	Device     string
	MountPoint string
	FSType     string
	RawOptions string
	Line       int
	NoAuto     bool // the table says not to mount it at boot
	Opts       *MountOptions
}

// isNFS reports whether a file-system type is an NFS client mount (nfsd
// and rpc_pipefs are not).
func isNFS(fstype string) bool {
	switch strings.ToLower(fstype) {
	case "nfs", "nfs3", "nfs4":
		return true
	}
	return false
}

// unescapeOctal turns the \NNN escapes that fstab and the kernel use for
// blanks in paths (\040 space, \011 tab, \012 newline, \134 backslash)
// back into bytes. Anything that is not a complete escape stays as it is.
func unescapeOctal(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && s[i+1] >= '0' && s[i+1] <= '3' && isOctal(s[i+2]) && isOctal(s[i+3]) {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// scanLines calls fn for every line that is neither blank nor a comment
// (starting with one of the comment bytes after optional blanks), with its
// 1-based number. It stops at the first error fn returns.
func scanLines(r io.Reader, comments string, fn func(n int, line string) error) error {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	n := 0
	for s.Scan() {
		n++
		line := s.Text()
		t := strings.TrimSpace(line)
		if t == "" || strings.ContainsRune(comments, rune(t[0])) {
			continue
		}
		if err := fn(n, line); err != nil {
			return err
		}
	}
	if err := s.Err(); err != nil {
		return fmt.Errorf("line %d: %w", n+1, err)
	}
	return nil
}

// withOptions parses the options of an NFS entry; err names the line.
func (e *tableEntry) withOptions(file string) error {
	if !isNFS(e.FSType) {
		return nil
	}
	o, err := ParseMountOptions(e.RawOptions)
	if err != nil {
		return fmt.Errorf("line %d: %w", e.Line, err)
	}
	o.File, o.Line, o.Device, o.FSType = file, e.Line, e.Device, e.FSType
	o.NoAuto = o.NoAuto || e.NoAuto
	e.Opts = o
	return nil
}

// columns describes a one-line-per-mount table: how many fields a line
// may have, which field is which, and how to split a line.
type columns struct {
	min, max              int
	dev, mp, typ, opts    int // field indexes; opts may be beyond a short line
	atBoot                int // vfstab's mount-at-boot field; 0: none
	usage                 string
	tabs, escaped, dashes bool // split on tabs when present; \040 escapes; "-" is empty
}

func (c columns) parse(r io.Reader, file string) ([]tableEntry, error) {
	var out []tableEntry
	err := scanLines(r, "#", func(n int, line string) error {
		f := strings.Fields(line)
		if c.tabs && strings.Contains(line, "\t") {
			// Solaris mnttab separates with tabs, so a path may hold a space.
			f = strings.Split(strings.TrimSpace(line), "\t")
		}
		if len(f) < c.min || len(f) > c.max {
			return fmt.Errorf("line %d: want %s, got %d fields", n, c.usage, len(f))
		}
		e := tableEntry{Device: f[c.dev], MountPoint: f[c.mp], FSType: f[c.typ], RawOptions: "defaults", Line: n}
		if c.opts < len(f) {
			e.RawOptions = f[c.opts]
		}
		if c.escaped {
			e.Device, e.MountPoint = unescapeOctal(e.Device), unescapeOctal(e.MountPoint)
		}
		if c.atBoot > 0 && f[c.atBoot] == "no" {
			e.NoAuto = true
		}
		if c.dashes && e.RawOptions == "-" {
			e.RawOptions = ""
		}
		if err := e.withOptions(file); err != nil {
			return err
		}
		out = append(out, e)
		return nil
	})
	return out, err
}

// parseFstab reads the Linux and HP-UX fstab(5) format:
// "device mountpoint type options [dump [pass]]", # comments, \040 escapes.
func parseFstab(r io.Reader, file string) ([]tableEntry, error) {
	return columns{min: 3, max: 6, dev: 0, mp: 1, typ: 2, opts: 3, escaped: true,
		usage: "4 to 6 fields (device mountpoint type options dump pass)"}.parse(r, file)
}

// parseVfstab reads Solaris /etc/vfstab: seven fields "device fsckdev
// mountpoint type pass atboot options", "-" for an empty field.
func parseVfstab(r io.Reader, file string) ([]tableEntry, error) {
	return columns{min: 7, max: 7, dev: 0, mp: 2, typ: 3, opts: 6, atBoot: 5, dashes: true,
		usage: "7 fields (device fsckdev mountpoint type pass atboot options)"}.parse(r, file)
}

// parseMnttab reads Solaris and HP-UX /etc/mnttab: "special mountpoint
// type options time ..." separated by tabs (Solaris) or blanks (HP-UX).
func parseMnttab(r io.Reader, file string) ([]tableEntry, error) {
	return columns{min: 4, max: 1 << 10, dev: 0, mp: 1, typ: 2, opts: 3, tabs: true,
		usage: "at least 4 fields (special mountpoint type options)"}.parse(r, file)
}

// parseAIXFilesystems reads AIX /etc/filesystems stanzas:
//
//	/u02/oradata:
//	        dev       = "/vol/oradata"
//	        vfs       = nfs
//	        nodename  = nas01
//	        options   = rw,bg,hard,...
//
// Linux has a file of the same name that lists file-system types; a file
// without any stanza header is taken to be that and yields nothing.
func parseAIXFilesystems(r io.Reader, file string) ([]tableEntry, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	text := string(b)
	if !looksLikeStanzas(text) {
		return nil, nil
	}
	var out []tableEntry
	var cur *tableEntry
	var node string
	flush := func() error {
		if cur == nil || cur.MountPoint == "default" {
			return nil
		}
		if node != "" && !strings.Contains(cur.Device, ":") {
			cur.Device = node + ":" + cur.Device
		}
		if err := cur.withOptions(file); err != nil {
			return err
		}
		out = append(out, *cur)
		return nil
	}
	err = scanLines(strings.NewReader(text), "*#", func(n int, line string) error {
		if line[0] != ' ' && line[0] != '\t' {
			name, ok := strings.CutSuffix(strings.TrimSpace(line), ":")
			if !ok || name == "" {
				return fmt.Errorf("line %d: want a stanza header \"/mount/point:\" or an indented attribute", n)
			}
			if err := flush(); err != nil {
				return err
			}
			cur, node = &tableEntry{MountPoint: name, Line: n}, ""
			return nil
		}
		if cur == nil {
			return fmt.Errorf("line %d: attribute before the first stanza header", n)
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return fmt.Errorf("line %d: want \"attribute = value\"", n)
		}
		v = strings.Trim(strings.TrimSpace(v), `"`)
		switch strings.TrimSpace(k) {
		case "dev":
			cur.Device = v
		case "vfs":
			cur.FSType = v
		case "nodename":
			node = v
		case "options":
			cur.RawOptions, cur.Line = v, n
		case "mount":
			cur.NoAuto = v == "false"
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return out, nil
}

func looksLikeStanzas(text string) bool {
	for _, l := range strings.Split(text, "\n") {
		t := strings.TrimSpace(l)
		if t != "" && l[0] != ' ' && l[0] != '\t' && t[0] != '*' && t[0] != '#' && strings.HasSuffix(t, ":") {
			return true
		}
	}
	return false
}
