// Package gc is the cluster-wide Cache Fusion workload of `interlink bench
// --mode gc`: every named node's agent requests blocks and serves them, all
// at once, and the agents talk to each other directly over UDP as RAC's
// IPC does. The command only sets the run up, starts it and collects the
// results; it is not on the data path.
//
// # Protocol
//
// Blocks 0..Blocks-1 are mastered across the nodes by a hash of the block
// number. A requester sends a request (Spec.Request bytes, 256 by default)
// to the block's master. If the master holds the block it ships it (2-way);
// otherwise it forwards the request to the current holder, which ships the
// block straight to the requester (3-way). A requester that is itself the
// master asks the holder directly (2-way). Current-mode requests
// (Spec.CurrentShare) move ownership to the requester; consistent-read
// requests get a copy. A block the requester holds is a local hit and
// crosses no wire. A block not whole within Spec.Timeout is lost; the
// requester asks the master where the request went (the master remembers
// the last route of every requester's slot), so each lost block is counted
// against the pair that should have carried it: the requester and the node
// that was to ship it. See msg.go for the datagrams and engine.go for the
// node's state.
//
// # Authentication
//
// Every pair of agents holds one authenticated session: the coordinator
// asks each agent to dial some of the others with the cluster's token (as
// pmtu.peer makes one agent a client of another), and each datagram between
// the two is sealed with that session's keys (package wire: tag, sequence
// number, replay window). An agent sends nothing but small hellos to a peer
// before an authenticated datagram has come from the data address the peer
// announced over its session, ignores datagrams from any other address, and
// drops a peer whose session ended. Every datagram a node sends in a run,
// blocks included, first passes Session.Wait of the coordinator's control
// session on that agent: the run was requested over it.
//
// Beside the workload every node pings every node, itself included, with
// 500-byte and 8 KiB messages echoed at the same size, for the table AWR
// calls "Interconnect Ping Latency Stats".
package gc

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/interlink/interlink/internal/wire"
)

// Limits every Spec must respect.
const (
	MaxNodes       = 16      // one session per pair; an agent grants 16 sessions
	MaxBlocks      = 1 << 20 // working set
	MaxBlock       = 1 << 20 // db_block_size x db_file_multiblock_read_count
	MaxChunk       = 65507   // largest IPv4 UDP payload: a bigger block is split
	MaxOutstanding = 1024    // requests in flight per node (slotBits)
	MaxDuration    = time.Hour
	MaxSkew        = 4.0
	MaxRate        = 10e6 // requests per second per node
	// HeaderLen is what every datagram of a run starts with: the session's
	// tagged header and the gc header. Sizes given by the user include it.
	HeaderLen = wire.HeaderLen + msgLen
	// PingSmall and PingLarge are AWR's two ping sizes.
	PingSmall = 500
	PingLarge = 8192
)

// Defaults of the zero Spec fields.
const (
	DefaultDuration     = 10 * time.Second
	DefaultBlocks       = 10000
	DefaultBlock        = 8 << 10
	DefaultRequest      = 256
	DefaultOutstanding  = 4
	DefaultTimeout      = 500 * time.Millisecond
	DefaultCurrentShare = 0.2
	DefaultPingInterval = 100 * time.Millisecond
)

// Spec describes one run. Zero fields take the defaults (Normalize); it is
// plain data so that it can travel to the agents.
type Spec struct {
	Duration time.Duration `json:"duration_ns"`
	// Blocks is the working set; Skew its zipf exponent (0: uniform, 1:
	// zipf, the k-th hottest block asked 1/k as often as the hottest).
	Blocks int     `json:"blocks"`
	Skew   float64 `json:"skew"`
	// Block and Request are the sizes of a block and of a request message
	// (a GCS message, about 200 bytes in Oracle's own estimate), headers
	// included. Blocks above MaxChunk travel as several datagrams.
	Block   int `json:"block"`
	Request int `json:"request"`
	// CurrentShare is the share of requests in current mode, which move
	// the block's ownership to the requester; CurrentSet says that a zero
	// CurrentShare is meant (only consistent reads: no ownership moves).
	CurrentShare float64 `json:"current_share"`
	CurrentSet   bool    `json:"current_set,omitempty"`
	// Outstanding is the requests each node keeps in flight; RatePerSec,
	// when not zero, paces each node's requests to that many a second (a
	// given load, rather than as many as the cluster can carry).
	Outstanding int     `json:"outstanding"`
	RatePerSec  float64 `json:"rate_per_sec,omitempty"`
	// Timeout is when a block not yet whole counts as lost (about when
	// Oracle reports "gc cr block lost").
	Timeout time.Duration `json:"timeout_ns"`
	// PingInterval is how often each node pings each target with each
	// size; NoPing turns the pings off.
	PingInterval time.Duration `json:"ping_interval_ns"`
	NoPing       bool          `json:"no_ping,omitempty"`
	// NoSplit turns off the split of each receive time into its parts
	// (split.go): no kernel receive stamps are asked for or read.
	NoSplit bool `json:"no_split,omitempty"`
}

