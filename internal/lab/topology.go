package lab

import "github.com/interlink/interlink/internal/lab/topology"

// The lab model (what a topology file says, parsed and validated) is
// package topology, which needs no kernel; lab builds it. These names keep
// lab's API whole, so a caller that builds a lab needs one import; a
// caller that only reads or writes topologies (replica) imports topology.
type (
	Topology      = topology.Topology
	SwitchSpec    = topology.SwitchSpec
	NodeSpec      = topology.NodeSpec
	LinkSpec      = topology.LinkSpec
	RouteSpec     = topology.RouteSpec
	ServiceSpec   = topology.ServiceSpec
	VMSpec        = topology.VMSpec
	TopologyError = topology.TopologyError
	Builtin       = topology.Builtin
	Setting       = topology.Setting
	SettingError  = topology.SettingError
)

// Service kinds, roles and ports, and the limits of a topology: see
// package topology.
const (
	KindAgent       = topology.KindAgent
	KindPostgres    = topology.KindPostgres
	KindNFS         = topology.KindNFS
	KindGalera      = topology.KindGalera
	KindSSHD        = topology.KindSSHD
	RolePrimary     = topology.RolePrimary
	RoleStandby     = topology.RoleStandby
	AgentPort       = topology.AgentPort
	PostgresPort    = topology.PostgresPort
	NFSPort         = topology.NFSPort
	GaleraPort      = topology.GaleraPort
	SSHPort         = topology.SSHPort
	MinMTU          = topology.MinMTU
	MaxMTU          = topology.MaxMTU
	MaxSwitchPorts  = topology.MaxSwitchPorts
	MaxNodes        = topology.MaxNodes
	DefaultVMMemory = topology.DefaultVMMemory
)

// ErrInvalid is wrapped by every error about a topology (topology.ErrInvalid).
var ErrInvalid = topology.ErrInvalid

// Parse reads and validates a topology (topology.Parse).
func Parse(file string, data []byte) (*Topology, error) { return topology.Parse(file, data) }

// Load returns a built-in topology or a topology file's (topology.Load).
func Load(nameOrPath string) (*Topology, error) { return topology.Load(nameOrPath) }

// Builtins returns the built-in topologies (topology.Builtins).
func Builtins() []Builtin { return topology.Builtins() }

// BuiltinYAML returns a built-in's topology file (topology.BuiltinYAML).
func BuiltinYAML(name string) ([]byte, error) { return topology.BuiltinYAML(name) }

// Pair returns a two-node topology on one switch (topology.Pair).
func Pair(name string, mtu int, rate string) (*Topology, error) {
	return topology.Pair(name, mtu, rate)
}

// CheckName checks a --name flag's lab name (topology.CheckName).
func CheckName(s string) error { return topology.CheckName(s) }

// CheckLinkName checks a link's name (topology.CheckLinkName).
func CheckLinkName(s string) error { return topology.CheckLinkName(s) }

// ParseSettings parses lab set's KEY=VALUE arguments (topology.ParseSettings).
func ParseSettings(target string, kvs []string) ([]Setting, error) {
	return topology.ParseSettings(target, kvs)
}

// Apply returns a copy of t with settings applied (topology.Apply).
func Apply(t *Topology, settings []Setting) (*Topology, error) { return topology.Apply(t, settings) }
