// Package traffic holds the load engines of `interlink bench`: a TCP stream
// (one or more connections, TCP_INFO per stream), a paced UDP stream
// (sequence numbers for loss, reordering and duplicates; RFC 3550 jitter;
// datagrams may exceed the MTU on purpose) and "blocks", the Cache Fusion
// pattern of a small request answered by a database block over UDP, with
// round-trip percentiles from an HDR histogram.
//
// Each engine is split into its two ends (sender and receiver, requester and
// responder) so that one end can run here and the other in `interlink
// agent`, or both in one process for tests and the comparison harness
// (RunLocal). Every end measures its own cost: CPU of its hot threads
// (getrusage RUSAGE_THREAD), host softirq time (/proc/stat) and the kernel
// counters of its network namespace (/proc/thread-self/net), so an end must
// be started on a thread that sits in the namespace whose sockets it uses
// (lab Node.Do). Hot loops run on their own locked OS threads with blocking
// sockets, as C tools do: no netpoller wake-ups on the measured path, CPU
// time attributable per thread, and --cpu pinning that means something.
//
// Every loop is bounded by Spec.Duration (at most MaxDuration) and by its
// context; cancelling the context ends the run early and still returns what
// was measured up to then.
package traffic

import (
	"errors"
	"fmt"
	"time"
)

// Mode names an engine.
type Mode string

// The engines.
const (
	ModeTCP    Mode = "tcp"
	ModeUDP    Mode = "udp"
	ModeBlocks Mode = "blocks"
)

// Limits every Spec must respect; they bound what a peer can be asked to do.
const (
	MaxDuration    = time.Hour
	MinInterval    = 100 * time.Millisecond
	MaxParallel    = 128
	MaxLen         = 4 << 20 // TCP write size
	MaxDatagram    = 65507   // largest IPv4 UDP payload
	MaxBlock       = 1 << 20 // db_block_size x db_file_multiblock_read_count
	MaxOutstanding = 1024    // requests in flight
	// MaxRequestsPerSec bounds a paced blocks run (above it, leave
	// RequestsPerSec 0: as fast as the round trips allow).
	MaxRequestsPerSec = 10e6
	MaxRate           = 100e9 // bit/s; anything above is "unpaced" in practice
	DefaultUDPRate    = 1e9   // a safe default: iperf3 uses 1 Mbit/s, far too low for an interconnect
	DefaultTCPLen     = 128 << 10
	DefaultUDPLen     = 8 << 10
)

// Spec describes one test. The zero value of every field means "default"
// (see Normalize); Spec is plain data so it can travel to an agent.
type Spec struct {
	Mode     Mode          `json:"mode"`
	Duration time.Duration `json:"duration_ns"` // default 10 s, at most MaxDuration
	Interval time.Duration `json:"interval_ns"` // default 1 s; per-interval lines
	// Parallel is the number of TCP streams (default 1).
	Parallel int `json:"parallel"`
	// Reverse makes the peer send (tcp, udp); Bidir sends both ways at once
	// (tcp).
	Reverse bool `json:"reverse,omitempty"`
	Bidir   bool `json:"bidir,omitempty"`
	// Len is the TCP write size (default 128 KiB) or the UDP datagram
	// payload size (default 8 KiB, header included, may exceed the MTU).
	Len int `json:"len"`
	// RateBitsPerSec paces UDP (payload bits per second). Zero means the
	// default 1 Gbit/s when RateSet is false, unpaced when RateSet is true.
	RateBitsPerSec int64 `json:"rate_bits_per_sec"`
	RateSet        bool  `json:"rate_set"`
	// NoFlow turns off the flow control of unpaced UDP (see Flow): the
	// sender then blasts as fast as it can, whatever the receiver takes.
	NoFlow bool `json:"no_flow,omitempty"`
	// Request and Block are the request and block sizes of the blocks mode
	// (default 256 B and 8 KiB); Outstanding is how many requests are in
	// flight (default 1); BlockTimeout is when a block counts as lost
	// (default 500 ms, about when Oracle reports "gc cr block lost").
	Request      int           `json:"request"`
	Block        int           `json:"block"`
	Outstanding  int           `json:"outstanding"`
	BlockTimeout time.Duration `json:"block_timeout_ns"`
	// RequestsPerSec paces the blocks mode's requests (as sockperf's
	// --mps paces its pings): 0, as fast as Outstanding allows.
	RequestsPerSec float64 `json:"requests_per_sec,omitempty"`
	// NoSplit turns off the blocks mode's split of each round trip into
	// its parts (split.go): no kernel receive stamps are asked for or
	// read, at either end. For measuring what the split costs.
	NoSplit bool `json:"no_split,omitempty"`
	// SplitSync says the requester marks the requests it sends while it
	// reads with stamps (FlagSampling), and the responder reads with
	// stamps after those: both ends then stamp the same blocks. Set by
	// RunRemote and RunLocal; a responder given a spec without it (an
	// older bench) stamps one read in SplitEvery by count.
	SplitSync bool `json:"split_sync,omitempty"`
	// CPU pins the hot threads of the end that runs this spec (-1 or unset:
	// no pinning); PeerCPU is forwarded to the other end.
	CPU     *int `json:"cpu,omitempty"`
	PeerCPU *int `json:"peer_cpu,omitempty"`
	// LinkRateBitsPerSec is the line rate of the path when known (sysfs
	// speed, a lab's shaping rate); it enables "% of the wire limit".
	// LinkOverheadBytes is what the rate counts beyond the IP packet:
	// 38 on real Ethernet (header, FCS, preamble, gap; the default), 14 for
	// a tbf shaper, which counts the Ethernet header only.
	LinkRateBitsPerSec int64 `json:"link_rate_bits_per_sec,omitempty"`
	LinkOverheadBytes  int   `json:"link_overhead_bytes,omitempty"`
}

