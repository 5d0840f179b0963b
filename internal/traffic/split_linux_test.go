package traffic

import (
	"context"
	"errors"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/interlink/interlink/internal/osthread"
	"github.com/interlink/interlink/internal/roottest"
	"github.com/interlink/interlink/internal/wire"
)

// checkSplit fails t unless a blocks flow's round trip is split into all
// four parts, each measured, whose p50s account for the round trip's.
func checkSplit(t *testing.T, what string, f Flow) {
	t.Helper()
	s := f.Summary
	sp := s.Split
	if sp == nil || s.RTT == nil {
		t.Fatalf("%s: no split: %+v", what, s)
	}
	for _, p := range sp.Parts() {
		if p.L == nil || p.L.Count == 0 || p.L.P50 > p.L.P99 || p.L.Count > s.Messages {
			t.Errorf("%s: %s: %+v (missing: %v)", what, p.Name, p.L, sp.Missing)
		}
	}
	// A quarter of the requests are marked for stamps, in runs of
	// SplitRun: the wake-ups are a sample of about that share of the
	// blocks, never all of them (a short run may end inside a run, and
	// the first read of each end is stamped).
	if w := sp.RequesterWake; w != nil && s.Messages >= 4*SplitRun*SplitEvery && (2*w.Count > s.Messages || w.Count < s.Messages/(2*SplitEvery)) {
		t.Errorf("%s: %d of %d blocks have the requester's wake-up, want about 1 in %d (at most half)", what, w.Count, s.Messages, SplitEvery)
	}
	// Both ends stamp the same blocks (FlagSampling): network and stacks,
	// which needs both ends' stamps, has nearly every block the
	// requester's wake-up has, not one in SplitEvery of them.
	if w, n := sp.RequesterWake, sp.NetworkAndStacks; w != nil && n != nil && 10*n.Count < 9*w.Count {
		t.Errorf("%s: network and stacks has %d blocks, the requester's wake-up %d: the ends stamped different blocks", what, n.Count, w.Count)
	}
	if sp.RequesterReceivePath == nil || sp.ResponderReceivePath == nil {
		t.Errorf("%s: the ends' receive paths awake are not both measured: %v (missing: %v)", what, sp, sp.Missing)
	}
	// The p50s of the parts need not add up to the round trip's on a
	// loaded machine (their spread, and they are samples: SplitEvery);
	// where they miss by more than 15 % the report must say why.
	if a := sp.AccountedPercent; a == nil || (*a < 100*(1-SplitTolerance) || *a > 100*(1+SplitTolerance)) && sp.Unaccounted == "" {
		t.Errorf("%s: the parts' p50s do not account for the round trip's p50 %v: %v %%, and no reason given", what, time.Duration(s.RTT.P50), a)
	}
	if sp.RequesterWake != nil && sp.ResponderWake != nil && sp.ResponderWork != nil && sp.NetworkAndStacks != nil {
		t.Logf("%s: %d blocks, %d with the requester's wake-up, %d with network and stacks; rtt p50 %v = requester wake %v + responder wake %v + work %v + network and stacks %v (%.0f %%), idle entries per block %v",
			what, s.Messages, sp.RequesterWake.Count, sp.NetworkAndStacks.Count, time.Duration(s.RTT.P50), time.Duration(sp.RequesterWake.P50), time.Duration(sp.ResponderWake.P50),
			time.Duration(sp.ResponderWork.P50), time.Duration(sp.NetworkAndStacks.P50), *sp.AccountedPercent, deref(sp.IdleEntriesPerBlock))
	}
}

func deref(p *float64) float64 {
	if p == nil {
		return -1
	}
	return *p
}

// TestLoopbackSplit: both ends in this process, on loopback: each block
// is split from the kernel's stamps; with NoSplit neither end asks for
// stamps and nothing is split.
func TestLoopbackSplit(t *testing.T) {
	t.Parallel()
	res := runLo(t, context.Background(), Spec{Mode: ModeBlocks, Duration: 300 * time.Millisecond})
	checkSplit(t, "loopback", res.Flows[0])
	if c, s := res.Flows[0].Client.Split, res.Flows[0].Server.Split; c.Host == "" || c.Host != s.Host || res.Flows[0].Summary.Split.Hosts > 1 {
		t.Errorf("one host, named %q and %q", c.Host, s.Host)
	}
	off := runLo(t, context.Background(), Spec{Mode: ModeBlocks, Duration: 100 * time.Millisecond, NoSplit: true})
	if f := off.Flows[0]; f.Client.Split != nil || f.Server.Split != nil || f.Summary.Split != nil {
		t.Errorf("NoSplit: %+v %+v", f.Client.Split, f.Server.Split)
	}
}

// TestRemoteSplit: through an agent, the responder's hold crosses in the
// sealed blocks and its parts come back in its result.
func TestRemoteSplit(t *testing.T) {
	t.Parallel()
	c := startAgent(t, wire.Limits{MaxRateBitsPerSec: 10e9})
	res, err := RunRemote(context.Background(), c, Spec{Mode: ModeBlocks, Duration: 300 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkSplit(t, "agent", res.Flows[0])
}

// TestReceivePathAwake: on loopback the receive path awake of a block's
// datagram is measured, longer than a request's (the copy) and well under
// a millisecond; in a namespace whose loopback is down it is not, and the
// error says so.
func TestReceivePathAwake(t *testing.T) {
	small, err := receivePathAwake(64)
	if err != nil {
		t.Fatal(err)
	}
	big, err := receivePathAwake(60000)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("receive path awake: 64 B %v, 60000 B %v", time.Duration(small), time.Duration(big))
	if small <= 0 || big <= small || big > int64(time.Millisecond) {
		t.Errorf("receive path awake: 64 B %v, 60000 B %v: want 0 < small < big < 1ms", time.Duration(small), time.Duration(big))
	}
	roottest.Require(t, "a network namespace of its own")
	ch := make(chan error, 1)
	osthread.Spent(func() {
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			ch <- err
			return
		}
		_, err := receivePathAwake(64)
		ch <- err
	})
	if err := <-ch; !errors.Is(err, errNoLoopback) {
		t.Errorf("lo down: %v, want %v", err, errNoLoopback)
	}
}
