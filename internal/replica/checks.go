package replica

import (
	"fmt"
	"sort"
	"strings"

	"github.com/interlink/interlink/internal/rules"
)

// Reproduced lists the check rules whose findings a replica node gives as
// the cluster node did: they judge the interconnect interfaces' names,
// state and MTUs, which the replica copies. Every other rule judges what
// the lab takes from the machine it runs on (sysctls, persisted network
// configuration, counters, NFS mounts, GPnP) or builds its own way (bonds,
// multicast flags), and its findings are listed as not reproduced.
var Reproduced = []string{"NET-IC-MISSING", "NET-IC-DOWN", "NET-IC-MTU", "NET-IC-MTU-MISMATCH"}

func reproduced(rule string) bool {
	for _, r := range Reproduced {
		if r == rule {
			return true
		}
	}
	return false
}

// InterconnectFindings returns the findings of a check that a replica
// reproduces, as "RULE OBJECT SEVERITY", sorted: the same list from the
// bundle and from the replica node is the proof that the node was copied.
func InterconnectFindings(r *rules.Result) []string {
	var out []string
	for _, f := range r.Findings {
		if reproduced(f.Rule) {
			out = append(out, fmt.Sprintf("%s %s %s", f.Rule, f.Object, f.Severity))
		}
	}
	sort.Strings(out)
	return out
}

func summarise(r *rules.Result) CheckSummary {
	s := CheckSummary{Interconnect: r.Interconnect.Interfaces}
	for _, f := range r.Findings {
		s.Findings = append(s.Findings, fmt.Sprintf("%s %s %s", f.Rule, f.Object, f.Severity))
	}
	return s
}

// notReproduced says, for one node, which of its run's findings the
// replica does not reproduce; "" when none.
func notReproduced(name string, s CheckSummary) string {
	var rs []string
	seen := map[string]bool{}
	for _, f := range s.Findings {
		rule, _, _ := strings.Cut(f, " ")
		if !reproduced(rule) && !seen[rule] {
			seen[rule] = true
			rs = append(rs, rule)
		}
	}
	if len(rs) == 0 {
		return ""
	}
	return fmt.Sprintf("%s: findings %s (they judge sysctls, persisted configuration, counters, mounts or bonds, which the replica takes from this machine or builds as one link)", name, strings.Join(rs, ", "))
}
