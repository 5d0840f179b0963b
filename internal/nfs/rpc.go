package nfs

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"sync"
	"time"
)

// ONC RPC version 2 (RFC 5531) over TCP with record marking.
const (
	rpcCall     = 0
	rpcReply    = 1
	rpcVersion  = 2
	authNone    = 0
	authSys     = 1
	maxRecord   = 4 << 20 // a reply larger than this is refused (READ of 1 MiB fits)
	lastFragBit = 1 << 31
)

// ErrRPC marks a failure of the RPC layer: the server refused the call
// (wrong program, version or procedure, authentication) or broke the
// protocol.
var ErrRPC = errors.New("rpc")

// conn is one TCP connection carrying calls of one program and version.
// Calls may be outstanding concurrently; replies are matched by XID.
type conn struct {
	c       net.Conn
	prog    uint32
	vers    uint32
	names   map[uint32]string // procedure names for the counters
	stats   *Stats
	cred    []byte
	mu      sync.Mutex // serialises writes and the pending map
	xid     uint32
	pending map[uint32]chan reply
	dead    error
}

type reply struct {
	body []byte
	err  error
}

// dial opens a connection to addr for prog/vers. AUTH_SYS as root (uid 0,
// gid 0), as the kernel client running as root presents it.
func dial(ctx context.Context, addr string, prog, vers uint32, names map[uint32]string, stats *Stats) (*conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	var cred enc
	cred.u32(uint32(time.Now().Unix()))
	cred.str("interlink")
	cred.u32(0)
	cred.u32(0)
	cred.u32(0)
	cn := &conn{c: c, prog: prog, vers: vers, names: names, stats: stats, cred: cred.b,
		pending: map[uint32]chan reply{}, xid: uint32(time.Now().UnixNano())}
	go cn.readLoop()
	return cn, nil
}

func (cn *conn) close() error { return cn.c.Close() }

// readLoop delivers each reply record to the call waiting for its XID.
func (cn *conn) readLoop() {
	r := bufio.NewReaderSize(cn.c, 256<<10)
	var err error
	for {
		var rec []byte
		if rec, err = readRecord(r); err != nil {
			break
		}
		if len(rec) < 4 {
			err = fmt.Errorf("%w: record of %d bytes", ErrRPC, len(rec))
			break
		}
		xid := binary.BigEndian.Uint32(rec)
		cn.mu.Lock()
		ch := cn.pending[xid]
		delete(cn.pending, xid)
		cn.mu.Unlock()
		if ch != nil {
			ch <- reply{body: rec}
		}
	}
	cn.mu.Lock()
	if cn.dead == nil {
		cn.dead = fmt.Errorf("connection lost: %w", err)
	}
	for x, ch := range cn.pending {
		ch <- reply{err: cn.dead}
		delete(cn.pending, x)
	}
	cn.mu.Unlock()
}

func readRecord(r io.Reader) ([]byte, error) {
	var out []byte
	for {
		var h [4]byte
		if _, err := io.ReadFull(r, h[:]); err != nil {
			return nil, err
		}
		n := binary.BigEndian.Uint32(h[:])
		last := n&lastFragBit != 0
		n &^= lastFragBit
		if len(out)+int(n) > maxRecord {
			return nil, fmt.Errorf("%w: record over %d bytes", ErrRPC, maxRecord)
		}
		start := len(out)
		out = append(out, make([]byte, n)...)
		if _, err := io.ReadFull(r, out[start:]); err != nil {
			return nil, err
		}
		if last {
			return out, nil
		}
	}
}

