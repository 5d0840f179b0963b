package vm

import (
	"bufio"
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
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", sock)
	if err != nil {
		return 0, fmt.Errorf("vm channel %s: %w", sock, err)
	}
	defer conn.Close()
	fw := &frameWriter{w: conn}
	id := rand.Uint32() | 1
	body, err := json.Marshal(req)
	if err != nil {
		return 0, fmt.Errorf("vm channel: %w", err)
	}
	if err := fw.send(frame{typ: frameRequest, id: id, payload: body}); err != nil {
		return 0, fmt.Errorf("vm channel %s: %w", sock, err)
	}
	type result struct {
		code int
		err  error
	}
	done := make(chan result, 1)
	go func() {
		r := bufio.NewReaderSize(conn, 1<<16)
		for {
			f, err := readFrame(r)
			if err != nil {
				done <- result{err: fmt.Errorf("vm channel %s: closed before the command ended (did the guest stop?)", sock)}
				return
			}
			if f.id != id {
				continue // a previous caller's command
			}
			switch f.typ {
			case frameStdout:
				stdout.Write(f.payload)
			case frameStderr:
				stderr.Write(f.payload)
			case frameExit:
				var x exitFrame
				if err := json.Unmarshal(f.payload, &x); err != nil {
					done <- result{err: fmt.Errorf("vm channel: bad exit frame: %w", err)}
					return
				}
				if x.Error != "" {
					done <- result{code: x.Code, err: fmt.Errorf("in the guest: %s", x.Error)}
					return
				}
				done <- result{code: x.Code}
				return
			}
		}
	}()
	select {
	case r := <-done:
		return r.code, r.err
	case <-ctx.Done():
	}
	fw.send(frame{typ: frameSignal, id: id, payload: []byte{byte(syscall.SIGTERM)}})
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
	return 0, ctx.Err()
}
