package traffic

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/casetest"
	"github.com/interlink/interlink/internal/wire"
)

// sessionGuards are the two ends' guards of one session, with the real
// keys' sealing: the client's, and the agent's for run.
func sessionGuards(run uint64) (client, agent guard) {
	const session = 42
	up, down := []byte("client to agent key, 32 bytes..."), []byte("agent to client key, 32 bytes...")
	client = guard{seal: wire.NewSealer(up, session), open: wire.NewOpener(down, session)}
	agent = guard{seal: wire.NewSealer(down, session), open: wire.NewOpener(up, session), run: run}
	return client, agent
}

// TestLateHello: the client says hello until the agent has started, so a
// repeat can reach the agent's end after its run began (TestRemoteFlow
// failed so, 1 run in 20, under load). The agent's end skips its own
// run's hello, before the first data and among the data, however late
// (beyond the replay window); a hello for another run, one whose tag does
// not verify, and a hello in-process (no session) are refused as before.
//
// The cases wait on their runs and time nothing: they run at once, and in
// parallel with the package's other untimed tests.
func TestLateHello(t *testing.T) {
	t.Parallel()
	const run = 7
	cases := []struct {
		name string
		spec Spec
		// the agent's end and the client's, as RunRemote pairs them
		agent, client func(context.Context, Spec, *net.UDPConn, Options) *Side
	}{
		{"receiver", Spec{Mode: ModeUDP, Duration: 400 * time.Millisecond, RateBitsPerSec: 50e6}, ReceiveUDP, SendUDP},
		{"flow-controlled sender", Spec{Mode: ModeUDP, Duration: 400 * time.Millisecond, RateSet: true, Len: 1400}, SendUDP, ReceiveUDP},
		{"responder", Spec{Mode: ModeBlocks, Duration: 400 * time.Millisecond}, Respond, Request},
	}
	casetest.AtOnce(t, len(cases), func(i int) string { return cases[i].name }, func(t *testing.T, i int) {
		c := cases[i]
		cg, ag := sessionGuards(run)
		cconn, aconn := connectedPair(t)
		hello := func(g guard, ref uint64) []byte {
			b := make([]byte, wire.HeaderLen)
			if _, err := g.seal.SealPacket(b, wire.KindHello, ref); err != nil {
				t.Fatal(err)
			}
			return b
		}
		// The client's hello loop writes on the data socket, which the
		// client's end takes over (and closes: acquireRaw): write on a
		// descriptor of the same socket.
		dup, err := cconn.File()
		if err != nil {
			t.Fatal(err)
		}
		defer dup.Close()
		write := func(b []byte) {
			if _, err := dup.Write(b); err != nil {
				t.Error(err)
			}
		}
		old := hello(cg, run) // sealed first: behind all the data by the end
		bad := hello(cg, run)
		bad[wire.HeaderLen-1] ^= 1
		// The hello that started the run, and one more before the data.
		write(hello(cg, run))
		write(hello(cg, run))
		var wg sync.WaitGroup
		var as, cs *Side
		wg.Add(2)
		go func() { defer wg.Done(); as = c.agent(context.Background(), c.spec, aconn, Options{Guard: ag}) }()
		go func() { defer wg.Done(); cs = c.client(context.Background(), c.spec, cconn, Options{Guard: cg}) }()
		// Late repeats among the data, as the client's hello loop
		// sends them; then the two the agent must refuse.
		for i := 0; i < 3; i++ {
			time.Sleep(10 * time.Millisecond)
			write(hello(cg, run))
		}
		write(old)
		write(hello(cg, run+1))
		write(bad)
		wg.Wait()
		if as.Error != "" || cs.Error != "" {
			t.Fatalf("agent %q, client %q", as.Error, cs.Error)
		}
		if got := foreign(as); got != 2 || as.Messages == 0 {
			t.Errorf("agent's end refused %d datagrams, want 2 (another run's hello, a bad tag); %d messages", got, as.Messages)
		}
		if got := foreign(cs); got != 0 {
			t.Errorf("client's end refused %d datagrams", got)
		}
	})
	// In-process there is no session and no hello to skip; a hello the
	// agent sealed itself is not the client's.
	var none Options
	_, ag := sessionGuards(run)
	own := make([]byte, wire.HeaderLen)
	if _, err := ag.seal.SealPacket(own, wire.KindHello, run); err != nil {
		t.Fatal(err)
	}
	if none.hello(own) || ag.Hello(own) {
		t.Error("a datagram that is not the client's hello taken for it")
	}
}

func foreign(sd *Side) int64 {
	switch {
	case sd.UDP != nil:
		return sd.UDP.Foreign
	case sd.Blocks != nil:
		return sd.Blocks.Foreign
	}
	return -1
}