// call sends proc with args and waits for the reply's results. The
// counters record the call, its bytes and its round-trip time.
func (cn *conn) call(ctx context.Context, proc uint32, args []byte) (*dec, error) {
	ch := make(chan reply, 1)
	var m enc
	m.b = make([]byte, 4, 4+40+len(cn.cred)+len(args))
	cn.mu.Lock()
	if cn.dead != nil {
		cn.mu.Unlock()
		return nil, cn.dead
	}
	cn.xid++
	xid := cn.xid
	cn.pending[xid] = ch
	m.u32(xid)
	m.u32(rpcCall)
	m.u32(rpcVersion)
	m.u32(cn.prog)
	m.u32(cn.vers)
	m.u32(proc)
	m.u32(authSys)
	m.opaque(cn.cred)
	m.u32(authNone)
	m.u32(0)
	m.b = append(m.b, args...)
	binary.BigEndian.PutUint32(m.b, uint32(len(m.b)-4)|lastFragBit)
	start := time.Now()
	_, err := cn.c.Write(m.b)
	if err != nil {
		delete(cn.pending, xid)
		cn.mu.Unlock()
		return nil, err
	}
	cn.mu.Unlock()
	var rep reply
	select {
	case rep = <-ch:
	case <-ctx.Done():
		cn.mu.Lock()
		delete(cn.pending, xid)
		cn.mu.Unlock()
		return nil, ctx.Err()
	}
	if rep.err != nil {
		return nil, rep.err
	}
	cn.stats.add(cn.names[proc], len(m.b), len(rep.body), time.Since(start))
	return parseReply(rep.body)
}

// parseReply checks the reply header and returns a decoder at the results.
func parseReply(b []byte) (*dec, error) {
	d := &dec{b: b}
	d.u32() // xid
	if t := d.u32(); d.err == nil && t != rpcReply {
		return nil, fmt.Errorf("%w: message type %d, want a reply", ErrRPC, t)
	}
	switch stat := d.u32(); stat {
	case 0: // MSG_ACCEPTED
		d.u32()        // verifier flavor
		d.opaque(400)  // verifier body
		acc := d.u32() // accept_stat
		if d.err != nil {
			return nil, fmt.Errorf("%w: %v", ErrRPC, d.err)
		}
		if acc != 0 {
			return nil, fmt.Errorf("%w: call not accepted: %s", ErrRPC, acceptStat(acc))
		}
		return d, nil
	case 1: // MSG_DENIED
		return nil, fmt.Errorf("%w: call denied (reject_stat %d)", ErrRPC, d.u32())
	default:
		return nil, fmt.Errorf("%w: reply_stat %d", ErrRPC, stat)
	}
}

func acceptStat(s uint32) string {
	switch s {
	case 1:
		return "program unavailable"
	case 2:
		return "program version mismatch"
	case 3:
		return "procedure unavailable"
	case 4:
		return "garbage arguments"
	case 5:
		return "system error"
	}
	return fmt.Sprintf("accept_stat %d", s)
}

// Stats counts the RPCs a client issued, per procedure.
type Stats struct {
	mu    sync.Mutex
	procs map[string]*ProcStats
}

// ProcStats is one procedure's calls: count, bytes on the wire (RPC
// records, without TCP/IP headers) and the summed round-trip time.
type ProcStats struct {
	Proc          string        `json:"proc"`
	Calls         uint64        `json:"calls"`
	BytesSent     uint64        `json:"bytes_sent"`
	BytesReceived uint64        `json:"bytes_received"`
	RTT           time.Duration `json:"rtt_ns"` // summed; AvgRTT divides
}

// AvgRTT is the mean round-trip time of one call.
func (p ProcStats) AvgRTT() time.Duration {
	if p.Calls == 0 {
		return 0
	}
	return p.RTT / time.Duration(p.Calls)
}

func (s *Stats) add(proc string, sent, recv int, rtt time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.procs == nil {
		s.procs = map[string]*ProcStats{}
	}
	p := s.procs[proc]
	if p == nil {
		p = &ProcStats{Proc: proc}
		s.procs[proc] = p
	}
	p.Calls++
	p.BytesSent += uint64(sent)
	p.BytesReceived += uint64(recv)
	p.RTT += rtt
}

// Snapshot returns the counters so far, sorted by procedure name.
func (s *Stats) Snapshot() []ProcStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]ProcStats, 0, len(s.procs))
	for _, p := range s.procs {
		out = append(out, *p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Proc < out[j].Proc })
	return out
}

// Calls returns the number of calls of one procedure ("GETATTR").
func (s *Stats) Calls(proc string) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.procs[proc]; p != nil {
		return p.Calls
	}
	return 0
}
