package cluster

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/interlink/interlink/internal/inventory"
	"github.com/interlink/interlink/internal/termtext"
)

// CRSConfig is what interlink reads of GRID_HOME/crs/install/crsconfig_params,
// the KEY=VALUE file the grid installer writes and root.sh reads.
type CRSConfig struct {
	ClusterName string
	// Nodes is NODE_NAME_LIST (else HOST_NAME_LIST, else NODELIST): the
	// nodes the cluster was installed (or last extended) with.
	Nodes []string
	// Networks is NETWORKS, e.g. "eth0"/10.0.1.0:public,"eth1"/192.168.10.0:cluster_interconnect
	// (what oifcfg setif was given at install time).
	Networks []inventory.ClusterNetwork
	// VIPs is CRS_NODEVIPS' names, e.g. 'rac1-vip/255.255.255.0/eth0,...'.
	VIPs []string
}

// ParseCRSConfig reads a crsconfig_params file: KEY=VALUE lines, '#'
// comments, values optionally quoted. Unknown keys are ignored; a file
// without any KEY=VALUE line is not a crsconfig_params.
func ParseCRSConfig(r io.Reader) (*CRSConfig, error) {
	kv := map[string]string{}
	sc := bufio.NewScanner(io.LimitReader(r, 4<<20))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || k == "" || strings.ContainsAny(k, " \t") {
			continue
		}
		kv[k] = v
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(kv) == 0 {
		return nil, errors.New("no KEY=VALUE lines: not a crsconfig_params file")
	}
	c := &CRSConfig{ClusterName: unquote(kv["CLUSTER_NAME"])}
	for _, k := range []string{"NODE_NAME_LIST", "HOST_NAME_LIST", "NODELIST"} {
		if v := unquote(kv[k]); v != "" {
			nodes, err := nodeList(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			c.Nodes = nodes
			break
		}
	}
	nets, err := parseNetworks(kv["NETWORKS"])
	if err != nil {
		return nil, fmt.Errorf("NETWORKS: %w", err)
	}
	c.Networks = nets
	for _, v := range strings.Split(strings.Trim(kv["CRS_NODEVIPS"], `'"`), ",") {
		if name, _, _ := strings.Cut(strings.TrimSpace(v), "/"); name != "" {
			c.VIPs = append(c.VIPs, name)
		}
	}
	return c, nil
}

// nodeList splits a comma separated list of host names. A name may carry
// a role after ':' (rac1:HUB in some releases' lists): it is dropped.
func nodeList(v string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, n := range strings.Split(v, ",") {
		n, _, _ = strings.Cut(strings.TrimSpace(n), ":")
		if n == "" {
			continue
		}
		if !hostName.MatchString(n) {
			return nil, fmt.Errorf("%q is not a host name", termtext.Clean(n))
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	if len(out) > maxHosts {
		return nil, fmt.Errorf("%d nodes, more than %d", len(out), maxHosts)
	}
	return out, nil
}

// parseNetworks reads "IF"/SUBNET:USE[,USE...] entries separated by
// commas. A use of several kinds ("asm,cluster_interconnect") continues
// after a comma, so an item without '/' belongs to the entry before it.
func parseNetworks(v string) ([]inventory.ClusterNetwork, error) {
	v = strings.TrimSpace(v)
	if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
		v = v[1 : len(v)-1]
	}
	var out []inventory.ClusterNetwork
	for _, item := range strings.Split(v, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		ifc, rest, ok := strings.Cut(item, "/")
		if !ok {
			if len(out) == 0 {
				return nil, fmt.Errorf("%q: want \"IF\"/SUBNET:USE", termtext.Clean(item))
			}
			out[len(out)-1].Use += "," + item
			continue
		}
		// The use follows the last ':' (an IPv6 subnet has its own).
		i := strings.LastIndex(rest, ":")
		ifc = strings.Trim(ifc, `"`)
		if i < 0 || ifc == "" || i == len(rest)-1 {
			return nil, fmt.Errorf("%q: want \"IF\"/SUBNET:USE", termtext.Clean(item))
		}
		out = append(out, inventory.ClusterNetwork{Adapter: ifc, Subnet: rest[:i], Use: rest[i+1:]})
	}
	return out, nil
}
