package cluster

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/interlink/interlink/internal/inventory"
	"github.com/interlink/interlink/internal/termtext"
)

// Clusterware is where the nodes of a run came from when they were read
// from Oracle Clusterware's configuration on this host (--clusterware).
type Clusterware struct {
	GridHome string `json:"grid_home"`
	// NodesFrom is "olsnodes" (the live membership, GRID_HOME/bin/olsnodes)
	// or the crsconfig_params file (NODE_NAME_LIST, the nodes the cluster
	// was installed with).
	NodesFrom string   `json:"nodes_from"`
	Nodes     []string `json:"nodes"`
	// OLSNodes says why olsnodes was not used ("" when it was, or when the
	// grid home has none).
	OLSNodes string `json:"olsnodes_error,omitempty"`
	// Networks are the interconnect networks (Use cluster_interconnect) of
	// this host's GPnP profile, else of crsconfig_params' NETWORKS; a node
	// whose own check read its own GPnP profile uses that one.
	Networks     []inventory.ClusterNetwork `json:"networks"`
	NetworksFrom string                     `json:"networks_from"`
	// Notes say what was dropped and why (an interconnect network on which
	// some node has no address).
	Notes []string `json:"notes,omitempty"`
}

// ErrNoGridHome marks a host where no Oracle grid home was found.
var ErrNoGridHome = errors.New("no Oracle grid home found")

// FindGridHome finds the grid home as check does: crs_home= of
// /etc/oracle/olr.loc, $GRID_HOME, then the usual OFA paths; root is "/"
// on a live host (a captured tree in tests). The first that holds
// crs/install/crsconfig_params or bin/olsnodes wins.
func FindGridHome(root string) (string, error) {
	var homes []string
	if b, err := os.ReadFile(filepath.Join(root, "etc/oracle/olr.loc")); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "="); ok && k == "crs_home" && v != "" {
				homes = append(homes, v)
			}
		}
	}
	if h := os.Getenv("GRID_HOME"); h != "" && root == "/" {
		homes = append(homes, h)
	}
	for _, p := range []string{"u01/app/*/grid", "u01/app/grid/product/*/*", "u01/app/*/grid_*"} {
		m, _ := filepath.Glob(filepath.Join(root, p))
		for _, h := range m {
			homes = append(homes, "/"+strings.TrimPrefix(strings.TrimPrefix(h, root), "/"))
		}
	}
	for _, h := range homes {
		for _, f := range []string{"crs/install/crsconfig_params", "bin/olsnodes"} {
			if _, err := os.Stat(filepath.Join(root, h, f)); err == nil {
				return h, nil
			}
		}
	}
	return "", fmt.Errorf("%w (looked in /etc/oracle/olr.loc, $GRID_HOME, /u01/app/*/grid): name it with --grid-home DIR", ErrNoGridHome)
}

// olsnodesTimeout bounds olsnodes: it asks the running CSS daemon and can
// hang on a node whose stack is half up.
const olsnodesTimeout = 15 * time.Second

// LoadClusterware reads the nodes and interconnect networks of the grid
// home home: the nodes from `olsnodes` when home/bin/olsnodes runs, else
// from crs/install/crsconfig_params (NODE_NAME_LIST); the interconnect
// networks from gpnp/profiles/peer/profile.xml, else crsconfig_params'
// NETWORKS. An error means no node list could be read.
func LoadClusterware(ctx context.Context, home string) (*Clusterware, error) {
	cw := &Clusterware{GridHome: home}
	if st, err := os.Stat(home); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("grid home %s: not a directory", home)
	}
	var params *CRSConfig
	paramsFile := filepath.Join(home, "crs/install/crsconfig_params")
	f, perr := os.Open(paramsFile)
	if perr == nil {
		params, perr = ParseCRSConfig(f)
		f.Close()
		if perr != nil {
			perr = fmt.Errorf("%s: %w", paramsFile, perr)
		}
	}
	if ols := filepath.Join(home, "bin/olsnodes"); exists(ols) {
		nodes, err := runOLSNodes(ctx, ols)
		if err == nil {
			cw.Nodes, cw.NodesFrom = nodes, "olsnodes"
		} else {
			cw.OLSNodes = err.Error()
		}
	}
	if cw.Nodes == nil {
		switch {
		case perr != nil && cw.OLSNodes != "":
			return nil, fmt.Errorf("grid home %s: olsnodes: %s; %v", home, cw.OLSNodes, perr)
		case perr != nil:
			return nil, fmt.Errorf("grid home %s: %v", home, perr)
		case len(params.Nodes) == 0:
			return nil, fmt.Errorf("%s: no NODE_NAME_LIST (nor HOST_NAME_LIST, NODELIST)", paramsFile)
		}
		cw.Nodes, cw.NodesFrom = params.Nodes, paramsFile
	}
	profile := filepath.Join(home, "gpnp/profiles/peer/profile.xml")
	if f, err := os.Open(profile); err == nil {
		nets, err := inventory.ParseGPnP(f)
		f.Close()
		if err == nil {
			cw.Networks, cw.NetworksFrom = interconnects(nets), profile
		}
	}
	if cw.NetworksFrom == "" && params != nil {
		cw.Networks, cw.NetworksFrom = interconnects(params.Networks), paramsFile
	}
	return cw, nil
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

func interconnects(nets []inventory.ClusterNetwork) []inventory.ClusterNetwork {
	var out []inventory.ClusterNetwork
	for _, n := range nets {
		if n.Interconnect() {
			out = append(out, n)
		}
	}
	return out
}

// runOLSNodes runs olsnodes (no options: one node name per line) with a
// time limit.
func runOLSNodes(ctx context.Context, bin string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, olsnodesTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin)
	var out, errb limitBuf
	out.max, errb.max = 1<<20, 64<<10
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	switch {
	case ctx.Err() != nil:
		return nil, fmt.Errorf("no answer in %s", olsnodesTimeout)
	case err != nil:
		msg := lastLine(errb.String() + "\n" + out.String())
		return nil, fmt.Errorf("%v: %s", err, msg)
	}
	return ParseOLSNodes(&out)
}

// hostName is what a node name from the clusterware may be: a host name,
// which then goes to SSH (and ~/.ssh/config) as is.
var hostName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$`)

// ParseOLSNodes reads the output of `olsnodes` (one node name per line;
// with -n, -s or -t more columns follow the name and are ignored). Oracle
// tools print errors as "PRCO-nnnn: ..." or "CRS-nnnn: ..." on stdout: an
// output holding one is an error, as is one without any node.
func ParseOLSNodes(r io.Reader) ([]string, error) {
	var nodes []string
	seen := map[string]bool{}
	sc := bufio.NewScanner(io.LimitReader(r, 1<<20))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if oracleError.MatchString(f[0]) {
			return nil, fmt.Errorf("olsnodes said %q", termtext.Clean(strings.Join(f, " ")))
		}
		if !hostName.MatchString(f[0]) {
			return nil, fmt.Errorf("olsnodes printed %q, not a node name", termtext.Clean(f[0]))
		}
		if !seen[f[0]] {
			seen[f[0]] = true
			nodes = append(nodes, f[0])
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(nodes) == 0 {
		return nil, errors.New("olsnodes printed no node")
	}
	if len(nodes) > maxHosts {
		return nil, fmt.Errorf("olsnodes printed %d nodes, more than %d", len(nodes), maxHosts)
	}
	return nodes, nil
}

var oracleError = regexp.MustCompile(`^[A-Z]{2,5}-\d{1,5}:?$`)
