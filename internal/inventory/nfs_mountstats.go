package inventory

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// MountStats is what /proc/self/mountstats says about one NFS mount since
// it was mounted. Times are cumulative over all requests of an operation.
//
// prometheus/procfs has a parser for this file, but only behind
// Proc.MountStats, which opens /proc/<pid>/mountstats itself (bypassing
// Source, so --collect would miss the file) and cannot address a
// captured proc/self; hence this reader-based one.
type MountStats struct {
	File        string        `json:"file"`
	StatVersion string        `json:"stat_version"`
	Age         time.Duration `json:"age_ns"`
	// Bytes: reads and writes through the page cache, with O_DIRECT, and
	// what actually went to and came from the server.
	ReadBytes        uint64     `json:"read_bytes"`
	WriteBytes       uint64     `json:"write_bytes"`
	DirectReadBytes  uint64     `json:"direct_read_bytes"`
	DirectWriteBytes uint64     `json:"direct_write_bytes"`
	ServerReadBytes  uint64     `json:"server_read_bytes"`
	ServerWriteBytes uint64     `json:"server_write_bytes"`
	Transport        *Transport `json:"transport,omitempty"`
	Ops              []OpStats  `json:"ops"` // operations with at least one request
	mountPoint       string
	// opFields is the most numbers a per-op line had: 8 before Linux 5.3,
	// 9 once the kernel counts errors (opErrorsField).
	opFields int
}

// opErrorsField is the number of numbers a per-op line has when it ends
// with the errors count (net/sunrpc/stats.c _print_rpc_iostats, Linux
// 5.3; 4.19 and RHEL/OL 7 print 8).
const opErrorsField = 9

// Transport is the RPC transport line ("xprt:") of a mount.
type Transport struct {
	Proto     string `json:"proto"`
	Sends     uint64 `json:"sends"`
	Receives  uint64 `json:"receives"`
	BadXIDs   uint64 `json:"bad_xids"` // replies that matched no request
	Connects  uint64 `json:"connects"` // TCP (re)connections; 0 for UDP
	Backlog   uint64 `json:"backlog"`  // cumulative backlog queue length
	MaxSlots  uint64 `json:"max_slots"`
	ActiveReq uint64 `json:"active_requests"` // cumulative active requests
}

// OpStats is one per-operation line: counts and cumulative times.
type OpStats struct {
	Op            string        `json:"op"`
	Requests      uint64        `json:"requests"`
	Transmissions uint64        `json:"transmissions"`
	MajorTimeouts uint64        `json:"major_timeouts"`
	BytesSent     uint64        `json:"bytes_sent"`
	BytesReceived uint64        `json:"bytes_received"`
	Queue         time.Duration `json:"queue_ns"`
	RTT           time.Duration `json:"rtt_ns"`
	Execute       time.Duration `json:"execute_ns"`
	// Errors is the requests that completed with an error; nil (absent
	// in JSON, "n/a" in text) where the kernel does not count them
	// (before 5.3: per-op lines of 8 numbers).
	Errors *uint64 `json:"errors,omitempty"`
}

// Retransmissions is how many times requests had to be sent again.
func (o OpStats) Retransmissions() uint64 {
	if o.Transmissions > o.Requests {
		return o.Transmissions - o.Requests
	}
	return 0
}

