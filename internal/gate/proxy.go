package gate

import (
	"errors"
	"io"
	"net"
	"sync"
	"time"
)

// admit dials the upstream for w and proxies until both sides are done.
func (r *route) admit(w *waiter, upstream string, dialTimeout time.Duration) {
	r.m.wait.Observe(time.Since(w.arrived).Seconds())
	buf, gone := w.c.release()
	client := w.c.conn
	if gone {
		r.m.abandoned.Inc()
		r.doneHandshake()
		client.Close()
		return
	}
	r.proxy(client, buf, upstream, dialTimeout)
}

// proxy dials the upstream for an admitted client, forwards what the
// client sent while it waited (buf) and proxies until both sides are done.
// It ends the connection's in-flight handshake.
func (r *route) proxy(client *net.TCPConn, buf []byte, upstream string, dialTimeout time.Duration) {
	r.m.admitted.Inc()
	start := time.Now()
	c, err := net.DialTimeout("tcp", upstream, dialTimeout)
	r.m.dial.Observe(time.Since(start).Seconds())
	if err != nil {
		r.m.upstreamErrors.Inc()
		r.log.Warn("upstream dial", "route", r.cfg.Name, "upstream", upstream, "err", err)
		r.doneHandshake()
		client.Close()
		return
	}
	up := c.(*net.TCPConn)
	defer up.Close()
	defer client.Close()
	if len(buf) > 0 {
		if _, err := up.Write(buf); err != nil {
			r.doneHandshake()
			return
		}
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		io.Copy(up, client) // splice(2) between TCP sockets on Linux
		up.CloseWrite()
	}()
	// The handshake holds its in-flight slot until the upstream's first
	// byte (the server's answer to the logon) or the bound.
	first := make([]byte, 16<<10)
	up.SetReadDeadline(time.Now().Add(handshakeBound))
	n, err := up.Read(first)
	up.SetReadDeadline(time.Time{})
	r.doneHandshake()
	if n > 0 {
		if _, werr := client.Write(first[:n]); werr != nil {
			err = werr
		}
	}
	// Go on unless the upstream ended: an upstream that stayed silent
	// past the bound may simply wait for the client.
	if err == nil || isTimeout(err) {
		io.Copy(client, up)
	}
	client.CloseWrite()
	wg.Wait()
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