// ErrSpec is wrapped by every validation error of a Spec.
var ErrSpec = errors.New("invalid test")

// Normalize fills defaults and checks limits. It returns a copy.
func (s Spec) Normalize() (Spec, error) {
	switch s.Mode {
	case ModeTCP, ModeUDP, ModeBlocks:
	default:
		return s, specErr("mode %q: want tcp, udp or blocks", s.Mode)
	}
	err := s.normalizeTiming()
	if err == nil {
		switch s.Mode {
		case ModeTCP:
			err = s.normalizeTCP()
		case ModeUDP:
			err = s.normalizeUDP()
		case ModeBlocks:
			err = s.normalizeBlocks()
		}
	}
	if err == nil {
		err = s.normalizeRest()
	}
	return s, err
}

// specErr is a spec's problem, wrapping ErrSpec.
func specErr(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrSpec, fmt.Sprintf(format, a...))
}

// normalizeTiming defaults and checks the duration, interval and streams.
func (s *Spec) normalizeTiming() error {
	if s.Duration == 0 {
		s.Duration = 10 * time.Second
	}
	if s.Duration < 0 || s.Duration > MaxDuration {
		return specErr("duration %v: want more than 0 and at most %v", s.Duration, MaxDuration)
	}
	if s.Interval == 0 {
		s.Interval = time.Second
	}
	if s.Interval < MinInterval {
		return specErr("interval %v: want at least %v", s.Interval, MinInterval)
	}
	if s.Parallel == 0 {
		s.Parallel = 1
	}
	if s.Parallel < 1 || s.Parallel > MaxParallel {
		return specErr("parallel %d: want 1 to %d", s.Parallel, MaxParallel)
	}
	return nil
}

func (s *Spec) normalizeTCP() error {
	if s.Len == 0 {
		s.Len = DefaultTCPLen
	}
	if s.Len < 1 || s.Len > MaxLen {
		return specErr("len %d: want 1 to %d bytes for tcp", s.Len, MaxLen)
	}
	return nil
}

func (s *Spec) normalizeUDP() error {
	if s.Len == 0 {
		s.Len = DefaultUDPLen
	}
	if s.Len < HeaderLen || s.Len > MaxDatagram {
		return specErr("len %d: want %d to %d bytes for udp (the header takes %d)", s.Len, HeaderLen, MaxDatagram, HeaderLen)
	}
	if !s.RateSet && s.RateBitsPerSec == 0 {
		s.RateBitsPerSec = DefaultUDPRate
	}
	if s.RateBitsPerSec < 0 || s.RateBitsPerSec > MaxRate {
		return specErr("rate %d bit/s: want 0 (unpaced) to %g", s.RateBitsPerSec, float64(MaxRate))
	}
	if s.NoFlow && s.Paced() {
		return specErr("flow control is for unpaced udp (rate 0); a paced sender has none to turn off")
	}
	return nil
}

func (s *Spec) normalizeBlocks() error {
	if s.Request == 0 {
		s.Request = 256
	}
	if s.Block == 0 {
		s.Block = 8 << 10
	}
	if s.Outstanding == 0 {
		s.Outstanding = 1
	}
	if s.BlockTimeout == 0 {
		s.BlockTimeout = 500 * time.Millisecond
	}
	switch {
	case s.Request < HeaderLen || s.Request > MaxDatagram:
		return specErr("request %d: want %d to %d bytes", s.Request, HeaderLen, MaxDatagram)
	case s.Block < HeaderLen || s.Block > MaxBlock:
		return specErr("block %d: want %d bytes to 1 MiB", s.Block, HeaderLen)
	case s.Outstanding < 1 || s.Outstanding > MaxOutstanding:
		return specErr("outstanding %d: want 1 to %d", s.Outstanding, MaxOutstanding)
	case s.BlockTimeout < time.Millisecond || s.BlockTimeout > time.Minute:
		return specErr("block timeout %v: want 1ms to 1m", s.BlockTimeout)
	case s.RequestsPerSec < 0 || s.RequestsPerSec > MaxRequestsPerSec || s.RequestsPerSec != s.RequestsPerSec:
		return specErr("rate %g requests per second: want more than 0 and at most %g", s.RequestsPerSec, float64(MaxRequestsPerSec))
	}
	return nil
}

// normalizeRest checks what one mode takes and the others refuse, the
// CPUs and the link, and defaults the link's overhead.
func (s *Spec) normalizeRest() error {
	if s.RequestsPerSec != 0 && s.Mode != ModeBlocks {
		return specErr("a request rate is for the blocks mode")
	}
	if s.NoFlow && s.Mode != ModeUDP {
		return specErr("flow control is for unpaced udp; mode %s has none to turn off", s.Mode)
	}
	for _, c := range []*int{s.CPU, s.PeerCPU} {
		if c != nil && (*c < 0 || *c >= 1024) {
			return specErr("cpu %d: want 0 to 1023", *c)
		}
	}
	if s.LinkRateBitsPerSec < 0 {
		return specErr("link rate %d: negative", s.LinkRateBitsPerSec)
	}
	if s.LinkOverheadBytes == 0 {
		s.LinkOverheadBytes = EthernetOverhead
	}
	return nil
}

// Paced reports whether UDP sends are paced.
func (s Spec) Paced() bool { return s.RateBitsPerSec > 0 }

// Flow reports whether a UDP sender is flow-controlled by its receiver
// (flow.go): unpaced UDP is, unless NoFlow. A paced sender sends at the
// rate it was asked for, and loss at that rate is the finding.
func (s Spec) Flow() bool { return s.Mode == ModeUDP && !s.Paced() && !s.NoFlow }
