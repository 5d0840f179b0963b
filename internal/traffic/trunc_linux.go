package traffic

import (
	"golang.org/x/net/ipv4"
	"golang.org/x/sys/unix"
)

// readRealLength goes into the flags of a read whose caller wants to know
// how long a datagram read short really was: with MSG_TRUNC the kernel
// returns each UDP datagram's real length (since Linux 2.6.8), so N can
// then exceed the buffer. Whether or not a read asks, a datagram read
// short carries MSG_TRUNC in its message flags (datagram).
const readRealLength = unix.MSG_TRUNC

// datagram is what a read put in m: the bytes in the buffer, the
// datagram's size (its real length when the read asked with
// readRealLength, else at most the buffer) and whether it was read short.
// A datagram read short is not one this run sent, or not as it sent it:
// callers count it as truncated, never as received, and never as lost.
func datagram(m *ipv4.Message) (pkt []byte, size int, short bool) {
	b := m.Buffers[0]
	short = m.N > len(b) || m.Flags&unix.MSG_TRUNC != 0
	return b[:min(m.N, len(b))], m.N, short
}

// joinedIn says how many of a run's each-byte datagrams a datagram read short
// holds, and the first one's bytes: a sending kernel that ignores the
// UDP_SEGMENT control message (before Linux 4.18 it is skipped without an
// error) sends a whole GSO buffer as one datagram of k x each bytes. Zero
// when size is not a whole number of datagrams or pkt holds less than one.
func joinedIn(pkt []byte, size, each int) (int, []byte) {
	if each <= 0 || size <= each || size%each != 0 || len(pkt) < each {
		return 0, nil
	}
	return size / each, pkt[:each]
}
