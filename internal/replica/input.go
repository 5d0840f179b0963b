package replica

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/interlink/interlink/internal/cluster"
	"github.com/interlink/interlink/internal/inventory"
	"github.com/interlink/interlink/internal/mesh"
	"github.com/interlink/interlink/internal/readfile"
	"github.com/interlink/interlink/internal/schema"
	"github.com/interlink/interlink/internal/termtext"
)

// ErrInput is wrapped by every error about the RUN itself (a file of
// another schema, a hostile name, two nodes with one address): bad input,
// exit 3, nothing built.
var ErrInput = errors.New("bad input")

func inputErr(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInput}, a...)...)
}

// Run is what Load read: the cluster's nodes, each with its inventory, and
// the measured mesh when there was one.
type Run struct {
	From string // the RUN given
	// Kind is KindCluster (a cluster --json document with its bundles) or
	// KindBundles (a directory of check --collect bundles).
	Kind  string
	Nodes []Node
	// Mesh is the measured mesh; nil for bundles and for a cluster run
	// whose mesh was skipped.
	Mesh *mesh.Result
	// Results holds the check each node's run gave, by cluster name
	// (cluster runs only).
	Checks map[string]CheckSummary
	// Left lists the run's nodes that have no inventory, and why.
	Left []string
}

// Kinds of RUN.
const (
	KindCluster = "cluster"
	KindBundles = "bundles"
)

// Node is one node of the run.
type Node struct {
	Name   string // as the cluster names it
	Bundle string // the bundle read; "" when the inventory came from the run's JSON
	Inv    *inventory.Inventory
	// Agent is the address SSH reached (a cluster run); invalid otherwise.
	Agent netip.Addr
	// Mesh is its interconnect addresses in mesh order (network i+1 is
	// Mesh[i]); empty when not measured.
	Mesh []netip.Addr
}

// CheckSummary is what a node's check said: the interfaces it judged as
// the interconnect and its findings as RULE OBJECT SEVERITY.
type CheckSummary struct {
	Interconnect []string
	Findings     []string
}

// Load reads RUN: the JSON that `interlink cluster --collect DIR --json`
// printed (its bundles are found where the run wrote them, else beside the
// JSON), a directory holding one such JSON with its bundles, or a
// directory of `check --collect` bundles (NAME.tar.gz, named NAME). Every
// problem with the input wraps ErrInput.
func Load(ctx context.Context, path string) (*Run, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, inputErr("RUN %s: %v", termtext.Clean(path), errors.Unwrap(err))
	}
	if !st.IsDir() {
		res, name, err := readRun(ctx, path)
		return loadCluster(ctx, path, res, name, err)
	}
	ents, err := os.ReadDir(path)
	if err != nil {
		return nil, inputErr("RUN %s: %v", termtext.Clean(path), err)
	}
	var runs, bundles, unread []string
	var run struct {
		res    *cluster.Result
		schema string
		err    error // a cluster document's that does not decode
	}
	for _, e := range ents {
		switch name := e.Name(); {
		case strings.HasPrefix(name, "."):
		case strings.HasSuffix(name, ".json") && e.Type().IsRegular():
			// Read once: the run found is built from what was read here.
			res, s, err := readRun(ctx, filepath.Join(path, name))
			switch {
			case strings.HasPrefix(s, "interlink.cluster/"):
				runs = append(runs, name)
				run.res, run.schema, run.err = res, s, err
			case err != nil && !errors.Is(err, schema.ErrNone):
				unread = append(unread, fmt.Sprintf("%s: %s", name, jsonProblem(err)))
			}
		case strings.HasSuffix(name, ".tar.gz") && e.Type().IsRegular():
			bundles = append(bundles, name)
		}
	}
	switch {
	case len(runs) == 1:
		return loadCluster(ctx, filepath.Join(path, runs[0]), run.res, run.schema, run.err)
	case len(runs) > 1:
		return nil, inputErr("RUN %s holds %d cluster runs (%s): name the one to replicate", termtext.Clean(path), len(runs), termtext.Clean(strings.Join(runs, ", ")))
	case len(unread) > 0 && len(bundles) == 0:
		// Perhaps the run itself, cut short: say so rather than "no run".
		return nil, inputErr("RUN %s holds no readable cluster run: %s", termtext.Clean(path), termtext.Clean(strings.Join(unread, "; ")))
	case len(bundles) == 0:
		return nil, inputErr("RUN %s holds no cluster run (the JSON of interlink cluster --json) and no check --collect bundles (NAME.tar.gz)", termtext.Clean(path))
	}
	sort.Strings(bundles)
	r := &Run{From: path, Kind: KindBundles}
	for _, b := range bundles {
		name := strings.TrimSuffix(b, ".tar.gz")
		if err := hostile(name); err != nil {
			return nil, inputErr("bundle %s: node name %v", termtext.Clean(b), err)
		}
		inv, err := gather(ctx, filepath.Join(path, b))
		if err != nil {
			return nil, err
		}
		r.Nodes = append(r.Nodes, Node{Name: name, Bundle: filepath.Join(path, b), Inv: inv})
	}
	return r, nil
}

