package mesh

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/interlink/interlink/internal/agent"
	"github.com/interlink/interlink/internal/pmtu"
)

// One pair of nodes: its session, its paths' results, and the failures
// that do not make a node dead.

// pair asks a's agent, over one session, to test the paths to b on every
// network both have, and returns how long the searches only waited out
// probe timeouts. An agent that stops answering during the run is marked
// unreachable once, and none of its later pairs is tried.
func (r *run) pair(a, b int) (waited time.Duration) {
	r.mu.Lock()
	dead := r.down[a] || r.down[b]
	r.mu.Unlock()
	if dead {
		r.skip(a, b, SkipUnreachable, nil)
		r.add(nil, true)
		return
	}
	c, at := r.pool.get(a)
	var err error
	if c == nil {
		at = time.Now()
		c, err = r.dial(r.nodes[a])
		if agent.Timeout(err) && !r.stopped() {
			// It answered at contact: one dial without an answer in
			// time may be either side descheduled for seconds (a node
			// at full CPU), not a dead agent. Ask once more.
			c, err = r.dial(r.nodes[a])
		}
	}
	if err != nil {
		switch {
		case r.stopped():
			r.skip(a, b, SkipStopped, nil)
		case alive(err):
			// It answered: a full agent, or one that heard this host's
			// handshake too late twice, is a failure of these paths,
			// not a dead node.
			var out []Path
			for _, p := range r.paths(a, b) {
				p.Error = err.Error()
				out = append(out, r.expect(p))
			}
			r.add(out, false)
		default:
			r.mu.Lock()
			r.markDownLocked(a, err, true)
			r.mu.Unlock()
			r.skip(a, b, SkipUnreachable, nil)
		}
		r.add(nil, true)
		return
	}
	reuse := true // the session served every call: the next pair of a may have it
	defer func() {
		if reuse && !r.stopped() {
			r.pool.put(a, c, at)
		} else {
			c.Close()
		}
	}()
	A, B := r.nodes[a], r.nodes[b]
	ps := r.paths(a, b)
	for k := 0; k < len(ps); k += 2 {
		fwd, rev := &ps[k], &ps[k+1]
		i := fwd.Network - 1
		var results []pmtu.Result
		err := c.Call(r.ctx, agent.KindPMTUPeer, agent.PMTUPeer{
			Agent: B.Agent, Target: B.Addrs[i].String(), Source: A.Addrs[i].String(), Options: r.opt.Probe,
		}, &results)
		reuse = reuse && err == nil
		waited += r.record(fwd, rev, results, err)
	}
	r.add(ps, true)
	return waited
}

// record puts one network's results of a pair (or the error that cut
// them) into its paths fwd and rev, and returns how long the searches only
// waited: the longer of the two, as the directions run at once.
func (r *run) record(fwd, rev *Path, results []pmtu.Result, err error) (waited time.Duration) {
	for _, res := range results {
		waited = max(waited, res.Waited)
		switch res.Direction {
		case pmtu.Forward:
			fwd.Result = res
		case pmtu.Reverse:
			rev.Result = res
		}
	}
	for _, p := range []*Path{fwd, rev} {
		switch {
		case p.Verdict != "":
		case r.stopped():
			p.Skipped = SkipStopped
			p.Error = "not measured: " + context.Cause(r.ctx).Error()
		case err != nil:
			p.Error = err.Error()
		default:
			p.Error = "not measured"
		}
		*p = r.expect(*p)
	}
	return waited
}

// alive reports a refusal that shows the agent alive: it is full, or this
// host's handshake came too late.
func alive(err error) bool {
	var re *agent.RefusedError
	return errors.As(err, &re) && strings.Contains(re.Reason, "busy") || late(err)
}

// late reports an agent's refusal of this host's handshake as too late.
func late(err error) bool {
	var re *agent.RefusedError
	return errors.As(err, &re) && re.Late()
}
