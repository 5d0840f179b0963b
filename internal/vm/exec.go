package vm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"syscall"
	"time"

	"github.com/interlink/interlink/internal/vm/channel"
)

// ErrGuestProtocol marks a guest that speaks another channel protocol than
// this binary (an interlink from before or after this one booted it).
var ErrGuestProtocol = errors.New("the guest speaks another channel protocol")

// Exec runs cmd in the guest whose command channel is the unix socket
// sock (Machine.Channel), copies its output to stdout and stderr, and
// returns its exit code (128+N when signal N ended it). The guest's end is
// one serial line: while another Exec holds it, this one waits its turn.
// When ctx ends, the command gets SIGTERM and Exec returns ctx's error
// after its exit, or after 5 s. The command's stdin is /dev/null.
func Exec(ctx context.Context, sock string, cmd channel.Command, stdout, stderr io.Writer) (int, error) {
	c, err := call(ctx, sock, channel.Request, cmd)
	if err != nil {
		return 0, err
	}
	defer c.conn.Close()
	type result struct {
		code int
		err  error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		err := c.replies(func(f channel.Frame) bool {
			switch f.Type {
			case channel.Stdout:
				stdout.Write(f.Payload)
			case channel.Stderr:
				stderr.Write(f.Payload)
			case channel.Exit:
				var x channel.ExitBody
				if err := json.Unmarshal(f.Payload, &x); err != nil {
					r.err = fmt.Errorf("vm channel: bad exit frame: %w", err)
				} else if r.code = x.Code; x.Error != "" {
					r.err = fmt.Errorf("in the guest: %s", x.Error)
				}
				return true
			}
			return false
		})
		if errors.Is(err, ErrGuestProtocol) {
			r.err = err
		} else if err != nil {
			r.err = fmt.Errorf("vm channel %s: closed before the command ended (did the guest stop?)", sock)
		}
		done <- r
	}()
	select {
	case r := <-done:
		return r.code, r.err
	case <-ctx.Done():
	}
	c.fw.Send(channel.Frame{Type: channel.Signal, ID: c.id, Payload: []byte{byte(syscall.SIGTERM)}})
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
	return 0, ctx.Err()
}

// channelCall is one call on a guest's channel: the host's connection to
// it and the id the guest's frames for it carry.
type channelCall struct {
	conn   net.Conn
	fw     *channel.Writer
	r      *channel.Reader
	hello  uint32 // the id of the Hello that opens the call
	id     uint32
	typ    byte // of the call's frame
	sock   string
	called []byte // the call's payload, sent once the guest said hello (nil: sent with it)
}

// call connects to the channel sock, opens the call with a Hello and
// sends body, as JSON, in a frame of type typ with an id of its own: a
// Request once the guest has said hello (replies does), a Query at once.
// The caller closes c.conn.
//
// The Hello goes with an empty Query of the same id: a guest from before
// the hello ignores the Hello and answers the Query, which names it as
// such (ErrGuestProtocol) before any command is sent to it.
func call(ctx context.Context, sock string, typ byte, body any) (*channelCall, error) {
	payload, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("vm channel: %w", err)
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", sock)
	if err != nil {
		return nil, fmt.Errorf("vm channel %s: %w", sock, err)
	}
	c := &channelCall{conn: conn, fw: channel.NewWriter(conn), r: channel.NewReader(conn), sock: sock,
		hello: rand.Uint32() | 1, id: rand.Uint32() | 1, typ: typ, called: payload}
	for c.id == c.hello {
		c.id = rand.Uint32() | 1
	}
	hello, _ := channel.JSON(channel.Hello, c.hello, channel.HelloBody{Version: channel.Version})
	opening := channel.Append(channel.Append(nil, hello), channel.Frame{Type: channel.Query, ID: c.hello, Payload: []byte("[]")})
	if typ == channel.Query {
		// A query changes nothing in the guest, whatever its protocol:
		// it goes at once, without waiting for the guest's hello (one
		// round trip on a slow line, for lab status).
		opening = channel.Append(opening, channel.Frame{Type: typ, ID: c.id, Payload: payload})
		c.called = nil
	}
	if _, err := conn.Write(opening); err != nil {
		conn.Close()
		return nil, fmt.Errorf("vm channel %s: %w", sock, err)
	}
	return c, nil
}

// replies waits for the guest's Hello, sends the call, and hands the
// guest's frames for it to fn until fn says it has the last one (nil) or
// the line closes (an error). Frames of other ids (a previous caller's
// command, still talking, or the answer to the Hello's empty Query) are
// skipped. A guest that answers the Query first does not know the Hello:
// ErrGuestProtocol, and the call is not sent.
func (c *channelCall) replies(fn func(channel.Frame) (last bool)) error {
	for greeted := false; ; {
		f, err := c.r.Next()
		if err != nil {
			return err
		}
		switch {
		case greeted && f.ID == c.id:
			if fn(f) {
				return nil
			}
		case greeted || f.ID != c.hello:
		case f.Type == channel.Answer:
			return fmt.Errorf("vm channel %s: %w (version 0, from an interlink before the hello, while this one speaks version %d): restart the lab (lab down, lab up) to boot its VMs with this binary", c.sock, ErrGuestProtocol, channel.Version)
		case f.Type == channel.Hello:
			var h channel.HelloBody
			if err := json.Unmarshal(f.Payload, &h); err != nil || h.Version != channel.Version {
				return fmt.Errorf("vm channel %s: %w (version %d, this interlink speaks %d): restart the lab (lab down, lab up) to boot its VMs with this binary", c.sock, ErrGuestProtocol, h.Version, channel.Version)
			}
			greeted = true
			if c.called == nil {
				continue // sent with the hello
			}
			if err := c.fw.Send(channel.Frame{Type: c.typ, ID: c.id, Payload: c.called}); err != nil {
				return err
			}
		}
	}
}
