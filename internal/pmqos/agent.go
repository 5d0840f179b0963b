package pmqos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/interlink/interlink/internal/agent"
)

// Kind is the agent request that holds a CPU-latency request on the
// agent's host until the session ends. An agent older than this kind
// answers "unknown request": the protocol's version stays, as for any new
// request kind.
const Kind = "host.cpu_latency"

// ErrNotAllowed is the agent's answer when it was not started with
// --allow-cpu-latency.
var ErrNotAllowed = errors.New("this agent does not allow CPU latency holds (start it with --allow-cpu-latency)")

// Request asks for a hold of US microseconds.
type Request struct {
	US int32 `json:"us"`
}

// Reply says the hold is taken, and the host's aggregate right after.
type Reply struct {
	Held        bool   `json:"held"`
	AggregateUS *int32 `json:"aggregate_us,omitempty"`
}

const sessionKey = "pmqos.hold"

func init() { agent.Register(Kind, serve) }

// serve takes the hold for the session: a second request replaces the
// first; the session's end (Bye, a lost client, the agent stopping on
// SIGTERM) releases it, and the agent's death closes the file.
func serve(ctx context.Context, s *agent.Session, body json.RawMessage) (any, error) {
	var req Request
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("bad request: %v", err)
	}
	if req.US < 0 || req.US >= MaxUS {
		return nil, fmt.Errorf("%d us: want 0 to %d", req.US, MaxUS-1)
	}
	if !s.AllowsCPULatency() {
		return nil, ErrNotAllowed
	}
	if old, ok := s.Load(sessionKey).(*Hold); ok {
		old.Close()
	}
	h, err := Open(req.US)
	if err != nil {
		return nil, errors.New(oneLine(err))
	}
	s.Store(sessionKey, h)
	context.AfterFunc(s.Context(), func() { h.Close() })
	rep := Reply{Held: true}
	if v, err := Current(); err == nil {
		rep.AggregateUS = &v
	}
	return rep, nil
}

// PeerEnd asks the agent behind c to hold us for the session; the End
// says whether it did, and why not (an agent that does not allow it, an
// older agent, a host without the file). The run goes on either way.
func PeerEnd(ctx context.Context, c *agent.Client, us int32) End {
	e := End{End: "peer " + c.Addr}
	var rep Reply
	err := c.Call(ctx, Kind, Request{US: us}, &rep)
	var re *agent.RemoteError
	switch {
	case errors.As(err, &re) && strings.HasPrefix(re.Msg, "unknown request"):
		e.Reason = fmt.Sprintf("the agent (%s) is older than CPU latency holds", c.Agent)
	case errors.As(err, &re):
		e.Reason = re.Msg
	case err != nil:
		e.Reason = err.Error()
	default:
		e.Held, e.AggregateUS = rep.Held, rep.AggregateUS
	}
	return e
}
