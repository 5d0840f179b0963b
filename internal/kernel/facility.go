package kernel

// Effect is what a kernel without a facility does to interlink's results.
type Effect int

// Effects, from harmless to refused.
const (
	// SameFigures: a fallback gives the same figures (perhaps at a higher
	// CPU cost, which the results still report as measured).
	SameFigures Effect = iota
	// FiguresAbsent: the figures the facility gives are shown as "n/a"
	// (absent in JSON), never as 0; everything else is measured.
	FiguresAbsent
	// Refused: the command or feature that needs it refuses in one line
	// naming the facility, the kernel it needs and what to do (exit 3).
	Refused
)

func (e Effect) String() string {
	switch e {
	case FiguresAbsent:
		return "figures absent"
	case Refused:
		return "refused"
	default:
		return "same figures"
	}
}

// Facility is one kernel facility interlink uses.
type Facility struct {
	ID     string  // stable id: "thread-self"
	Name   string  // what it is in the kernel's words: "/proc/thread-self"
	Since  Version // mainline release that added it
	UsedBy string  // where interlink uses it
	// Without says what interlink does on a kernel without it; empty for
	// facilities older than every supported kernel.
	Without string
	Effect  Effect
	// Lab marks facilities only the namespace labs use (a lab host, not
	// a database node, needs them).
	Lab bool
}

// Oldest is the oldest kernel interlink supports: Oracle Linux and RHEL
// 7's 3.10. Facilities added before it are in the table to say so.
var Oldest = V(3, 10)

// Facilities lists what interlink uses from the kernel, oldest first. The
// versions are mainline's (the release whose merge window took the
// commit); docs/kernels.md gives the same table with the test of each
// fallback.
var Facilities = []Facility{
	{ID: "pmtudisc-probe", Name: "IP_PMTUDISC_PROBE / IPV6_PMTUDISC_PROBE", Since: V(2, 6, 22),
		UsedBy: "pmtu, mesh: DF probes that ignore the cached path MTU"},
	{ID: "recvmmsg", Name: "recvmmsg(2)", Since: V(2, 6, 33),
		UsedBy: "bench, agent, gc: batched datagram reads"},
	{ID: "sendmmsg", Name: "sendmmsg(2)", Since: V(3, 0),
		UsedBy: "bench, agent, gc: batched datagram sends"},
	{ID: "thread-self", Name: "/proc/thread-self", Since: V(3, 17),
		UsedBy:  "counters of the calling thread's namespace: bench, agent, gc, db, gate metrics, storm",
		Without: "reads /proc/self/task/TID/net, the same files",
		Effect:  SameFigures},
	{ID: "tcpinfo-bytes-acked", Name: "TCP_INFO tcpi_bytes_acked", Since: V(4, 1),
		UsedBy:  "cluster: how far a stalled TCP transfer got",
		Without: "shows the acknowledged bytes as n/a (the length TCP_INFO returns says which fields are there)",
		Effect:  FiguresAbsent},
	{ID: "tcpinfo-min-rtt", Name: "TCP_INFO tcpi_min_rtt and tcpi_notsent_bytes", Since: V(4, 6),
		UsedBy:  "bench tcp: minimum RTT per stream; cluster: bytes not yet sent",
		Without: "shows min RTT and unsent bytes as n/a",
		Effect:  FiguresAbsent},
	{ID: "udp-gso", Name: "UDP GSO (UDP_SEGMENT)", Since: V(4, 18),
		UsedBy:  "bench udp and the agent: one send of several datagrams",
		Without: "sends one datagram per message (sendmmsg batches); found out by a probe, never by the kernel's silence (before 4.18 it ignores the option and sends one fragmented datagram)",
		Effect:  SameFigures},
	{ID: "pidfd-open", Name: "pidfd_open(2)", Since: V(5, 3),
		UsedBy:  "lab: a node process with a parent-death signal keeps its starting thread until it exits",
		Without: "waits with waitid(WEXITED|WNOWAIT) instead",
		Effect:  SameFigures, Lab: true},
	{ID: "mountstats-errors", Name: "mountstats per-operation errors column", Since: V(5, 3),
		UsedBy:  "check and storage: NFS operations that ended in an error",
		Without: "shows per-operation errors as n/a (the line's field count says whether the column is there)",
		Effect:  FiguresAbsent},
	{ID: "bpf-port-mtu", Name: "eBPF tc classifier reading __sk_buff.gso_size", Since: V(5, 7),
		UsedBy:  "lab: a switch port narrower than its node (port_mtu) drops frames and GSO segments above it, and a lossy link (loss) a share of frames at random (also needs clsact 4.5, cls_bpf direct-action 4.4, bpf prog_name 4.15)",
		Without: "lab up refuses a topology with port_mtu or loss, naming the kernel it needs",
		Effect:  Refused, Lab: true},
}

// Missing returns the facilities a kernel of release r lacks by its
// version, oldest first. It is a lower bound on what the node has (see
// Release.Backports).
func Missing(r Release) []Facility {
	var out []Facility
	for _, f := range Facilities {
		if r.Version.Before(f.Since) {
			out = append(out, f)
		}
	}
	return out
}

// Lookup returns the facility with the given id.
func Lookup(id string) (Facility, bool) {
	for _, f := range Facilities {
		if f.ID == id {
			return f, true
		}
	}
	return Facility{}, false
}
