// Package storm generates a connection storm: N clients released at one
// instant from many source addresses, each connecting and logging on (plain
// TCP, PostgreSQL's startup and authentication, or MySQL's handshake and
// authentication), recording connect time,
// time to the first server byte and logon time, with errors by kind. It is
// what application servers do to a database when they start at once, and
// what `interlink gate` is there to absorb.
package storm

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"time"
)

// ErrSpec marks an invalid storm.
var ErrSpec = errors.New("storm: invalid request")

// Protocol is what a client does after connecting.
type Protocol string

// Protocols: TCP sends one line and waits for any reply; Postgres runs
// PostgreSQL's startup message and authentication until ReadyForQuery;
// MySQL reads the server's greeting and authenticates (MySQL, MariaDB,
// Galera) until the server's OK. MySQL's server speaks first: its first
// byte is the greeting, before any authentication.
const (
	TCP      Protocol = "tcp"
	Postgres Protocol = "postgres"
	MySQL    Protocol = "mysql"
)

// Spec describes a storm.
type Spec struct {
	Target   string   `json:"target"` // host:port
	Clients  int      `json:"clients"`
	Sources  []string `json:"sources,omitempty"` // local addresses to connect from, round-robin
	Protocol Protocol `json:"protocol"`
	// User, Password and Database for Postgres and MySQL.
	User     string `json:"user,omitempty"`
	Password string `json:"-"`
	Database string `json:"database,omitempty"`
	// Timeout bounds each client from the release to its logon.
	Timeout time.Duration `json:"timeout_ns"`
	// Hold keeps each logged-on connection open this long, as a
	// connection pool would (0: close at once).
	Hold time.Duration `json:"hold_ns"`
}

// Bounds of a storm.
const (
	MaxClients = 100_000
	MaxSources = 65_536
)

// Validate checks s and fills defaults.
func (s *Spec) Validate() error {
	bad := func(format string, a ...any) error { return fmt.Errorf("%w: %s", ErrSpec, fmt.Sprintf(format, a...)) }
	if s.Protocol == "" {
		s.Protocol = TCP
	}
	if s.Timeout == 0 {
		s.Timeout = 60 * time.Second
	}
	switch {
	case s.Target == "":
		return bad("no target address")
	case s.Clients < 1 || s.Clients > MaxClients:
		return bad("--clients %d: want 1 to %d", s.Clients, MaxClients)
	case len(s.Sources) > MaxSources:
		return bad("%d sources: at most %d", len(s.Sources), MaxSources)
	case s.Protocol != TCP && s.Protocol != Postgres && s.Protocol != MySQL:
		return bad("--protocol %q: want tcp, postgres or mysql", s.Protocol)
	case s.Protocol != TCP && s.User == "":
		return bad("--protocol %s needs --user", s.Protocol)
	case s.Protocol == TCP && (s.User != "" || s.Database != ""):
		return bad("--user and --database go with --protocol postgres or mysql (tcp has no logon)")
	case s.Timeout < 0 || s.Hold < 0 || s.Timeout > time.Hour || s.Hold > time.Hour:
		return bad("--timeout and --hold: want 0 to 1h")
	}
	// A target that can never be dialled is bad input, not a storm of
	// clients that all fail with "other" (exit 1).
	host, port, err := net.SplitHostPort(s.Target)
	if err != nil || host == "" {
		return bad("target %q: want HOST:PORT, e.g. 127.0.0.1:1521", s.Target)
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
		return bad("target %q: port %q: want 1 to 65535", s.Target, port)
	}
	target, terr := netip.ParseAddr(host)
	for _, src := range s.Sources {
		a, err := netip.ParseAddr(src)
		if err != nil {
			return bad("source %q is not an IP address", src)
		}
		if terr == nil && a.Unmap().Is4() != target.Unmap().Is4() {
			return bad("source %s and target %s are of different IP versions", src, host)
		}
	}
	return nil
}

// SourceRange returns n consecutive addresses starting at first (e.g.
// 127.0.0.2 and 50: 127.0.0.2 to 127.0.0.51).
func SourceRange(first string, n int) ([]string, error) {
	a, err := netip.ParseAddr(first)
	if err != nil {
		return nil, fmt.Errorf("%w: --source-base %q is not an IP address", ErrSpec, first)
	}
	if n < 1 || n > MaxSources {
		return nil, fmt.Errorf("%w: --sources %d: want 1 to %d", ErrSpec, n, MaxSources)
	}
	out := make([]string, 0, n)
	for i := 0; i < n; i++ {
		if !a.IsValid() {
			return nil, fmt.Errorf("%w: %d sources from %s run past the address space", ErrSpec, n, first)
		}
		out = append(out, a.String())
		a = a.Next()
	}
	return out, nil
}
