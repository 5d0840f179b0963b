package traffic

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/agent"
	"github.com/interlink/interlink/internal/agent/agenttest"
	"github.com/interlink/interlink/internal/wire"
)

var testToken = []byte("t5-bench-test-token-0123456789")

// startAgent runs an agent on loopback for the test and dials a session.
func startAgent(t *testing.T, limits wire.Limits) *agent.Client {
	t.Helper()
	addr := agenttest.Start(t, agent.Config{Token: testToken, Limits: limits, Software: "t5 test agent"})
	dctx, dcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer dcancel()
	c, err := agent.Dial(dctx, addr, testToken, agent.DialOptions{Software: "t5 test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestRemoteModes(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: every mode through an agent, 2 s")
	}
	t.Parallel()
	c := startAgent(t, wire.Limits{MaxRateBitsPerSec: 10e9})
	for _, spec := range []Spec{
		{Mode: ModeTCP, Duration: 250 * time.Millisecond, Parallel: 2},
		{Mode: ModeTCP, Duration: 250 * time.Millisecond, Bidir: true},
		{Mode: ModeUDP, Duration: 250 * time.Millisecond, RateBitsPerSec: 50e6},
		{Mode: ModeUDP, Duration: 250 * time.Millisecond, RateBitsPerSec: 50e6, Reverse: true},
		{Mode: ModeBlocks, Duration: 250 * time.Millisecond, Outstanding: 4},
		{Mode: ModeBlocks, Duration: 200 * time.Millisecond, Block: 256 << 10},
	} {
		res, err := RunRemote(context.Background(), c, spec, nil)
		if err != nil {
			t.Fatalf("%+v: %v", spec, err)
		}
		for _, f := range res.Flows {
			s := f.Summary
			t.Logf("%s %s: %.1f Mbit/s, %d msgs, lost %d, agent %s %d bytes", spec.Mode, f.Direction, s.BitsPerSec/1e6, s.Messages, s.Lost, f.Server.Role, f.Server.Bytes)
			for _, sd := range []*Side{f.Client, f.Server} {
				if sd.Error != "" {
					t.Errorf("%s %s %s: %s", spec.Mode, f.Direction, sd.Role, sd.Error)
				}
			}
			if s.Bytes == 0 || f.Server.CPU.UserNs+f.Server.CPU.SystemNs == 0 {
				t.Errorf("%s %s: nothing measured: %+v", spec.Mode, f.Direction, s)
			}
			if spec.Mode != ModeTCP && (s.Lost != 0 || (f.Client.UDP != nil && f.Client.UDP.Foreign > 0 && f.Direction == Reverse)) {
				t.Errorf("%s %s: lost %d on loopback", spec.Mode, f.Direction, s.Lost)
			}
		}
	}
}

// TestRemoteRateLimit: the agent never sends faster than the session
// allows, whatever the client asks. (An upper bound only, which a loaded
// machine cannot break: the pacer never runs ahead. Parallel.)
func TestRemoteRateLimit(t *testing.T) {
	t.Parallel()
	c := startAgent(t, wire.Limits{MaxRateBitsPerSec: 20e6})
	res, err := RunRemote(context.Background(), c, Spec{Mode: ModeUDP, Duration: 500 * time.Millisecond, RateBitsPerSec: 200e6, Reverse: true, Len: 1400}, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := res.Flows[0]
	rate := float64(f.Server.Bytes) * 8 / f.Server.Duration.Seconds()
	if rate > 22e6 || f.Server.Bytes == 0 {
		t.Errorf("agent sent %.1f Mbit/s, its limit is 20", rate/1e6)
	}
}

// TestRemoteCancel: a run cancelled mid-way still reports what both ends
// measured.
func TestRemoteCancel(t *testing.T) {
	t.Parallel()
	c := startAgent(t, wire.Limits{MaxRateBitsPerSec: 20e6})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	res, err := RunRemote(ctx, c, Spec{Mode: ModeBlocks, Duration: time.Minute}, func(d Direction, r Role, _ Interval) {
		if d == Forward && r == RoleRequester {
			once.Do(cancel) // mid-way: after the requester's first interval
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	f := res.Flows[0]
	if f.Client.Duration >= res.Spec.Duration || f.Summary.Messages == 0 || f.Server.Blocks.Completed == 0 {
		t.Errorf("cancelled run: ran %v of %v, %d blocks, agent answered %d", f.Client.Duration, res.Spec.Duration, f.Summary.Messages, f.Server.Blocks.Completed)
	}
}

// TestRemoteFlow: unpaced UDP through an agent is flow-controlled both
// ways, with feedback sealed for the session like every datagram: the
// agent receiving (its feedback opened by the client) and the agent
// sending (the client's feedback opened by the agent). No datagram is
// refused by either end, feedback held the sender (never given up), and
// the receiver's feedback never outweighs what it received (the agent's
// promise).
func TestRemoteFlow(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: flow feedback through an agent judged against its give-up time, serial, 0.9 s")
	}
	c := startAgent(t, wire.Limits{})
	for _, reverse := range []bool{false, true} {
		spec := Spec{Mode: ModeUDP, Duration: 250 * time.Millisecond, RateSet: true, Len: 8 << 10, Reverse: reverse}
		res, err := RunRemote(context.Background(), c, spec, nil)
		if err != nil {
			t.Fatal(err)
		}
		f := res.Flows[0]
		snd, rcv := f.Client, f.Server
		if reverse {
			snd, rcv = rcv, snd
		}
		fl := f.Summary.Flow
		t.Logf("reverse %v: %.2f Gbit/s, lost %d, flow %+v, receiver sent %d feedback", reverse, f.Summary.BitsPerSec/1e9, f.Summary.Lost, fl, rcv.UDP.FeedbackSent)
		for _, sd := range []*Side{snd, rcv} {
			if sd.Error != "" || sd.UDP.Foreign != 0 {
				t.Errorf("reverse %v: %s: error %q, %d datagrams refused", reverse, sd.Role, sd.Error, sd.UDP.Foreign)
			}
		}
		if fl == nil || fl.Feedback == 0 || fl.Abandoned != "" || fl.Bottleneck == "" || rcv.UDP.FeedbackSent < fl.Feedback {
			t.Errorf("reverse %v: flow control through the agent: %+v, receiver sent %d", reverse, fl, rcv.UDP.FeedbackSent)
		}
		if out := rcv.UDP.FeedbackSent * (wire.HeaderLen + HeaderLen); out > rcv.Bytes {
			t.Errorf("reverse %v: the receiver sent %d bytes of feedback for %d received", reverse, out, rcv.Bytes)
		}
	}
}
