//go:build linux

package testmaria

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
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
	return NewAll(t, cfg)[0]
}

// NewAll starts a server per config as New does, all at once: a start
// spends seconds waiting on mariadb-install-db and InnoDB's files, and
// two servers started together are up well before two in a row.
func NewAll(t testing.TB, cfgs ...mariadb.Config) []*mariadb.Server {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: this test starts a MariaDB server")
	}
	if _, err := mariadb.Find(false); err != nil {
		t.Fatal(err)
	}
	for i := range cfgs {
		if cfgs[i].Dir == "" {
			base := t.TempDir()
			// t.TempDir's directories are root's, mode 0700: let the
			// server's user through to its own directories.
			for _, d := range []string{filepath.Dir(base), base} {
				if err := os.Chmod(d, 0o711); err != nil {
					t.Fatal(err)
				}
			}
			cfgs[i].Dir = filepath.Join(base, "mariadb")
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	servers, errs := make([]*mariadb.Server, len(cfgs)), make([]error, len(cfgs))
	var wg sync.WaitGroup
	for i := range cfgs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			servers[i], errs[i] = mariadb.Start(ctx, cfgs[i])
		}()
	}
	wg.Wait()
	for _, s := range servers {
		if s != nil {
			t.Cleanup(func() {
				if err := s.Stop(30 * time.Second); err != nil {
					t.Error(err)
				}
			})
		}
	}
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return servers
}
