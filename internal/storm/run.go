package storm

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/interlink/interlink/internal/counters"
)

// Client is one client's outcome; times are from the common release.
type Client struct {
	Source    string `json:"source,omitempty"`
	ConnectNs int64  `json:"connect_ns,omitempty"`    // TCP connect done
	FirstNs   int64  `json:"first_byte_ns,omitempty"` // first byte from the server
	LogonNs   int64  `json:"logon_ns,omitempty"`      // logged on (tcp: the reply)
	EndNs     int64  `json:"end_ns"`                  // logged on or failed
	Error     string `json:"error,omitempty"`         // kind, see Kinds
	Detail    string `json:"error_detail,omitempty"`
}

// Error kinds.
const (
	KindRefused    = "connection refused"
	KindReset      = "connection reset"
	KindClosed     = "closed by server before logon"
	KindTimeout    = "timeout"
	KindTooMany    = "too many connections"
	KindAuth       = "authentication failed"
	KindStarting   = "server starting or shutting down"
	KindOther      = "other"
	KindSourceAddr = "cannot bind source address"
)

// Run releases the storm and waits for every client (each bounded by
// spec.Timeout, then by spec.Hold).
func Run(ctx context.Context, spec Spec) (*Result, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	clients := make([]Client, spec.Clients)
	release := make(chan struct{})
	var ready, done sync.WaitGroup
	var t0 time.Time
	for i := range clients {
		ready.Add(1)
		done.Add(1)
		src := ""
		if len(spec.Sources) > 0 {
			src = spec.Sources[i%len(spec.Sources)]
		}
		go func(c *Client) {
			defer done.Done()
			c.Source = src
			ready.Done()
			<-release
			one(ctx, spec, c, t0)
		}(&clients[i])
	}
	ready.Wait()
	before, _ := counters.Take()
	t0 = time.Now()
	close(release)
	done.Wait()
	r := summarize(spec, t0, clients)
	if after, err := counters.Take(); err == nil && before != nil {
		d := counters.Sub(before, after)
		r.Kernel = kernelDelta(d.SNMP)
	}
	return r, nil
}

func one(ctx context.Context, spec Spec, c *Client, t0 time.Time) {
	ctx, cancel := context.WithTimeout(ctx, spec.Timeout)
	defer cancel()
	d := &net.Dialer{}
	if c.Source != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(c.Source)}
	}
	since := func() int64 { return time.Since(t0).Nanoseconds() }
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		c.ConnectNs = since()
		return &firstByte{Conn: conn, at: func() { c.FirstNs = since() }}, nil
	}
	var err error
	switch spec.Protocol {
	case Postgres:
		err = logonPG(ctx, spec, dial, c, since)
	case MySQL:
		err = logonMySQL(ctx, spec, dial, c, since)
	default:
		err = logonTCP(ctx, spec, dial, c, since)
	}
	if err != nil {
		c.Error, c.Detail = classify(err)
		c.EndNs = since()
	}
}

func logonTCP(ctx context.Context, spec Spec, dial func(context.Context, string, string) (net.Conn, error), c *Client, since func() int64) error {
	conn, err := dial(ctx, "tcp", spec.Target)
	if err != nil {
		return err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	if _, err := conn.Write([]byte("interlink storm\n")); err != nil {
		return err
	}
	if _, err := conn.Read(make([]byte, 1)); err != nil {
		return err
	}
	c.LogonNs = since()
	c.EndNs = c.LogonNs
	hold(ctx, spec.Hold)
	return nil
}

func logonPG(ctx context.Context, spec Spec, dial func(context.Context, string, string) (net.Conn, error), c *Client, since func() int64) error {
	host, port, err := net.SplitHostPort(spec.Target)
	if err != nil {
		return err
	}
	cfg, err := pgconn.ParseConfig("postgres://" + net.JoinHostPort(host, port) + "/?sslmode=disable")
	if err != nil {
		return err
	}
	cfg.User, cfg.Password, cfg.Database = spec.User, spec.Password, spec.Database
	cfg.DialFunc = dial
	cfg.Fallbacks = nil
	cfg.ConnectTimeout = spec.Timeout
	conn, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	c.LogonNs = since()
	c.EndNs = c.LogonNs
	hold(ctx, spec.Hold)
	closeCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn.Close(closeCtx)
	return nil
}

// logonMySQL runs MySQL's handshake and authentication (go-sql-driver:
// mysql_native_password, caching_sha2_password, ed25519 and the others it
// knows) until the server's OK.
func logonMySQL(ctx context.Context, spec Spec, dial func(context.Context, string, string) (net.Conn, error), c *Client, since func() int64) error {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.DBName = spec.User, spec.Password, spec.Database
	cfg.Net, cfg.Addr, cfg.DialFunc = "tcp", spec.Target, dial
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return err
	}
	dc, err := conn.Connect(ctx)
	if err != nil {
		return err
	}
	c.LogonNs = since()
	c.EndNs = c.LogonNs
	hold(ctx, spec.Hold)
	dc.Close()
	return nil
}

func hold(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// firstByte notes the time of the first byte the server sends.
type firstByte struct {
	net.Conn
	once sync.Once
	at   func()
}

func (f *firstByte) Read(b []byte) (int, error) {
	n, err := f.Conn.Read(b)
	if n > 0 {
		f.once.Do(f.at)
	}
	return n, err
}

// classify maps an error to its kind and a detail line.
func classify(err error) (kind, detail string) {
	detail = err.Error()
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "53300", "53400":
			return KindTooMany, detail
		case "28P01", "28000":
			return KindAuth, detail
		case "57P03":
			return KindStarting, detail
		}
		return KindOther, detail
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case 1040, 1203: // too many connections, max_user_connections
			return KindTooMany, detail
		case 1045, 1044, 1698: // access denied
			return KindAuth, detail
		case 1047, 1053: // WSREP not ready (a Galera node not synced), shutdown
			return KindStarting, detail
		}
		return KindOther, detail
	}
	var ne net.Error
	switch {
	case errors.Is(err, mysql.ErrInvalidConn):
		return KindClosed, detail
	case errors.Is(err, syscall.ECONNREFUSED):
		return KindRefused, detail
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return KindReset, detail
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return KindSourceAddr, detail
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return KindTimeout, detail
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return KindClosed, detail
	}
	return KindOther, detail
}

// kernelDelta picks the storm's counters from a delta.
func kernelDelta(t counters.Table) *Kernel {
	return &Kernel{ListenOverflows: t.Ptr("TcpExt", "ListenOverflows"), ListenDrops: t.Ptr("TcpExt", "ListenDrops"),
		SYNRetrans: t.Ptr("TcpExt", "TCPSynRetrans")}
}
