//go:build linux

package pgserver

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

func TestStartStop(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: this test starts a PostgreSQL server") // as pgtest.New does
	}
	base := t.TempDir()
	for _, d := range []string{filepath.Dir(base), base} {
		if err := os.Chmod(d, 0o711); err != nil { // the postgres user's way in
			t.Fatal(err)
		}
	}
	cfg := Config{DataDir: filepath.Join(base, "data"), Settings: map[string]string{"fsync": "off"}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := InitDB(ctx, &cfg); err != nil {
		t.Fatal(err)
	}
	s, err := Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop(30 * time.Second) })
	if !isPostmaster(s.PID, s.DataDir) {
		t.Fatalf("postmaster %d of %s not running", s.PID, s.DataDir)
	}
	c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port)))
	if err != nil {
		t.Fatalf("server not listening on its port: %v", err)
	}
	c.Close()
	if _, err := os.Stat(filepath.Join(s.SocketDir, ".s.PGSQL."+strconv.Itoa(s.Port))); err != nil {
		t.Errorf("no socket in its own directory: %v", err)
	}
	// A PID that is not this data directory's postmaster is left alone.
	if err := StopPID("/nonexistent", s.PID, time.Second); err != nil || !isPostmaster(s.PID, s.DataDir) {
		t.Fatalf("StopPID with another data directory: %v, running %v", err, isPostmaster(s.PID, s.DataDir))
	}
	if err := s.Stop(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	if isPostmaster(s.PID, s.DataDir) {
		t.Fatal("postmaster still running after Stop")
	}
	if _, err := os.Stat(filepath.Join(s.DataDir, "postmaster.pid")); !os.IsNotExist(err) {
		t.Errorf("postmaster.pid left behind after a clean stop: %v", err)
	}
	// Stopping again (t.Cleanup will) is a no-op; the data survives a restart.
	if err := s.Stop(time.Second); err != nil {
		t.Fatal(err)
	}
	s2, err := Start(ctx, s.Config)
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.Stop(30 * time.Second); err != nil {
		t.Fatal(err)
	}
}
