// Package tcpinfo decodes the kernel's TCP_INFO of a socket by the length
// the kernel returned. struct tcp_info has grown with the kernel: a field
// past the returned length is one this kernel does not fill, so it is
// reported as not available rather than read as 0 (as a fixed-size read
// such as x/sys/unix GetsockoptTCPInfo does).
//
// Lengths, from the kernel's include/uapi/linux/tcp.h: 104 bytes up to
// tcpi_total_retrans on Linux 3.10 (the base every kernel interlink runs
// on gives); pacing rates 3.15; bytes_acked and bytes_received 4.1; segs_out
// and segs_in 4.2 (144 bytes; OpenVZ's RHEL 7-based 3.10 header ends there
// too, backported); notsent_bytes, min_rtt and the data segment counts 4.6;
// delivery_rate 4.9. Distribution kernels backport fields, so the length,
// never the release, decides.
package tcpinfo

import (
	"encoding/binary"
	"fmt"
	"time"
)

// Byte offsets of the fields this package reads, and the end of the base
// structure (Linux 3.10).
const (
	offOptions      = 5
	offSndMSS       = 16
	offRcvMSS       = 20
	offUnacked      = 24
	offPMTU         = 60
	offRTT          = 68
	offRTTVar       = 72
	offSndCwnd      = 80
	offTotalRetrans = 100
	// BaseLen is the length of struct tcp_info on Linux 3.10: every
	// kernel interlink runs on returns at least this much.
	BaseLen         = 104
	offBytesAcked   = 120 // 4.1
	offNotSent      = 144 // 4.6
	offMinRTT       = 148 // 4.6
	offDeliveryRate = 160 // 4.9
	// MaxLen is how much of the structure this package asks for; a newer
	// kernel copies at most this much.
	MaxLen = 512
)

// Info is TCP_INFO as far as the kernel gave it. The base fields are
// always there (Parse refuses less); the others have an ok result that is
// false when the kernel's structure ends before them.
type Info struct {
	len int
	b   [MaxLen]byte
}

// Parse decodes what getsockopt(TCP_INFO) returned; b's length is the
// length the kernel reported. Less than BaseLen is an error.
func Parse(b []byte) (Info, error) {
	var i Info
	if len(b) < BaseLen {
		return i, fmt.Errorf("tcp_info: the kernel returned %d bytes, want at least %d", len(b), BaseLen)
	}
	i.len = copy(i.b[:], b)
	return i, nil
}

// Len is the number of bytes the kernel returned (up to MaxLen).
func (i Info) Len() int { return i.len }

// Truncate is i as a kernel whose struct tcp_info is n bytes long would
// have returned it (n at least BaseLen).
func (i Info) Truncate(n int) Info {
	if n < i.len && n >= BaseLen {
		clear(i.b[n:])
		i.len = n
	}
	return i
}

func (i Info) u32(off int) uint32 { return binary.NativeEndian.Uint32(i.b[off:]) }

func (i Info) has(off, size int) bool { return i.len >= off+size }

// Timestamps says whether the connection's segments carry the timestamp
// option (TCPI_OPT_TIMESTAMPS).
func (i Info) Timestamps() bool { return i.b[offOptions]&1 != 0 }

// SndMSS is the sender's maximum segment size.
func (i Info) SndMSS() int { return int(i.u32(offSndMSS)) }

// RcvMSS is the kernel's estimate of the largest segment received.
func (i Info) RcvMSS() int { return int(i.u32(offRcvMSS)) }

// Unacked is the segments sent and not yet acknowledged.
func (i Info) Unacked() int { return int(i.u32(offUnacked)) }

// PMTU is the path MTU the connection uses.
func (i Info) PMTU() int { return int(i.u32(offPMTU)) }

// RTT and RTTVar are the smoothed round trip and its variation.
func (i Info) RTT() time.Duration { return time.Duration(i.u32(offRTT)) * time.Microsecond }

// RTTVar is the round trip's mean deviation.
func (i Info) RTTVar() time.Duration { return time.Duration(i.u32(offRTTVar)) * time.Microsecond }

// SndCwnd is the congestion window, in segments.
func (i Info) SndCwnd() int { return int(i.u32(offSndCwnd)) }

// TotalRetrans is the segments retransmitted over the connection's life.
func (i Info) TotalRetrans() int { return int(i.u32(offTotalRetrans)) }

// BytesAcked is the bytes the peer acknowledged over the connection's
// life (Linux 4.1).
func (i Info) BytesAcked() (int64, bool) {
	if !i.has(offBytesAcked, 8) {
		return 0, false
	}
	return int64(binary.NativeEndian.Uint64(i.b[offBytesAcked:])), true
}

// NotSent is the bytes written and not yet sent (Linux 4.6).
func (i Info) NotSent() (int64, bool) {
	if !i.has(offNotSent, 4) {
		return 0, false
	}
	return int64(i.u32(offNotSent)), true
}

// MinRTT is the smallest round trip the connection saw (Linux 4.6).
func (i Info) MinRTT() (time.Duration, bool) {
	if !i.has(offMinRTT, 4) {
		return 0, false
	}
	return time.Duration(i.u32(offMinRTT)) * time.Microsecond, true
}

// DeliveryRate is the kernel's recent delivery rate in bytes/s (Linux 4.9).
func (i Info) DeliveryRate() (uint64, bool) {
	if !i.has(offDeliveryRate, 8) {
		return 0, false
	}
	return binary.NativeEndian.Uint64(i.b[offDeliveryRate:]), true
}
