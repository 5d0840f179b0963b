package traffic

import (
	"context"
	"errors"
	"time"

	"github.com/interlink/interlink/internal/wire"
)

// The agent's request kinds for bench (served by serve_linux.go). A test
// is one run per direction: open (the agent opens a session endpoint and
// says where), start (after the client's data streams or hello arrived, the
// agent starts its end), result (the agent's Side when its end is done;
// stop cancels it first, for a client that was interrupted).
const (
	KindOpen   = "bench.open"
	KindStart  = "bench.start"
	KindResult = "bench.result"
)

// dataKind tags bench's data streams and datagrams in a session (wire
// kinds 16-127 are free for test kinds).
const dataKind wire.Kind = 16

// OpenRequest asks the agent to prepare its end of one run.
type OpenRequest struct {
	Spec Spec `json:"spec"` // the client's spec; the agent runs Role with Spec.PeerCPU
	Role Role `json:"role"` // what the agent does
}

// OpenReply says where the agent's endpoint listens.
type OpenReply struct {
	Run  uint64 `json:"run"`
	Port uint16 `json:"port"`
}

// RunRef names a run in start and result requests.
type RunRef struct {
	Run  uint64 `json:"run"`
	Stop bool   `json:"stop,omitempty"`
	// WaitNs, in a result request, is how long the agent waits for its end
	// to finish before it cuts it (the run's deadline); 0 waits as long as
	// the end runs (its own bounds).
	WaitNs int64 `json:"wait_ns,omitempty"`
}

// RunGrace is how long past Spec.Duration a run may take before a stalled
// end is cut: time for the last data to drain and, in blocks mode, for the
// last requests to time out.
func RunGrace(spec Spec) time.Duration {
	g := 2 * time.Second
	if spec.Mode == ModeBlocks {
		g += spec.BlockTimeout
	}
	return g
}

// guard seals and opens datagrams with a session's keys. count, when set,
// feeds the agent's per-session packet counters (its log line). run, at
// the agent, is the run whose hello a late repeat names (0 at the client,
// which receives no hello).
type guard struct {
	seal  *wire.Sealer
	open  *wire.Opener
	wait  func(ctx context.Context, n int) error
	count counter
	run   uint64
}

// counter is what the agent's Session counts.
type counter interface {
	CountIn(bytes int)
	CountOut(bytes int)
	CountDrop()
}

func (g guard) Overhead() int { return wire.HeaderLen }

func (g guard) Seal(pkt []byte) error {
	_, err := g.seal.SealPacket(pkt, dataKind, 0)
	if err == nil && g.count != nil {
		g.count.CountOut(len(pkt))
	}
	return err
}

func (g guard) Open(pkt []byte) error {
	h, err := g.open.Open(pkt)
	if err == nil && h.Kind != dataKind {
		err = wire.ErrNotData
	}
	if g.count != nil {
		if err != nil {
			g.count.CountDrop()
		} else {
			g.count.CountIn(len(pkt))
		}
	}
	return err
}

// Hello verifies pkt as the client's hello for g.run. Its tag must verify;
// the replay window need not pass, since ErrReplay comes only after the tag
// did: a hello overtaken by more than the window's worth of data is still
// the client's own.
func (g guard) Hello(pkt []byte) bool {
	if g.run == 0 || len(pkt) != wire.HeaderLen {
		return false
	}
	h, err := g.open.Open(pkt)
	ok := (err == nil || errors.Is(err, wire.ErrReplay)) && h.Kind == wire.KindHello && h.Ref == g.run
	if ok && g.count != nil {
		g.count.CountIn(len(pkt))
	}
	return ok
}

func (g guard) Wait(ctx context.Context, n int) error {
	if g.wait == nil {
		return nil
	}
	return g.wait(ctx, n)
}

// helloEvery is how often the client repeats its UDP hello until the agent
// has started (a hello can be lost like any datagram).
const helloEvery = 50 * time.Millisecond

// setupTimeout bounds each step of setting up a run.
const setupTimeout = 5 * time.Second
