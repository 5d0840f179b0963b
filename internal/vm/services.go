package vm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/interlink/interlink/internal/lab/topology"
)

// The services a guest starts: the service kinds of a topology, whose
// names the lab asks about (ServiceProbe.Kind).
const (
	ServiceAgent = topology.KindAgent // interlink agent (GuestConfig.AgentPort)
	ServiceSSHD  = topology.KindSSHD  // OpenSSH's sshd on port 22 (GuestConfig.SSHD)
)

// ServiceProbe asks the guest about one of its services: whether the
// process it started lives, and whether something answers a TCP connect
// to Address (host:port, dialled from inside the guest).
type ServiceProbe struct {
	Kind    string `json:"kind"` // ServiceAgent or ServiceSSHD
	Address string `json:"address"`
}

// ServiceAnswer is the guest's answer for one ServiceProbe.
type ServiceAnswer struct {
	Kind string `json:"kind"`
	// PID is the service's process in the guest, as started; 0 when the
	// guest did not start this kind.
	PID int `json:"pid,omitempty"`
	// Alive: the process has not exited. Listening: a connect to the
	// probe's Address was taken (only tried while Alive).
	Alive     bool `json:"alive"`
	Listening bool `json:"listening"`
	// Error is why the connect failed, or that the guest did not start
	// the service at all.
	Error string `json:"error,omitempty"`
}

// ErrNotAnswering is what Services returns when the guest did not answer
// before ctx ended: a guest that hangs or is stopped, or, asked on its
// command channel, one whose channel is held by a long command (commands
// to one guest run one after another; its status channel has none).
var ErrNotAnswering = errors.New("guest not answering")

// Services asks the guest whose status channel (Machine.Status, when
// Machine.ServesStatus) or command channel is sock about its services, one
// answer per probe in the same order. It waits until ctx
// ends at most (then ErrNotAnswering); the guest dials each address with a
// timeout of its own (guestDialTimeout), so give ctx more than that.
func Services(ctx context.Context, sock string, probes []ServiceProbe) ([]ServiceAnswer, error) {
	c, err := call(ctx, sock, frameQuery, probes)
	if err != nil {
		return nil, err
	}
	defer c.conn.Close() // also ends the reader below when ctx ends first
	type result struct {
		answers []ServiceAnswer
		err     error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		err := c.replies(func(f frame) bool {
			if f.typ != frameAnswer {
				return false
			}
			if err := json.Unmarshal(f.payload, &r.answers); err != nil {
				r.err = fmt.Errorf("vm channel %s: bad answer: %w", sock, err)
			} else if len(r.answers) != len(probes) {
				r.err = fmt.Errorf("vm channel %s: %d answers to %d probes", sock, len(r.answers), len(probes))
			}
			return true
		})
		if err != nil {
			r.err = fmt.Errorf("vm channel %s: closed before the guest answered (did it stop?)", sock)
		}
		done <- r
	}()
	select {
	case r := <-done:
		return r.answers, r.err
	case <-ctx.Done():
		return nil, fmt.Errorf("vm channel %s: %w: %w", sock, ErrNotAnswering, ctx.Err())
	}
}
