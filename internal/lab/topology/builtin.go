package topology

import (
	"embed"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/interlink/interlink/internal/readfile"
)

// Builtin is a topology that ships with interlink, usable by name.
type Builtin struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

//go:embed builtin/*.yaml
var builtinFS embed.FS

// builtins lists the built-in topologies in the order `lab list` shows
// them; each has builtin/NAME.yaml.
var builtins = []Builtin{
	{"jumbo", "healthy jumbo cluster: node1..node3 at MTU 9000 on one 9000 switch"},
	{"blackhole", "switch-port blackhole: node1..node3 at 9000, node2's switch port left at 1500 (no ICMP)"},
	{"routed", "routed hop: node1, node2 on a 9000 net, router r1, node3 behind a 1400 hop (ICMP frag-needed)"},
	{"mixed", "mismatched MTUs: node1 at 9000, node2 at 1500, on a 9000 switch"},
	{"shaped", "rate-limited link: node1 and node2 at 9000, node2's egress shaped to 100 Mbit/s"},
	{"rac", "two-node RAC: private 9000 interconnect and 1500 public network"},
	{"dnfs", "Direct NFS: db1 with two storage paths to a filer, the second's switch port left at 1500 (no ICMP)"},
	{"nfs", "NFS filer (nfs-ganesha, NFSv3) and a database node on a 9000 storage network"},
	{"pg", "PostgreSQL primary and synchronous standby over a 9000 interconnect, a client node on the 1500 public network"},
	{"vmjumbo", "VM nodes with kernels of their own: node1..node3 at 9000, node2's switch port (a tap) left at 1500"},
	{"galera", "MariaDB Galera cluster of three (db1..db3) over a 9000 cluster network, a client node on the 1500 public network"},
}

// Builtins returns the built-in topologies.
func Builtins() []Builtin {
	return append([]Builtin(nil), builtins...)
}

// BuiltinYAML returns the topology file of a built-in, as `lab show` or a
// user copying it would want it.
func BuiltinYAML(name string) ([]byte, error) {
	for _, b := range builtins {
		if b.Name == name {
			return builtinFS.ReadFile(path.Join("builtin", name+".yaml"))
		}
	}
	return nil, fmt.Errorf("lab: no built-in topology %q (built-ins: %s)", name, builtinNames())
}

func builtinNames() string {
	names := make([]string, len(builtins))
	for i, b := range builtins {
		names[i] = b.Name
	}
	return strings.Join(names, ", ")
}

// maxTopologyBytes bounds a topology file: the largest lab (1024 links on
// one switch) takes about 100 KiB of YAML.
const maxTopologyBytes = 8 << 20

// Load returns the topology of a built-in name, or else of the file at
// nameOrPath. A name containing a '/' or ending in .yaml/.yml is always a
// path.
func Load(nameOrPath string) (*Topology, error) {
	isPath := strings.ContainsRune(nameOrPath, '/') || strings.HasSuffix(nameOrPath, ".yaml") || strings.HasSuffix(nameOrPath, ".yml")
	if !isPath {
		if data, err := BuiltinYAML(nameOrPath); err == nil {
			return Parse("builtin:"+nameOrPath, data)
		}
	}
	// Bounded, and a FIFO or device is refused unopened (os.ReadFile of
	// a FIFO blocked until a writer came, deaf to SIGTERM).
	data, err := readfile.ReadAll(nameOrPath, maxTopologyBytes)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && !isPath {
			return nil, fmt.Errorf("lab: %q is neither a built-in topology (%s) nor a file", nameOrPath, builtinNames())
		}
		return nil, fmt.Errorf("lab: read topology: %w", err)
	}
	return Parse(nameOrPath, data)
}
