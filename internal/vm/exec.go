package vm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"syscall"
	"time"
)

// Exec runs req in the guest whose command channel is the unix socket sock
// (Machine.Channel), copies its output to stdout and stderr, and returns
// its exit code (128+N when signal N ended it). The guest's end is one
// serial line: while another Exec holds it, this one waits its turn. When
// ctx ends, the command gets SIGTERM and Exec returns ctx's error after its
// exit, or after 5 s. The command's stdin is /dev/null.
func Exec(ctx context.Context, sock string, req Request, stdout, stderr io.Writer) (int, error) {
	c, err := call(ctx, sock, frameRequest, req)
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
		err := c.replies(func(f frame) bool {
			switch f.typ {
			case frameStdout:
				stdout.Write(f.payload)
			case frameStderr:
				stderr.Write(f.payload)
			case frameExit:
				var x exitFrame
				if err := json.Unmarshal(f.payload, &x); err != nil {
					r.err = fmt.Errorf("vm channel: bad exit frame: %w", err)
				} else if r.code = x.Code; x.Error != "" {
					r.err = fmt.Errorf("in the guest: %s", x.Error)
				}
				return true
			}
			return false
		})
		if err != nil {
			r.err = fmt.Errorf("vm channel %s: closed before the command ended (did the guest stop?)", sock)
		}
		done <- r
	}()
	select {
	case r := <-done:
		return r.code, r.err
	case <-ctx.Done():
	}
	c.fw.send(frame{typ: frameSignal, id: c.id, payload: []byte{byte(syscall.SIGTERM)}})
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
	return 0, ctx.Err()
}

// channelCall is one request on a guest's command channel: the host's
// connection to it and the id the guest's frames for it carry.
type channelCall struct {
	conn net.Conn
	fw   *frameWriter
	id   uint32
}

// call connects to the command channel sock and sends body, as JSON, in a
// frame of type typ with a fresh id. The caller closes c.conn.
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
	c := &channelCall{conn: conn, fw: &frameWriter{w: conn}, id: rand.Uint32() | 1}
	if err := c.fw.send(frame{typ: typ, id: c.id, payload: payload}); err != nil {
		conn.Close()
		return nil, fmt.Errorf("vm channel %s: %w", sock, err)
	}
	return c, nil
}

// replies hands the guest's frames for this call to fn until fn says it
// has the last one (nil) or the line closes (an error). Frames of other
// ids (a previous caller's command, still talking) are skipped.
func (c *channelCall) replies(fn func(frame) (last bool)) error {
	r := newFrameReader(c.conn)
	for {
		f, err := r.next()
		if err != nil {
			return err
		}
		if f.id == c.id && fn(f) {
			return nil
		}
	}
}
