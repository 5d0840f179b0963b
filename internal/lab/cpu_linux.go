package lab

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/interlink/interlink/internal/counters"
)

// ProcessCPU returns the CPU time (user + system) of each live process in
// the node's network namespace, by PID: what the node's own programs
// (a database server, an agent) have spent. Softirq work on the node's
// packets is not a process's and is not here.
func (n *Node) ProcessCPU() (map[int]time.Duration, error) {
	var ns unix.Stat_t
	if err := unix.Stat(nsPath(n.ns), &ns); err != nil {
		return nil, fmt.Errorf("lab %s: node %s: %w", n.lab.Name(), n.spec.Name, err)
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	out := map[int]time.Duration{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		var st unix.Stat_t
		if unix.Stat("/proc/"+e.Name()+"/ns/net", &st) != nil || st.Dev != ns.Dev || st.Ino != ns.Ino {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		if d, err := counters.ParseProcStatCPU(b); err == nil {
			out[pid] = d
		}
	}
	return out, nil
}
