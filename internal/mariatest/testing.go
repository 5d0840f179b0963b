//go:build linux

package mariatest

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/mariadb"
)

// New starts a standalone server for the test (its account and database
// made, see mariadb.Config) in t.TempDir and stops it by PID in t.Cleanup,
// before the directory is removed. A missing installation fails the test
// with the install command.
func New(t testing.TB, cfg mariadb.Config) *mariadb.Server {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: this test starts a MariaDB server")
	}
	if _, err := mariadb.Find(false); err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	// t.TempDir's directories are root's, mode 0700: let the server's
	// user through to its own directories.
	for _, d := range []string{filepath.Dir(base), base} {
		if err := os.Chmod(d, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	if cfg.Dir == "" {
		cfg.Dir = filepath.Join(base, "mariadb")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := mariadb.Start(ctx, cfg)
	if s != nil {
		t.Cleanup(func() {
			if err := s.Stop(30 * time.Second); err != nil {
				t.Error(err)
			}
		})
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}
