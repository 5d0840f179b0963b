package inventory

import (
	"bufio"
	"io"
	"path"
	"strconv"
	"strings"
)

const keyfileDir = "/etc/NetworkManager/system-connections"

// gatherKeyfiles reads NetworkManager keyfiles (*.nmconnection; older
// installations also keep extension-less keyfiles there).
func gatherKeyfiles(src *Source) ([]PersistedConfig, []string, bool) {
	return readEach(src, keyfileDir, func(n string) bool {
		return !strings.HasPrefix(n, ".") && !strings.HasSuffix(n, "~") && !strings.HasSuffix(n, ".bak")
	}, func(text, file string) ([]PersistedConfig, error) {
		if c, ok := ParseKeyfile(strings.NewReader(text), file); ok {
			return []PersistedConfig{c}, nil
		}
		return nil, nil
	})
}

// ParseKeyfile parses a NetworkManager keyfile (INI). The MTU lives in the
// [ethernet] section (also for bonds, bridges and vlans carried over
// Ethernet), [802-3-ethernet] in old files, or [infiniband]. A profile bound
// only to a MAC address has an empty Interface and its MAC set; the caller
// matches it to an interface.
func ParseKeyfile(r io.Reader, file string) (PersistedConfig, bool) {
	c := PersistedConfig{File: file, Format: "networkmanager", OnBoot: true}
	var id, section string
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		t := strings.TrimSpace(sc.Text())
		if t == "" || t[0] == '#' || t[0] == ';' {
			continue
		}
		if t[0] == '[' && strings.HasSuffix(t, "]") {
			section = strings.TrimSpace(t[1 : len(t)-1])
			continue
		}
		k, v, ok := strings.Cut(t, "=")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch section + "." + k {
		case "connection.id":
			id = v
		case "ethernet.mac-address", "802-3-ethernet.mac-address":
			c.MAC = strings.ToLower(v)
		case "connection.interface-name":
			c.Interface = v
		case "connection.type":
			c.Type = keyfileType(v)
		case "connection.master", "connection.controller":
			c.Master = v
		case "connection.autoconnect":
			c.OnBoot = v != "false" && v != "no" && v != "0"
		case "ethernet.mtu", "802-3-ethernet.mtu", "infiniband.mtu", "wifi.mtu":
			// "9000" or, in old files, "9000" with a trailing comment.
			if f := strings.Fields(v); len(f) > 0 {
				if m, err := strconv.Atoi(f[0]); err == nil && m > 0 {
					c.MTU, c.MTULine = m, n
				}
			}
		}
	}
	c.Connection = id
	if c.Connection == "" {
		c.Connection = strings.TrimSuffix(path.Base(file), ".nmconnection")
	}
	if c.Interface == "" && c.MAC == "" {
		c.Interface = c.Connection
	}
	return c, c.Interface != "" || c.MAC != ""
}

func keyfileType(t string) string {
	switch t {
	case "802-3-ethernet":
		return "ethernet"
	case "802-11-wireless":
		return "wifi"
	}
	return t
}
