package gate

import (
	"errors"
	"net"
	"os"
	"sync"
	"time"
)

// clientConn is an accepted client while it waits: one goroutine reads
// what the client sends into a bounded buffer (to forward once admitted)
// and notices when the client gives up.
type clientConn struct {
	conn     *net.TCPConn
	max      int
	mu       sync.Mutex
	buf      []byte
	stopping bool
	gone     bool
	stop     chan struct{}
	done     chan struct{}
	onGone   func()
}

func newClientConn(conn *net.TCPConn, max int, onGone func()) *clientConn {
	c := &clientConn{conn: conn, max: max, stop: make(chan struct{}), done: make(chan struct{}), onGone: onGone}
	go c.watch()
	return c
}

func (c *clientConn) watch() {
	defer close(c.done)
	tmp := make([]byte, 16<<10)
	for {
		c.mu.Lock()
		full := len(c.buf) >= c.max
		c.mu.Unlock()
		if full {
			// Stop reading: TCP flow control holds what the client sends
			// next. A client that gives up now is noticed when admitted.
			<-c.stop
			return
		}
		n, err := c.conn.Read(tmp[:min(len(tmp), c.max-len(c.buf))])
		c.mu.Lock()
		c.buf = append(c.buf, tmp[:n]...)
		stopping := c.stopping
		c.mu.Unlock()
		if err != nil {
			if stopping && errors.Is(err, os.ErrDeadlineExceeded) {
				return
			}
			c.mu.Lock()
			c.gone = true
			c.mu.Unlock()
			if !stopping && c.onGone != nil {
				c.onGone()
			}
			return
		}
	}
}

// release ends the waiting: it stops the reader and returns what the
// client sent meanwhile and whether the client is gone.
func (c *clientConn) release() (buf []byte, gone bool) {
	c.mu.Lock()
	c.stopping = true
	c.mu.Unlock()
	close(c.stop)
	c.conn.SetReadDeadline(time.Now())
	<-c.done
	c.conn.SetReadDeadline(time.Time{})
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf, c.gone
}
