package inventory

import (
	"bufio"
	"io"
	"path"
	"strconv"
	"strings"
)

const ifcfgDir = "/etc/sysconfig/network-scripts"

// gatherIfcfg reads RHEL/Oracle Linux ifcfg-* files (initscripts, and
// NetworkManager's ifcfg-rh plugin).
func gatherIfcfg(src *Source) ([]PersistedConfig, []string, bool) {
	out, problems, found := readEach(src, ifcfgDir, func(n string) bool {
		// Backups the network scripts themselves skip (ifcfg-eth0.bak,
		// ifcfg-eth0~, .rpmnew/.rpmsave, .orig) and the loopback.
		if !strings.HasPrefix(n, "ifcfg-") || n == "ifcfg-lo" || strings.HasSuffix(n, "~") {
			return false
		}
		for _, s := range []string{".bak", ".orig", ".rpmnew", ".rpmsave", ".old", ".save"} {
			if strings.HasSuffix(n, s) {
				return false
			}
		}
		return true
	}, func(text, file string) ([]PersistedConfig, error) {
		return []PersistedConfig{ParseIfcfg(strings.NewReader(text), file)}, nil
	})
	return out, problems, found
}

// ParseIfcfg parses one ifcfg file (shell variable assignments). The
// interface is DEVICE, else the file name's suffix.
func ParseIfcfg(r io.Reader, file string) PersistedConfig {
	vars := map[string]string{}
	lines := map[string]int{}
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		t := strings.TrimSpace(sc.Text())
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		t = strings.TrimPrefix(t, "export ")
		k, v, ok := strings.Cut(t, "=")
		if !ok {
			continue
		}
		vars[strings.TrimSpace(k)] = unquote(strings.TrimSpace(v))
		lines[strings.TrimSpace(k)] = n
	}
	c := PersistedConfig{File: file, Format: "ifcfg", OnBoot: true}
	c.Interface = vars["DEVICE"]
	if c.Interface == "" {
		c.Interface = strings.TrimPrefix(path.Base(file), "ifcfg-")
	}
	if v, ok := vars["MTU"]; ok {
		if m, err := strconv.Atoi(v); err == nil {
			c.MTU, c.MTULine = m, lines["MTU"]
		}
	}
	switch strings.ToLower(vars["ONBOOT"]) {
	case "no", "false", "0":
		c.OnBoot = false
	}
	c.Type = strings.ToLower(vars["TYPE"])
	switch {
	case vars["MASTER"] != "" && strings.EqualFold(vars["SLAVE"], "yes"):
		c.Master = vars["MASTER"]
	case vars["BRIDGE"] != "":
		c.Master = vars["BRIDGE"]
	}
	if c.Type == "" && (vars["BONDING_OPTS"] != "" || strings.EqualFold(vars["BONDING_MASTER"], "yes")) {
		c.Type = "bond"
	}
	if c.Type == "" && strings.EqualFold(vars["VLAN"], "yes") {
		c.Type = "vlan"
	}
	return c
}

// unquote strips one level of shell quoting from a value.
func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
		return v[1 : len(v)-1]
	}
	if i := strings.Index(v, " #"); i >= 0 {
		v = strings.TrimSpace(v[:i])
	}
	return v
}
