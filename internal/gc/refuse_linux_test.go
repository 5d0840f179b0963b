package gc

import (
	"context"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/wire"
)

// fakePeer plays node 1 of a two-node run against a real node 0 over UDP
// on loopback: it proves its address with a hello, answers node 0's
// requests with blocks and its pings with echoes, and after each of its
// first answers sends node 0 what a network or another host could: the
// answer again (replayed), sealed for another session or with another key,
// from another address, cut short, of an unknown type, a chunk outside its
// block, of the wrong size, addressed to another requester; and an
// authentic answer to no request. (A datagram larger than any of the run
// is read short by the socket: the loop's own case, not the engine's.)
type fakePeer struct {
	t       *testing.T
	conn    *net.UDPConn // the address node 0 knows
	other   *net.UDPConn // another port of the same host
	node0   *net.UDPAddr
	session uint64
	seal    *wire.Sealer // node 1 -> node 0
	open    *wire.Opener // node 0 -> node 1
	rounds  int          // answers followed by the bad datagrams

	mu                 sync.Mutex
	answered, pongs    int64 // valid blocks and echoes sent
	refused            int64 // datagrams node 0 must drop and count
	unrelated          int64 // authentic blocks or echoes for nothing in flight
	injected, injPings int
}

func listenLoopback(t *testing.T) *net.UDPConn {
	t.Helper()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// newFakePeer makes node 1's side of a pair session with node 0 (at
// node0) and node 0's Peer entry for it.
func newFakePeer(t *testing.T, node0 netip.AddrPort, rounds int) (*fakePeer, Peer) {
	k01, k10, id := key(), key(), wire.RandomID()
	f := &fakePeer{t: t, conn: listenLoopback(t), other: listenLoopback(t), node0: net.UDPAddrFromAddrPort(node0),
		session: id, seal: wire.NewSealer(k10, id), open: wire.NewOpener(k01, id), rounds: rounds}
	addr := f.conn.LocalAddr().(*net.UDPAddr).AddrPort()
	return f, Peer{Session: id, Seal: wire.NewSealer(k01, id), Open: wire.NewOpener(k10, id), Addr: addr}
}

// sealed is m in a datagram of size bytes sealed by s for session.
func sealed(t *testing.T, s *wire.Sealer, size int, m msg) []byte {
	b := make([]byte, size)
	m.put(b[wire.HeaderLen:])
	if _, err := s.SealPacket(b, dataKind, 0); err != nil {
		t.Fatal(err)
	}
	return b
}

func (f *fakePeer) send(c *net.UDPConn, b []byte) {
	if _, err := c.WriteToUDP(b, f.node0); err != nil {
		f.t.Errorf("fake peer: %v", err)
	}
}

// serve answers node 0 until stop closes, bounded by limit.
func (f *fakePeer) serve(stop <-chan struct{}, limit time.Duration) {
	buf := make([]byte, 1<<16)
	end := time.Now().Add(limit)
	for time.Now().Before(end) {
		select {
		case <-stop:
			return
		default:
		}
		f.conn.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		n, from, err := f.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			continue
		}
		pkt := buf[:n]
		var m msg
		if _, err := f.open.Open(pkt); err != nil || from != f.node0.AddrPort() || m.parse(pkt[wire.HeaderLen:]) != nil {
			f.t.Errorf("node 0 sent an unauthentic or malformed datagram (%d bytes from %v): %v", n, from, err)
			continue
		}
		f.answer(&m, n)
	}
}

func (f *fakePeer) answer(m *msg, size int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch m.Type {
	case msgHello:
		if m.Flags&flagDone == 0 {
			f.send(f.conn, sealed(f.t, f.seal, HeaderLen, msg{Type: msgHello, Requester: 1, Flags: flagHeard | flagDone}))
		}
	case msgRequest:
		blk := msg{Type: msgBlock, Hops: 2, Requester: 0, Server: 1, Chunks: 1, Block: m.Block, ID: m.ID}
		b := sealed(f.t, f.seal, 8192, blk)
		f.send(f.conn, b)
		f.answered++
		if f.injected < f.rounds {
			f.injected++
			f.badBlocks(b, blk)
		}
	case msgPing:
		pong := msg{Type: msgPong, Requester: m.Requester, ID: m.ID, Stamp: m.Stamp}
		b := sealed(f.t, f.seal, size, pong)
		f.send(f.conn, b)
		f.pongs++
		if f.injPings < f.rounds {
			f.injPings++
			f.badPongs(b, pong)
		}
	default:
		f.t.Errorf("node 0 sent a message of type %d: every block was answered", m.Type)
	}
}

