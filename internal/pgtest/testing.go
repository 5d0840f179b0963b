//go:build linux

package pgtest

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/pgserver"
)

// Config, Server and FreePort are pgserver's, so tests need one import.
type (
	Config = pgserver.Config
	Server = pgserver.Server
)

// FreePort returns a TCP port free on addr at the time of the call.
func FreePort(addr string) (int, error) { return pgserver.FreePort(addr) }

// New initialises and starts a server for the test in t.TempDir on a free
// port of 127.0.0.1 (unless cfg says otherwise) and stops it by PID in
// t.Cleanup, before the directory is removed. A missing installation fails
// the test with the install command.
func New(t testing.TB, cfg Config) *Server {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: this test starts a PostgreSQL server")
	}
	if _, err := pgserver.Find(); err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	// t.TempDir's directories are root's, mode 0700: let the server's
	// user through to its own subdirectories.
	if err := os.Chmod(filepath.Dir(base), 0o711); err != nil {
		t.Fatal(err)
	}
	s, err := start(base, cfg)
	if err != nil {
		t.Fatal(err)
	}
	stopAtEnd(t, s)
	return s
}

// start initialises and starts a server in base (made passable to the
// server's user) on a free port of 127.0.0.1 unless cfg says otherwise.
func start(base string, cfg Config) (*Server, error) {
	if err := os.Chmod(base, 0o711); err != nil {
		return nil, err
	}
	if cfg.DataDir == "" {
		cfg.DataDir = filepath.Join(base, "data")
	}
	if cfg.SocketDir == "" {
		cfg.SocketDir = filepath.Join(base, "run")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := pgserver.InitDB(ctx, &cfg); err != nil {
		return nil, err
	}
	return pgserver.Start(ctx, cfg)
}

// NewStandby makes a streaming standby of primary with pg_basebackup -R
// -X stream over TCP, named name (its application_name in the primary's
// pg_stat_replication), and starts it like New. Make it synchronous with
// synchronous_standby_names = 'name' on the primary.
func NewStandby(t testing.TB, primary *Server, name string, cfg Config) *Server {
	t.Helper()
	base := t.TempDir()
	for _, d := range []string{filepath.Dir(base), base} {
		if err := os.Chmod(d, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	cfg.DataDir, cfg.SocketDir = filepath.Join(base, "data"), filepath.Join(base, "run")
	cfg.Password = primary.Password
	if cfg.Settings == nil {
		cfg.Settings = map[string]string{}
	}
	cfg.Settings["cluster_name"] = "'" + name + "'"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := pgserver.StartStandby(ctx, primary, cfg)
	if err != nil {
		t.Fatal(err)
	}
	stopAtEnd(t, s)
	return s
}

// stopAtEnd stops s by PID when t ends, before t's directories go.
func stopAtEnd(t testing.TB, s *Server) {
	t.Cleanup(func() {
		if err := s.Stop(30 * time.Second); err != nil {
			t.Error(err)
		}
	})
}
