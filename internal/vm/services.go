package vm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/interlink/interlink/internal/vm/channel"
)

// ErrNotAnswering is what Services returns when the guest did not answer
// before ctx ended: a guest that hangs or is stopped, or, asked on its
// command channel, one whose channel is held by a long command (commands
// to one guest run one after another; its status channel has none).
var ErrNotAnswering = errors.New("guest not answering")

// Services asks the guest whose status channel (Machine.Status, when
// Machine.ServesStatus) or command channel is sock about its services, one
// answer per probe in the same order. It waits until ctx
// ends at most (then ErrNotAnswering); the guest dials each address with a
// timeout of its own (guest.DialTimeout), so give ctx more than that.
func Services(ctx context.Context, sock string, probes []channel.ServiceProbe) ([]channel.ServiceAnswer, error) {
	c, err := call(ctx, sock, channel.Query, probes)
	if err != nil {
		return nil, err
	}
	defer c.conn.Close() // also ends the reader below when ctx ends first
	type result struct {
		answers []channel.ServiceAnswer
		err     error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		err := c.replies(func(f channel.Frame) bool {
			if f.Type != channel.Answer {
				return false
			}
			if err := json.Unmarshal(f.Payload, &r.answers); err != nil {
				r.err = fmt.Errorf("vm channel %s: bad answer: %w", sock, err)
			} else if len(r.answers) != len(probes) {
				r.err = fmt.Errorf("vm channel %s: %d answers to %d probes", sock, len(r.answers), len(probes))
			}
			return true
		})
		if errors.Is(err, ErrGuestProtocol) {
			r.err = err
		} else if err != nil {
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