// badBlocks follows the valid block b (holding m) with datagrams node 0
// must refuse and count, and one authentic block of no request.
func (f *fakePeer) badBlocks(b []byte, m msg) {
	t := f.t
	other := wire.NewSealer(key(), wire.RandomID())
	wrongKey := wire.NewSealer(key(), f.session)
	odd := m
	odd.Type = 99
	outside := m
	outside.Chunk = 1
	misaddressed := m
	misaddressed.Requester = 1
	bad := [][]byte{
		b, // replayed
		sealed(t, other, len(b), m),
		sealed(t, wrongKey, len(b), m),
		sealed(t, f.seal, len(b), m)[:len(b)-1], // cut short
		sealed(t, f.seal, len(b), m)[:wire.HeaderLen-8], // shorter than a header
		sealed(t, f.seal, len(b), odd),
		sealed(t, f.seal, len(b), outside),
		sealed(t, f.seal, len(b)-1, m), // not a block's size
		sealed(t, f.seal, len(b), misaddressed),
	}
	for _, p := range bad {
		f.send(f.conn, p)
	}
	f.send(f.other, sealed(t, f.seal, len(b), m)) // authentic, from another address
	f.refused += int64(len(bad)) + 1
	none := m
	none.ID = 1<<40 | m.ID // a generation node 0 never reached
	f.send(f.conn, sealed(t, f.seal, len(b), none))
	f.unrelated++
}

// badPongs follows the valid echo b (holding m) likewise.
func (f *fakePeer) badPongs(b []byte, m msg) {
	t := f.t
	bad := [][]byte{
		b,
		sealed(t, wire.NewSealer(key(), wire.RandomID()), len(b), m),
		sealed(t, f.seal, len(b), m)[:len(b)-1],
		sealed(t, f.seal, 600, m), // not a ping's size
	}
	for _, p := range bad {
		f.send(f.conn, p)
	}
	f.send(f.other, sealed(t, f.seal, len(b), m))
	f.refused += int64(len(bad)) + 1
	none := m
	none.ID += 1 << 50
	f.send(f.conn, sealed(t, f.seal, len(b), none))
	f.unrelated++
}

// TestRefusedDatagrams runs node 0's engines on real sockets against a
// fake node 1 that sends, beside its valid answers, replayed, foreign,
// misdirected, truncated and malformed datagrams: node 0 counts each as
// dropped, takes none as a block or a ping's echo, and its figures are
// exactly the valid answers'.
func TestRefusedDatagrams(t *testing.T) {
	t.Parallel() // a paced run of fixed length on sockets of its own: bound by waiting
	spec, err := Spec{Duration: 300 * time.Millisecond, Blocks: 64, Outstanding: 2, CurrentSet: true, Timeout: 5 * time.Second,
		PingInterval: 20 * time.Millisecond}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	lo := netip.MustParseAddr("127.0.0.1")
	s, addr, err := openSock(lo)
	if err != nil {
		t.Fatal(err)
	}
	ps, pingAddr, err := openSock(lo)
	if err != nil {
		t.Fatal(err)
	}
	const rounds = 3
	work, workPeer := newFakePeer(t, addr, rounds)
	pings, pingPeer := newFakePeer(t, pingAddr, rounds)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, f := range []*fakePeer{work, pings} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.serve(stop, spec.Duration+drainWait(spec))
		}()
	}
	nd := startNode(context.Background(), spec, 0, []Peer{SelfPeer(addr), workPeer}, []Peer{SelfPeer(pingAddr), pingPeer}, s, ps, 65536, 1, noWait)
	select {
	case <-nd.drained:
	case <-time.After(spec.Duration + drainWait(spec)):
		t.Error("node 0 did not settle")
	}
	res := nd.Stop()
	close(stop)
	wg.Wait()
	if res.Error != "" {
		t.Fatalf("node 0: %s", res.Error)
	}
	from, pr := res.From[1], nd.ping.run.Pings[1]
	t.Logf("blocks: %d answered, %d received, %d late; pings: %d echoed, %d counted; dropped %d (pings %d)",
		work.answered, from.Received, from.Late, pings.pongs, pr[0].Count+pr[1].Count, res.Dropped, nd.ping.run.Dropped)
	if work.injected != rounds || pings.injPings != rounds {
		t.Fatalf("bad datagrams sent after %d blocks and %d echoes, want %d of each", work.injected, pings.injPings, rounds)
	}
	if from.Received != work.answered || from.Late != work.unrelated || from.Lost.Total() != 0 {
		t.Errorf("node 0 <- node 1: %d received, %d late, lost %+v; want %d received, %d late", from.Received, from.Late, from.Lost, work.answered, work.unrelated)
	}
	if got := pr[0].Count + pr[1].Count; got != pings.pongs || pr[0].Lost+pr[1].Lost != 0 {
		t.Errorf("pings to node 1: %d counted, %d lost; %d echoed", got, pr[0].Lost+pr[1].Lost, pings.pongs)
	}
	if nd.ping.run.Dropped != pings.refused || res.Dropped != work.refused+pings.refused {
		t.Errorf("dropped %d (pings %d), want %d (pings %d)", res.Dropped, nd.ping.run.Dropped, work.refused+pings.refused, pings.refused)
	}
	if err := res.Validate(0, 2, spec); err != nil {
		t.Error(err)
	}
}
