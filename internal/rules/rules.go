// Package rules turns an inventory into findings. Each rule is data (id,
// severity, source document) plus a small check function; a rule never fires
// without evidence it can print and a concrete fix.
package rules

import (
	"fmt"
	"sort"
	"strings"

	"github.com/interlink/interlink/internal/inventory"
)

// Severity of a finding. The zero value is Info.
type Severity int

// Severities, in increasing order.
const (
	Info Severity = iota
	Warning
	Critical
)

func (s Severity) String() string {
	switch s {
	case Warning:
		return "warning"
	case Critical:
		return "critical"
	default:
		return "info"
	}
}

// MarshalText makes severities appear as words in JSON.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText parses "info", "warning" or "critical".
func (s *Severity) UnmarshalText(b []byte) error {
	switch string(b) {
	case "info":
		*s = Info
	case "warning":
		*s = Warning
	case "critical":
		*s = Critical
	default:
		return fmt.Errorf("unknown severity %q", b)
	}
	return nil
}

// Evidence is one observed value and where it came from.
type Evidence struct {
	What  string `json:"what"`           // "mtu", "rsize", "net.ipv4.conf.all.rp_filter"
	Value string `json:"value"`          // as read
	File  string `json:"file,omitempty"` // node path it was read from
}

// Finding is one rule firing on one object.
type Finding struct {
	Rule     string     `json:"rule"`
	Severity Severity   `json:"severity"`
	Object   string     `json:"object"` // "interface bond0", "mount /u02/oradata"
	Message  string     `json:"message"`
	Evidence []Evidence `json:"evidence"`
	Fix      string     `json:"fix"`
	Source   string     `json:"source"`
}

// Role is what an NFS mount holds, which decides its required options.
type Role string

// Mount roles (docs/guides/nfs.md).
const (
	RoleDatafiles Role = "datafiles"
	RoleRedo      Role = "redo"
	RoleCRS       Role = "crs"
	RoleHome      Role = "home"
	RoleBackup    Role = "backup"
	RoleOther     Role = "other"
)

// Roles lists the valid roles in display order.
var Roles = []Role{RoleDatafiles, RoleRedo, RoleCRS, RoleHome, RoleBackup, RoleOther}

// ParseRole validates a role name.
func ParseRole(s string) (Role, error) {
	for _, r := range Roles {
		if string(r) == s {
			return r, nil
		}
	}
	names := make([]string, len(Roles))
	for i, r := range Roles {
		names[i] = string(r)
	}
	return "", fmt.Errorf("unknown mount role %q (want one of %s)", s, strings.Join(names, ", "))
}

// Platform selects the rows of the NFS option table (docs/guides/nfs.md).
type Platform string

// Platforms.
const (
	Linux   Platform = "linux"
	Solaris Platform = "solaris"
	AIX     Platform = "aix"
	HPUX    Platform = "hpux"
)

// ParsePlatform validates a platform name.
func ParsePlatform(s string) (Platform, error) {
	switch p := Platform(strings.ToLower(s)); p {
	case Linux, Solaris, AIX, HPUX:
		return p, nil
	case "hp-ux":
		return HPUX, nil
	}
	return "", fmt.Errorf("unknown platform %q (want linux, solaris, aix or hpux)", s)
}

// Config is what the operator told check about the node.
type Config struct {
	// Interconnect names the private interconnect interfaces. Empty means
	// unknown: interconnect-specific rules then stay silent.
	Interconnect []string
	// MountRoles maps a mount point to what it holds. Mounts without a role
	// are judged only by the rules that apply to every database mount.
	MountRoles map[string]Role
	Platform   Platform
	// StorageMTU is the MTU the operator expects on Direct NFS storage
	// interfaces (check --storage-mtu); zero: only compare them.
	StorageMTU int
}

// Rule is one check.
type Rule struct {
	ID string // stable id, e.g. "NET-BOND-MTU"
	// Severity is the severity of its findings, except under the
	// conditions Also lists.
	Severity Severity
	// Also lists the other severities its findings take and when (e.g.
	// critical "on the interconnect"). Empty: every finding has Severity.
	// A finding never has a severity that Severity and Also do not list.
	Also   []SeverityCase
	Title  string // one line: what it detects
	Source string // document and section the requirement comes from
	Check  func(inv *inventory.Inventory, cfg *Config) []Finding
}

// SeverityCase is a severity a rule's findings take under a condition.
type SeverityCase struct {
	Severity Severity `json:"severity"`
	When     string   `json:"when"` // "on the interconnect"
}

// Severities returns every severity the rule's findings may have, its
// Severity first.
func (r Rule) Severities() []Severity {
	out := []Severity{r.Severity}
	for _, c := range r.Also {
		out = append(out, c.Severity)
	}
	return out
}

// Emits reports whether the rule lists s as a severity of its findings.
func (r Rule) Emits(s Severity) bool {
	for _, x := range r.Severities() {
		if x == s {
			return true
		}
	}
	return false
}

// SeverityText is the listing of the rule's severities: "warning", or
// "warning, critical".
func (r Rule) SeverityText() string {
	var words []string
	for _, s := range r.Severities() {
		words = append(words, s.String())
	}
	return strings.Join(words, ", ")
}

// Conditions says when the severities in Also apply, for listings:
// "critical on the interconnect", or "" when Also is empty.
func (r Rule) Conditions() string {
	var parts []string
	for _, c := range r.Also {
		parts = append(parts, c.Severity.String()+" "+c.When)
	}
	return strings.Join(parts, "; ")
}

var registry []Rule

// register adds rules; each rule file calls it from an init function.
func register(rs ...Rule) { registry = append(registry, rs...) }

// All returns every rule, sorted by id.
func All() []Rule {
	out := append([]Rule(nil), registry...)
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Evaluate runs every rule and returns the findings, most severe first, then
// by rule id and object. Rule and Source of each finding are filled in from
// the rule when the check left them empty.
func Evaluate(inv *inventory.Inventory, cfg *Config) []Finding {
	var out []Finding
	for _, r := range All() {
		for _, f := range r.Check(inv, cfg) {
			if f.Rule == "" {
				f.Rule = r.ID
			}
			if f.Source == "" {
				f.Source = r.Source
			}
			out = append(out, f)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Severity != b.Severity {
			return a.Severity > b.Severity
		}
		if a.Rule != b.Rule {
			return a.Rule < b.Rule
		}
		return a.Object < b.Object
	})
	return out
}
