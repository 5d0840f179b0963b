package tcpinfo

import (
	"io"
	"net"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The offsets are the kernel's: x/sys/unix's TCPInfo is generated from
// linux/tcp.h.
func TestOffsetsMatchKernelHeader(t *testing.T) {
	var u unix.TCPInfo
	for _, c := range []struct {
		name      string
		mine, uni uintptr
	}{
		{"options", offOptions, unsafe.Offsetof(u.Options)},
		{"snd_mss", offSndMSS, unsafe.Offsetof(u.Snd_mss)}, {"rcv_mss", offRcvMSS, unsafe.Offsetof(u.Rcv_mss)},
		{"unacked", offUnacked, unsafe.Offsetof(u.Unacked)}, {"pmtu", offPMTU, unsafe.Offsetof(u.Pmtu)},
		{"rtt", offRTT, unsafe.Offsetof(u.Rtt)}, {"rttvar", offRTTVar, unsafe.Offsetof(u.Rttvar)},
		{"snd_cwnd", offSndCwnd, unsafe.Offsetof(u.Snd_cwnd)}, {"total_retrans", offTotalRetrans, unsafe.Offsetof(u.Total_retrans)},
		{"end of 3.10 (pacing_rate)", BaseLen, unsafe.Offsetof(u.Pacing_rate)},
		{"bytes_acked", offBytesAcked, unsafe.Offsetof(u.Bytes_acked)}, {"notsent_bytes", offNotSent, unsafe.Offsetof(u.Notsent_bytes)},
		{"min_rtt", offMinRTT, unsafe.Offsetof(u.Min_rtt)}, {"delivery_rate", offDeliveryRate, unsafe.Offsetof(u.Delivery_rate)},
		{"end of RHEL 7 (notsent_bytes)", 144, unsafe.Offsetof(u.Notsent_bytes)},
	} {
		if c.mine != c.uni {
			t.Errorf("%s at %d, linux/tcp.h has %d", c.name, c.mine, c.uni)
		}
	}
	if MaxLen < unsafe.Sizeof(u) {
		t.Errorf("MaxLen %d is shorter than this header's struct (%d)", MaxLen, unsafe.Sizeof(u))
	}
}

// loopbackPair is a connected TCP pair on 127.0.0.1 after sent bytes went
// from c to the peer and were acknowledged.
func loopbackPair(t *testing.T, sent int) *net.TCPConn {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	peer, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { peer.Close() })
	go io.Copy(io.Discard, peer)
	if _, err := c.Write(make([]byte, sent)); err != nil {
		t.Fatal(err)
	}
	tc := c.(*net.TCPConn)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(5 * time.Millisecond) { // only against a hang
		if i := get(t, tc); i.Unacked() == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("loopback data never acknowledged")
		}
	}
	return tc
}

func get(t *testing.T, c *net.TCPConn) Info {
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var i Info
	var gerr error
	if err := rc.Control(func(fd uintptr) { i, gerr = Get(int(fd)) }); err != nil || gerr != nil {
		t.Fatalf("tcp_info: %v %v", err, gerr)
	}
	return i
}

// This kernel (the test host's) gives every field; a kernel whose
// structure ends at 3.10's 104 bytes gives the base fields alike and none
// of the later ones; RHEL 7's 144 bytes give bytes_acked but not min_rtt.
func TestGetByKernelLength(t *testing.T) {
	const sent = 100000
	c := loopbackPair(t, sent)
	full := get(t, c)
	// The kernel counts the SYN's sequence number as one byte acked.
	if acked, ok := full.BytesAcked(); !ok || acked != sent+1 {
		t.Errorf("bytes_acked %d, %v; want %d", acked, ok, sent)
	}
	if m, ok := full.MinRTT(); !ok || m <= 0 {
		t.Errorf("min_rtt %v, %v", m, ok)
	}
	if n, ok := full.NotSent(); !ok || n != 0 {
		t.Errorf("notsent_bytes %d, %v", n, ok)
	}
	if _, ok := full.DeliveryRate(); !ok {
		t.Error("no delivery_rate from this kernel")
	}
	for _, old := range []struct {
		n                   int
		acked, minRTT, rate bool
	}{{BaseLen, false, false, false}, {144, true, false, false}, {160, true, true, false}} {
		restore := LimitLength(old.n)
		i := get(t, c)
		restore()
		_, acked := i.BytesAcked()
		_, minRTT := i.MinRTT()
		_, ns := i.NotSent()
		_, rate := i.DeliveryRate()
		if i.Len() != old.n || acked != old.acked || minRTT != old.minRTT || ns != old.minRTT || rate != old.rate {
			t.Errorf("%d bytes: len %d, bytes_acked %v, min_rtt %v, notsent %v, delivery_rate %v", old.n, i.Len(), acked, minRTT, ns, rate)
		}
		if i.SndMSS() != full.SndMSS() || i.PMTU() != full.PMTU() || i.TotalRetrans() != full.TotalRetrans() || i.Timestamps() != full.Timestamps() {
			t.Errorf("%d bytes: base fields differ: mss %d pmtu %d", old.n, i.SndMSS(), i.PMTU())
		}
	}
	if short := full.Truncate(BaseLen); short.Len() != BaseLen {
		t.Errorf("Truncate: len %d", short.Len())
	} else if _, ok := short.MinRTT(); ok {
		t.Error("Truncate kept min_rtt")
	}
}

func TestParseShort(t *testing.T) {
	if _, err := Parse(make([]byte, BaseLen-1)); err == nil {
		t.Error("103 bytes parsed")
	}
}