// ErrSpec is wrapped by every validation error of a Spec.
var ErrSpec = errors.New("invalid gc run")

// Normalize fills the defaults and checks the limits; it returns a copy.
func (s Spec) Normalize() (Spec, error) {
	bad := func(format string, a ...any) (Spec, error) {
		return s, fmt.Errorf("%w: %s", ErrSpec, fmt.Sprintf(format, a...))
	}
	if s.Duration == 0 {
		s.Duration = DefaultDuration
	}
	if s.Blocks == 0 {
		s.Blocks = DefaultBlocks
	}
	if s.Block == 0 {
		s.Block = DefaultBlock
	}
	if s.Request == 0 {
		s.Request = DefaultRequest
	}
	if s.Outstanding == 0 {
		s.Outstanding = DefaultOutstanding
	}
	if s.Timeout == 0 {
		s.Timeout = DefaultTimeout
	}
	if s.PingInterval == 0 {
		s.PingInterval = DefaultPingInterval
	}
	if s.CurrentShare == 0 && !s.CurrentSet {
		s.CurrentShare = DefaultCurrentShare
	}
	switch {
	case s.Duration < 0 || s.Duration > MaxDuration:
		return bad("duration %v: want more than 0 and at most %v", s.Duration, MaxDuration)
	case s.Blocks < 1 || s.Blocks > MaxBlocks:
		return bad("blocks %d: want a working set of 1 to %d blocks", s.Blocks, MaxBlocks)
	case math.IsNaN(s.Skew) || s.Skew < 0 || s.Skew > MaxSkew:
		return bad("skew %g: want 0 (uniform) to %g (1 is zipf)", s.Skew, MaxSkew)
	case s.Block < HeaderLen || s.Block > MaxBlock:
		return bad("block %d: want %d bytes (the headers) to 1 MiB", s.Block, HeaderLen)
	case s.Request < HeaderLen || s.Request > MaxChunk:
		return bad("request %d: want %d (the headers) to %d bytes", s.Request, HeaderLen, MaxChunk)
	case math.IsNaN(s.CurrentShare) || s.CurrentShare < 0 || s.CurrentShare > 1:
		return bad("current share %g: want 0 to 1", s.CurrentShare)
	case math.IsNaN(s.RatePerSec) || s.RatePerSec < 0 || s.RatePerSec > MaxRate:
		return bad("rate %g: want 0 (as fast as the requests in flight allow) to %g requests per second per node", s.RatePerSec, float64(MaxRate))
	case s.Outstanding < 1 || s.Outstanding > MaxOutstanding:
		return bad("outstanding %d: want 1 to %d requests in flight per node", s.Outstanding, MaxOutstanding)
	case s.Timeout < time.Millisecond || s.Timeout > time.Minute:
		return bad("timeout %v: want 1ms to 1m", s.Timeout)
	case s.PingInterval < 10*time.Millisecond || s.PingInterval > time.Minute:
		return bad("ping interval %v: want 10ms to 1m", s.PingInterval)
	}
	return s, nil
}

// Chunks splits a block into datagrams: one when it fits a UDP datagram,
// otherwise n of nearly equal size adding up to the block.
func Chunks(block int) []int {
	n := (block + MaxChunk - 1) / MaxChunk
	sizes := make([]int, n)
	for i := range sizes {
		sizes[i] = block / n
		if i < block%n {
			sizes[i]++
		}
	}
	return sizes
}

// setupTimeout bounds the hello exchange before the requests start, and
// queryEvery and queryTries the questions about a lost block.
const (
	setupTimeout = 3 * time.Second
	helloEvery   = 20 * time.Millisecond
	queryEvery   = 100 * time.Millisecond
	queryTries   = 3
)

// Grace is how long after Duration a node may take to settle its requests:
// the last ones time out, and the masters answer where lost ones went.
func Grace(s Spec) time.Duration {
	return s.Timeout + queryEvery*queryTries + time.Second
}