// ParseMountstats reads the kernel's mountstats format
// (fs/nfs/super.c nfs_show_stats, net/sunrpc/stats.c rpc_clnt_show_stats):
//
//	device nas01:/vol/oradata mounted on /u02/oradata with fstype nfs statvers=1.1
//		opts:	rw,vers=3,...
//		age:	86400
//		bytes:	n n n n n n n n
//		RPC iostats version: 1.1  p/v: 100003/3 (nfs)
//		xprt:	tcp 0 1 2 0 0 ...
//		per-op statistics
//		        NULL: 1 1 0 44 24 0 0 0 0
//		        READ: ...
//
// Only NFS devices carry the indented block. The result is keyed by the
// (unescaped) mount point; a later device line for the same mount point
// replaces an earlier one, as the topmost mount hides those below. file
// is the node path recorded in each MountStats.File. file
// is the node path recorded in each MountStats.File.
func ParseMountstats(r io.Reader, file string) (map[string]*MountStats, error) {
	out := map[string]*MountStats{}
	var cur *MountStats
	inOps := false
	err := scanLines(r, "", func(n int, line string) error {
		f := strings.Fields(line)
		if f[0] == "device" {
			if len(f) < 8 || f[2] != "mounted" || f[3] != "on" || f[5] != "with" || f[6] != "fstype" {
				return fmt.Errorf("line %d: want \"device DEV mounted on DIR with fstype TYPE\"", n)
			}
			cur, inOps = nil, false
			if isNFS(f[7]) {
				cur = &MountStats{File: file, mountPoint: unescapeOctal(f[4])}
				if len(f) > 8 {
					cur.StatVersion = strings.TrimPrefix(f[8], "statvers=")
				}
				out[cur.mountPoint] = cur
			}
			return nil
		}
		if line[0] != ' ' && line[0] != '\t' {
			return fmt.Errorf("line %d: want a \"device\" line or an indented statistics line", n)
		}
		if cur == nil {
			return nil // statistics of a file system we do not judge
		}
		if err := cur.parseLine(f, &inOps); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (m *MountStats) parseLine(f []string, inOps *bool) error {
	switch f[0] {
	case "opts:", "caps:", "sec:", "events:", "nfsv4:", "fsc:", "RPC":
		return nil
	case "per-op":
		*inOps = true
		return nil
	case "age:":
		n, err := numbers(f[1:], 1)
		if err != nil {
			return fmt.Errorf("age: %w", err)
		}
		m.Age = time.Duration(n[0]) * time.Second
		return nil
	case "bytes:":
		n, err := numbers(f[1:], 8)
		if err != nil {
			return fmt.Errorf("bytes: %w", err)
		}
		m.ReadBytes, m.WriteBytes, m.DirectReadBytes, m.DirectWriteBytes = n[0], n[1], n[2], n[3]
		m.ServerReadBytes, m.ServerWriteBytes = n[4], n[5]
		return nil
	case "xprt:":
		return m.parseXprt(f[1:])
	}
	if !*inOps || !strings.HasSuffix(f[0], ":") {
		return nil // a line newer kernels added; ignore what we do not know
	}
	n, err := numbers(f[1:], 8)
	if err != nil {
		return fmt.Errorf("operation %s %w", f[0], err)
	}
	op := OpStats{
		Op: strings.TrimSuffix(f[0], ":"), Requests: n[0], Transmissions: n[1], MajorTimeouts: n[2],
		BytesSent: n[3], BytesReceived: n[4],
		Queue: ms(n[5]), RTT: ms(n[6]), Execute: ms(n[7]),
	}
	if len(n) >= opErrorsField {
		op.Errors = &n[opErrorsField-1]
	}
	m.opFields = max(m.opFields, len(n))
	if op.Requests > 0 {
		m.Ops = append(m.Ops, op)
	}
	return nil
}

// parseXprt reads "xprt: PROTO n n ...". The field layout differs by
// transport (tcp has connect counts, udp does not); see
// net/sunrpc/xprtsock.c xs_tcp_print_stats and xs_udp_print_stats.
func (m *MountStats) parseXprt(f []string) error {
	if len(f) < 1 {
		return fmt.Errorf("xprt: missing transport")
	}
	n, err := numbers(f[1:], 0)
	if err != nil {
		return fmt.Errorf("xprt: %w", err)
	}
	t := &Transport{Proto: f[0]}
	get := func(i int) uint64 {
		if i < len(n) {
			return n[i]
		}
		return 0
	}
	switch f[0] {
	case "tcp", "tcp6", "rdma":
		// port bind connect connect_time idle sends recvs bad_xids req backlog max_slots ...
		t.Connects, t.Sends, t.Receives, t.BadXIDs = get(2), get(5), get(6), get(7)
		t.ActiveReq, t.Backlog = get(8), get(9)
		if f[0] != "rdma" {
			t.MaxSlots = get(10)
		}
	case "udp", "udp6":
		// port bind sends recvs bad_xids req backlog max_slots ...
		t.Sends, t.Receives, t.BadXIDs = get(2), get(3), get(4)
		t.ActiveReq, t.Backlog, t.MaxSlots = get(5), get(6), get(7)
	}
	m.Transport = t
	return nil
}

// numbers parses unsigned decimal fields, at least min of them.
func numbers(f []string, min int) ([]uint64, error) {
	if len(f) < min {
		return nil, fmt.Errorf("want at least %d numbers, got %d", min, len(f))
	}
	out := make([]uint64, len(f))
	for i, s := range f {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("field %d %q is not a number", i+1, s)
		}
		out[i] = v
	}
	return out, nil
}

func ms(n uint64) time.Duration {
	if n > uint64(1<<63-1)/uint64(time.Millisecond) {
		return time.Duration(1<<63 - 1)
	}
	return time.Duration(n) * time.Millisecond
}
