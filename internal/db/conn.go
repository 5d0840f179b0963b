package db

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// ErrConnect marks a failure to reach or log in to the server (before any
// load): unreachable address, refused login, missing database.
var ErrConnect = errors.New("db: connect")

// parseDSN parses a libpq DSN (URL or key=value) and applies the connect
// timeout unless the DSN sets one.
func parseDSN(spec Spec) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(spec.DSN)
	if err != nil {
		// pgconn's error redacts the password.
		return nil, errorf(ErrSpec, "--dsn: %v", cleanErr(err))
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = spec.ConnectTimeout
	}
	// The workload prepares its statements by name on each connection
	// (pgbench -M prepared); the monitor's few queries need no cache.
	cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
	cfg.StatementCacheCapacity = 0
	cfg.DescriptionCacheCapacity = 0
	return cfg, nil
}

func connect(ctx context.Context, cfg *pgx.ConnConfig) (*pgx.Conn, error) {
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, errorf(ErrConnect, "%s", connectHint(cfg, err))
	}
	return c, nil
}

// connectHint turns pgx's connect error into one line that says what to
// fix: the server's message for refused logins and missing databases.
func connectHint(cfg *pgx.ConnConfig, err error) string {
	var pe *pgconn.PgError
	where := fmt.Sprintf("database %q as user %q on %s", cfg.Database, cfg.User, net.JoinHostPort(cfg.Host, fmt.Sprint(cfg.Port)))
	if errors.As(err, &pe) {
		return where + ": " + serverHint(pe)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		// A port that accepts and never answers: pgx lists "tls error:
		// timeout" and "dial error: timeout" for the two attempts of
		// sslmode=prefer, which reads as a TLS or network fault.
		return fmt.Sprintf("%s: no answer within %s (connect timeout; is a PostgreSQL server listening there?)", where, cfg.ConnectTimeout)
	}
	// pgx tries each address (and with sslmode=prefer, TLS then plain)
	// and lists every attempt on its own line: keep each distinct one.
	var parts []string
	seen := map[string]bool{}
	for _, l := range strings.Split(err.Error(), "\n") {
		if l = strings.Join(strings.Fields(l), " "); l != "" && !seen[l] {
			seen[l] = true
			parts = append(parts, l)
		}
	}
	if len(parts) > 1 && strings.HasSuffix(parts[0], ":") {
		return parts[0] + " " + strings.Join(parts[1:], "; ")
	}
	return strings.Join(parts, "; ")
}

func serverHint(pe *pgconn.PgError) string {
	switch pe.Code {
	case "28P01", "28000":
		return fmt.Sprintf("login refused: %s (check the user and password in --dsn, or the server's pg_hba.conf)", pe.Message)
	case "3D000":
		return fmt.Sprintf("%s (create it, or name another database in --dsn)", pe.Message)
	case "53300":
		return fmt.Sprintf("%s (lower --clients or raise max_connections)", pe.Message)
	}
	return fmt.Sprintf("%s (SQLSTATE %s)", pe.Message, pe.Code)
}

// cleanErr returns err's text on one line.
func cleanErr(err error) string {
	if err == nil {
		return "unknown error"
	}
	return strings.Join(strings.Fields(err.Error()), " ")
}

// Failure reasons a transaction error is counted under.
const (
	reasonSerialization = iota
	reasonDeadlock
	reasonConnection
	reasonOther
)

// classify says why a transaction failed, and whether the connection is
// gone (then the client must reconnect).
func classify(c *pgx.Conn, err error) (reason int, lost bool) {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "40001":
			return reasonSerialization, false
		case pe.Code == "40P01":
			return reasonDeadlock, false
		case strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03":
			return reasonConnection, true
		}
		return reasonOther, c.IsClosed()
	}
	var ne net.Error
	if c.IsClosed() || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &ne) {
		return reasonConnection, true
	}
	return reasonOther, false
}
