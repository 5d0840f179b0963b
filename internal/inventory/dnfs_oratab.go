package inventory

import (
	"bufio"
	"io"
	"strings"
)

// OratabEntry is one line of /etc/oratab: SID:ORACLE_HOME:STARTUP.
type OratabEntry struct {
	SID     string `json:"sid"`
	Home    string `json:"home"`
	Startup string `json:"startup,omitempty"` // Y, N or W
	Line    int    `json:"line"`
}

// ParseOratab reads /etc/oratab (or /var/opt/oracle/oratab on Solaris).
// Comments and lines that are not SID:HOME[:FLAG] are skipped: dbstart
// skips them too.
func ParseOratab(r io.Reader) ([]OratabEntry, error) {
	var out []OratabEntry
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, ":")
		if len(f) < 2 || f[0] == "" || !strings.HasPrefix(f[1], "/") {
			continue
		}
		e := OratabEntry{SID: f[0], Home: strings.TrimRight(f[1], "/"), Line: n}
		if len(f) > 2 {
			e.Startup = strings.TrimSpace(f[2])
		}
		out = append(out, e)
	}
	return out, sc.Err()
}

// OracleHomes returns the distinct Oracle homes of entries, in file order.
func OracleHomes(entries []OratabEntry) []string {
	seen := map[string]bool{}
	var homes []string
	for _, e := range entries {
		if !seen[e.Home] {
			seen[e.Home] = true
			homes = append(homes, e.Home)
		}
	}
	return homes
}
