package replica

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/interlink/interlink/internal/lab/topology"
)

// hostName is what a node's name may hold: a host name, a short name, an
// FQDN, upper or lower case. Anything else (a blank, a quote, $( ), a
// control character, a slash) is refused, never cleaned up: the name
// comes back in commands the operator runs.
var hostName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`)

// maxHostName is the longest host name DNS allows.
const maxHostName = 253

// hostile returns why a node's name cannot be taken, or nil.
func hostile(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("is empty")
	case len(name) > maxHostName:
		return fmt.Errorf("%q is longer than %d characters", name[:32]+"...", maxHostName)
	case !hostName.MatchString(name):
		return fmt.Errorf("%q: a node name holds letters, digits, '.', '-' and '_' only (rename the node where the run took it from)", name)
	}
	return nil
}

// maxLabName is the longest node name a lab takes.
const maxLabName = 24

// labNames maps the cluster's node names to lab node names: lower case,
// the first label of an FQDN when that is unique among the nodes (rac1 for
// rac1.example.com), else the dots made dashes, cut to 24 characters. Two
// nodes whose names meet that way are refused. The names were checked by
// hostile already.
func labNames(names []string) (map[string]string, error) {
	first := map[string]int{}
	for _, n := range names {
		l, _, _ := strings.Cut(strings.ToLower(n), ".")
		first[l]++
	}
	out := map[string]string{}
	by := map[string]string{}
	for _, n := range names {
		l := strings.ToLower(n)
		if f, _, _ := strings.Cut(l, "."); first[f] == 1 {
			l = f
		} else {
			l = strings.ReplaceAll(l, ".", "-")
		}
		l = strings.TrimLeft(l, "_")
		if len(l) > maxLabName {
			l = strings.TrimRight(l[:maxLabName], "-_")
		}
		if err := topology.CheckName(l); err != nil || l == "" {
			return nil, inputErr("node %s: no lab node name can be made of it", n)
		}
		if other, dup := by[l]; dup {
			return nil, inputErr("nodes %s and %s would both be lab node %s: rename one where the run took it from", other, n, l)
		}
		by[l] = n
		out[n] = l
	}
	return out, nil
}

// checkIface refuses an interface name the lab cannot give a link; the
// name comes from the node's /sys/class/net.
func checkIface(node, bundle, name string) error {
	if err := topology.CheckLinkName(name); err != nil {
		where := node
		if bundle != "" {
			where += " (" + bundle + ")"
		}
		return inputErr("node %s: interface %v", where, err)
	}
	return nil
}
