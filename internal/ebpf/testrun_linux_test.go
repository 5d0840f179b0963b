package ebpf

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/interlink/interlink/internal/roottest"
)

// needRoot: loading a program and BPF_PROG_TEST_RUN need CAP_BPF and
// CAP_NET_ADMIN.
func needRoot(t *testing.T) {
	t.Helper()
	roottest.Require(t, "it loads eBPF programs into the kernel")
}

// frame builds an Ethernet frame of total bytes: IPv4 (ihl 32-bit words of
// header) or IPv6, then a UDP or TCP header (TCP with tcpOpts bytes of
// options), then zero payload.
func frame(v6, tcp bool, ihl, tcpOpts, total int) []byte {
	b := make([]byte, total)
	l3 := 14
	ipHdr := 40
	proto := byte(unix.IPPROTO_UDP)
	if tcp {
		proto = unix.IPPROTO_TCP
	}
	if v6 {
		binary.BigEndian.PutUint16(b[12:], unix.ETH_P_IPV6)
		b[l3] = 6 << 4
		binary.BigEndian.PutUint16(b[l3+4:], uint16(total-l3-40))
		b[l3+6] = proto
		b[l3+7] = 64
	} else {
		ipHdr = 4 * ihl
		binary.BigEndian.PutUint16(b[12:], unix.ETH_P_IP)
		b[l3] = 4<<4 | byte(ihl)
		binary.BigEndian.PutUint16(b[l3+2:], uint16(total-l3))
		b[l3+8] = 64
		b[l3+9] = proto
	}
	l4 := l3 + ipHdr
	if tcp {
		b[l4+12] = byte((20+tcpOpts)/4) << 4
	} else {
		binary.BigEndian.PutUint16(b[l4+4:], uint16(total-l4))
	}
	return b
}

