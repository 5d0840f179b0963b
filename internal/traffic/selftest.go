package traffic

import (
	"context"
	"fmt"
	"net/netip"
	"time"
)

// SelfTestDuration is how long the loopback self-test of a blocks run lasts.
const SelfTestDuration = 500 * time.Millisecond

// SelfTest is a blocks run's loopback self-test: the same request and
// block sizes exchanged by both engines in this process over loopback
// (127.0.0.1, no network, no agent session). It is data, not a floor to
// subtract: the hosts' wake-ups, which the split of the round trip places,
// differ between it and the path.
type SelfTest struct {
	Duration int64    `json:"duration_ns"`
	PerSec   float64  `json:"per_sec"`
	RTT      *Latency `json:"rtt,omitempty"`
	Error    string   `json:"error,omitempty"`
}

// RunSelfTest runs spec's blocks exchange on loopback for SelfTestDuration,
// one block outstanding, unpinned.
func RunSelfTest(ctx context.Context, spec Spec) *SelfTest {
	s := Spec{Mode: ModeBlocks, Duration: SelfTestDuration, Interval: SelfTestDuration,
		Request: spec.Request, Block: spec.Block, Outstanding: 1, BlockTimeout: spec.BlockTimeout}
	lo := netip.MustParseAddr("127.0.0.1")
	st := &SelfTest{Duration: SelfTestDuration.Nanoseconds()}
	res, err := RunLocal(ctx, s, Place{Addr: lo}, Place{Addr: lo}, nil)
	switch {
	case err != nil:
		st.Error = err.Error()
	case res == nil || len(res.Flows) == 0:
		st.Error = "no result"
	default:
		sum := res.Flows[0].Summary
		st.PerSec, st.RTT = sum.PerSec, sum.RTT
		if st.RTT == nil {
			st.Error = fmt.Sprintf("no block came back on loopback in %v", SelfTestDuration)
		}
	}
	return st
}
