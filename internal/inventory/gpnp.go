package inventory

import (
	"bufio"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
)

// gatherCluster looks for Oracle Clusterware's GPnP profile, whose
// <gpnp:Network Use="cluster_interconnect"> entries name the interconnect
// (what `oifcfg getif` prints). The grid home comes from /etc/oracle/olr.loc
// (crs_home=), $GRID_HOME on a live node, or the usual OFA paths.
func gatherCluster(src *Source, inv *Inventory) {
	var homes []string
	if b, err := src.ReadFile("/etc/oracle/olr.loc"); err == nil {
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		for sc.Scan() {
			if k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "="); ok && k == "crs_home" && v != "" {
				homes = append(homes, v)
			}
		}
	}
	if src.Live() {
		if h := os.Getenv("GRID_HOME"); h != "" {
			homes = append(homes, h)
		}
	}
	var candidates []string
	for _, h := range homes {
		candidates = append(candidates, path.Join(h, "gpnp/profiles/peer/profile.xml"))
		if host := inv.Node.Hostname; host != "" {
			short, _, _ := strings.Cut(host, ".")
			candidates = append(candidates, path.Join(h, "gpnp", short, "profiles/peer/profile.xml"))
		}
	}
	for _, pattern := range []string{
		"/u01/app/*/grid/gpnp/profiles/peer/profile.xml",
		"/u01/app/*/grid/gpnp/*/profiles/peer/profile.xml",
		"/u01/app/grid/product/*/*/gpnp/profiles/peer/profile.xml",
		"/u01/app/*/grid_*/gpnp/profiles/peer/profile.xml",
	} {
		m, _ := src.Glob(pattern)
		candidates = append(candidates, m...)
	}
	var problems []string
	for _, f := range candidates {
		b, err := src.ReadFile(f)
		if err != nil {
			if !isNotExist(err) {
				// The grid home is 0750 grid:oinstall: an ordinary user
				// cannot read the profile.
				problems = append(problems, f+": "+errText(err))
			}
			continue
		}
		nets, err := ParseGPnP(strings.NewReader(string(b)))
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", f, err))
			continue
		}
		inv.Cluster = &Cluster{GPnPProfile: f, Networks: nets}
		inv.addSection("cluster", "ok", "GPnP profile "+f)
		return
	}
	if len(problems) > 0 {
		inv.addSection("cluster", "unreadable", strings.Join(problems, "; "))
		return
	}
	inv.addSection("cluster", "absent", "no Oracle Clusterware GPnP profile found")
}

// ParseGPnP returns the <gpnp:Network> entries of a GPnP profile. Both the
// Adapter attribute (what Clusterware writes) and IF are accepted.
func ParseGPnP(r io.Reader) ([]ClusterNetwork, error) {
	d := xml.NewDecoder(r)
	var out []ClusterNetwork
	sawProfile := false
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("bad XML: %w", err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		switch se.Name.Local {
		case "GPnP-Profile":
			sawProfile = true
		case "Network":
			var n ClusterNetwork
			for _, a := range se.Attr {
				switch a.Name.Local {
				case "Adapter", "IF":
					n.Adapter = a.Value
				case "IP":
					n.Subnet = a.Value
				case "Use":
					n.Use = a.Value
				}
			}
			out = append(out, n)
		}
	}
	if !sawProfile {
		return nil, errors.New("not a GPnP profile (no GPnP-Profile element)")
	}
	return out, nil
}