// readRun reads a JSON file once and decodes it once, as a cluster run,
// returning it with its schema: a run's JSON is parsed once. A document
// that does not decode as one, or has no schema string, is sniffed for
// what it is: not JSON (cut short), no schema, another schema (returned
// without a run and without an error), or a cluster schema whose content
// does not decode (a decodeError). The read returns when ctx ends, even
// while blocked on a slow disk.
func readRun(ctx context.Context, path string) (*cluster.Result, string, error) {
	data, err := readfile.ReadAllContext(ctx, path, maxRunBytes)
	if err != nil {
		return nil, "", err
	}
	var res cluster.Result
	uerr := json.Unmarshal(data, &res)
	if uerr == nil && res.Schema != "" {
		return &res, res.Schema, nil
	}
	s, err := schema.Sniff(data)
	switch {
	case err != nil:
		return nil, s, err
	case uerr != nil && strings.HasPrefix(s, "interlink.cluster/"):
		return nil, s, decodeError{uerr}
	}
	return nil, s, nil
}

// decodeError is the error of a document of a cluster schema whose
// content does not decode as a cluster run.
type decodeError struct{ err error }

func (e decodeError) Error() string { return e.err.Error() }
func (e decodeError) Unwrap() error { return e.err }

// maxRunBytes bounds the JSON of a cluster run: each node's inventory is
// tens of KiB, a 100-node run a few MiB.
const maxRunBytes = 64 << 20

// jsonProblem is what is wrong with a JSON file, without the sentinel's
// words when the sentence around it says them.
func jsonProblem(err error) string {
	return strings.TrimPrefix(err.Error(), schema.ErrNotJSON.Error()+": ")
}

// loadCluster builds the Run from the cluster document at path, whose
// decoded run, schema and error (readRun's) are given.
func loadCluster(ctx context.Context, path string, res *cluster.Result, s string, err error) (*Run, error) {
	var de decodeError
	switch {
	case errors.As(err, &de):
		return nil, inputErr("RUN %s: %v", termtext.Clean(path), de.err)
	case errors.Is(err, schema.ErrNotJSON):
		return nil, inputErr("RUN %s is not JSON (%s): want the output of interlink cluster --collect DIR --json, or a directory of check --collect bundles", termtext.Clean(path), termtext.Clean(jsonProblem(err)))
	case errors.Is(err, schema.ErrNone):
		return nil, inputErr("RUN %s has no schema: not a document of interlink cluster --json", termtext.Clean(path))
	case err != nil:
		return nil, inputErr("RUN %s", termtext.Clean(err.Error()))
	case s == cluster.Schema:
	case strings.HasPrefix(s, "interlink.cluster/"):
		return nil, inputErr("RUN %s is %s, a version this interlink does not read (it reads %s)", termtext.Clean(path), termtext.Clean(s), cluster.Schema)
	default:
		return nil, inputErr("RUN %s is %s, not a cluster run (%s from interlink cluster --collect DIR --json)", termtext.Clean(path), termtext.Clean(s), cluster.Schema)
	}
	r := &Run{From: path, Kind: KindCluster, Mesh: res.Mesh, Checks: map[string]CheckSummary{}}
	meshAddrs := map[string][]netip.Addr{}
	if res.Mesh != nil {
		for _, n := range res.Mesh.Nodes {
			meshAddrs[n.Name] = n.Addrs
		}
	}
	seen := map[string]bool{}
	for _, n := range res.Nodes {
		if err := hostile(n.Name); err != nil {
			return nil, inputErr("RUN %s: node name %v", termtext.Clean(path), err)
		}
		if seen[n.Name] {
			return nil, inputErr("RUN %s: node %s is listed twice", termtext.Clean(path), n.Name)
		}
		seen[n.Name] = true
		node := Node{Name: n.Name, Mesh: meshAddrs[n.Name]}
		if host, _, err := net.SplitHostPort(n.Agent); err == nil {
			node.Agent, _ = netip.ParseAddr(host)
		}
		if n.Check != nil {
			r.Checks[n.Name] = summarise(n.Check)
		}
		switch b := bundlePath(path, n.Bundle); {
		case b != "":
			inv, err := gather(ctx, b)
			if err != nil {
				return nil, err
			}
			node.Bundle, node.Inv = b, inv
		case n.Check != nil && n.Check.Inventory != nil:
			node.Inv = n.Check.Inventory
		default:
			why := n.Status
			if n.Error != "" {
				why += ": " + n.Error
			}
			r.Left = append(r.Left, fmt.Sprintf("%s: no bundle and no check in the run (%s)", n.Name, termtext.Clean(why)))
			continue
		}
		r.Nodes = append(r.Nodes, node)
	}
	if len(r.Nodes) == 0 {
		return nil, inputErr("RUN %s: no node has a bundle or a check to build from", termtext.Clean(path))
	}
	return r, nil
}

// bundlePath finds a node's bundle: beside the run's JSON (a run directory
// moved elsewhere), else where the run wrote it; "" when neither exists.
func bundlePath(run, bundle string) string {
	if bundle == "" {
		return ""
	}
	for _, p := range []string{filepath.Join(filepath.Dir(run), filepath.Base(bundle)), bundle} {
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

// gather reads a bundle's inventory.
func gather(ctx context.Context, bundle string) (*inventory.Inventory, error) {
	src, err := inventory.OpenContext(ctx, bundle)
	if err != nil {
		return nil, inputErr("bundle %s: %v", termtext.Clean(bundle), err)
	}
	defer src.Close()
	inv, err := inventory.Gather(ctx, src, inventory.Options{})
	if err != nil {
		return nil, inputErr("bundle %s: %v", termtext.Clean(bundle), err)
	}
	return inv, nil
}