// load loads p's classifier for a test and closes it at the end.
func load(t *testing.T, p Port) *Filter {
	t.Helper()
	f, err := Load(p, "il_port_test")
	if err != nil {
		t.Fatalf("load %+v: %v", p, err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestPortMTU runs the classifier of a port MTU of 1500 over frames in
// the kernel: v4 and v6, UDP and TCP, single frames and GSO packets whose
// segments are exactly at the MTU (kept) and one byte over it (dropped),
// whatever the GSO packet's own length. The counters say the same.
func TestPortMTU(t *testing.T) {
	needRoot(t)
	const mtu = 1500
	f := load(t, Port{MTU: mtu})
	type tc struct {
		name     string
		v6, tcp  bool
		ihl      int // IPv4 header words
		tcpOpts  int
		headers  int // Ethernet + IP + L4
		overhead int // how far over the MTU the frame (or each segment) is
	}
	var cases []tc
	for _, c := range []tc{
		{name: "v4 udp", ihl: 5, headers: 14 + 20 + 8},
		{name: "v4 tcp", tcp: true, ihl: 5, tcpOpts: 12, headers: 14 + 20 + 32},
		{name: "v4 options tcp", tcp: true, ihl: 6, headers: 14 + 24 + 20},
		{name: "v6 udp", v6: true, headers: 14 + 40 + 8},
		{name: "v6 tcp", v6: true, tcp: true, tcpOpts: 12, headers: 14 + 40 + 32},
	} {
		for _, over := range []int{0, 1} {
			c.overhead = over
			cases = append(cases, c)
		}
	}
	var frames, dropped uint64
	for _, c := range cases {
		want := uint32(tcActOK)
		if c.overhead > 0 {
			want = tcActShot
		}
		// A single frame of MTU (+1) bytes of IP packet.
		b := frame(c.v6, c.tcp, c.ihl, c.tcpOpts, 14+mtu+c.overhead)
		got, err := TestRun(f.Prog, b, 0, 1)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got != want {
			t.Errorf("%s frame of %d bytes: verdict %d, want %d", c.name, len(b), got, want)
		}
		// A GSO packet of three segments, each of MTU (+1) bytes: the
		// packet is three times the MTU, and only its segments count.
		seg := mtu + c.overhead - (c.headers - 14)
		b = frame(c.v6, c.tcp, c.ihl, c.tcpOpts, c.headers+2*seg)
		got, err = TestRun(f.Prog, b, seg, 1)
		if err != nil {
			t.Fatalf("%s GSO: %v", c.name, err)
		}
		if got != want {
			t.Errorf("%s GSO packet of %d bytes, gso_size %d: verdict %d, want %d", c.name, len(b), seg, got, want)
		}
		frames += 2
		if want == tcActShot {
			dropped += 2
		}
	}
	c, err := f.Counters()
	if err != nil {
		t.Fatal(err)
	}
	if c != (Counters{Frames: frames, DroppedMTU: dropped}) {
		t.Errorf("counters %+v, want %d frames, %d dropped over the MTU, none lost", c, frames, dropped)
	}
}

// binomialBounds returns the counts k out of n draws of chance p lies
// between with all but about 1e-12 of probability (7 standard
// deviations), so that a test of a random drop never flakes.
func binomialBounds(n int, p float64) (lo, hi uint64) {
	mean, sd := float64(n)*p, math.Sqrt(float64(n)*p*(1-p))
	return uint64(max(0, math.Floor(mean-7*sd))), uint64(math.Ceil(mean + 7*sd))
}

// TestPortLoss: a port with 10% loss drops about 10% of 20 000 frames at
// random (within 7 standard deviations), counted as lost; 100% drops all;
// a frame over the MTU is counted as too big, never as lost; a port
// without loss loses nothing.
func TestPortLoss(t *testing.T) {
	needRoot(t)
	const n = 20000
	small := frame(false, false, 5, 0, 14+100)
	for _, c := range []struct {
		p      Port
		frame  []byte
		lo, hi uint64 // frames lost
		mtu    uint64 // frames over the MTU
	}{
		{p: Port{LossPercent: 10}, frame: small},
		{p: Port{LossPercent: 1, MTU: 1500}, frame: small},
		{p: Port{LossPercent: 100}, frame: small, lo: n, hi: n},
		{p: Port{MTU: 1500}, frame: small},
		{p: Port{MTU: 1000, LossPercent: 50}, frame: frame(true, true, 0, 0, 14+1001), mtu: n},
	} {
		if c.hi == 0 && c.mtu == 0 {
			c.lo, c.hi = binomialBounds(n, c.p.LossPercent/100)
		}
		f := load(t, c.p)
		if _, err := TestRun(f.Prog, c.frame, 0, n); err != nil {
			t.Fatalf("%+v: %v", c.p, err)
		}
		got, err := f.Counters()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%+v: %+v (lost %.2f%%)", c.p, got, 100*float64(got.DroppedLoss)/n)
		if got.Frames != n || got.DroppedMTU != c.mtu || got.DroppedLoss < c.lo || got.DroppedLoss > c.hi {
			t.Errorf("%+v over %d frames: %+v, want %d over the MTU and %d to %d lost", c.p, n, got, c.mtu, c.lo, c.hi)
		}
	}
}

// TestCountersByID: the counters are found from the program's id alone,
// as lab status finds them from the port's tc filter.
func TestCountersByID(t *testing.T) {
	needRoot(t)
	f := load(t, Port{MTU: 1500})
	if _, err := TestRun(f.Prog, frame(false, false, 5, 0, 14+1501), 0, 3); err != nil {
		t.Fatal(err)
	}
	var info progInfo
	attr := bpfInfo{fd: uint32(f.Prog), infoLen: 8, info: ptrTo(&info)}
	if _, err := bpf(unix.BPF_OBJ_GET_INFO_BY_FD, unsafe.Pointer(&attr), unsafe.Sizeof(attr)); err != nil {
		t.Fatal(err)
	}
	c, err := CountersByID(info.id)
	if err != nil {
		t.Fatal(err)
	}
	if c != (Counters{Frames: 3, DroppedMTU: 3}) {
		t.Errorf("counters by id %d: %+v, want 3 frames dropped over the MTU", info.id, c)
	}
	if _, err := CountersByID(math.MaxUint32); !errors.Is(err, unix.ENOENT) {
		t.Errorf("no such program: %v, want ENOENT", err)
	}
}
