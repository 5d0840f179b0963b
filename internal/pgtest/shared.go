//go:build linux

package pgtest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/interlink/interlink/internal/pgserver"
)

// Shared is one server for the tests of a package that need a database
// but not a server of their own: initdb and the start take seconds each
// time. It starts at the first DB and lives in a directory of its own
// until Close, which the package's TestMain calls after m.Run (so it is
// stopped and removed whether the tests passed or not). Tests that change
// the server itself (its settings, a standby) use New.
type Shared struct {
	Config Config // the server's, as for New

	once sync.Once
	mu   sync.Mutex
	dir  string
	s    *Server
	err  error
	n    int
}

// DB creates a database of t's own in the shared server (started now if
// not yet) and returns the server and the database's name; the database
// is dropped when t ends.
func (sh *Shared) DB(t testing.TB) (*Server, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: this test uses a PostgreSQL server")
	}
	sh.once.Do(sh.start)
	if sh.err != nil {
		t.Fatalf("shared PostgreSQL server: %v", sh.err)
	}
	sh.mu.Lock()
	sh.n++
	name := fmt.Sprintf("t%d_%s", sh.n, strings.ToLower(strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())))
	sh.mu.Unlock()
	if len(name) > 63 { // PostgreSQL's limit on identifiers
		name = name[:63]
	}
	exec := func(sql string) error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		c, err := pgx.Connect(ctx, sh.s.DSN("postgres"))
		if err != nil {
			return err
		}
		defer c.Close(context.Background())
		_, err = c.Exec(ctx, sql)
		return err
	}
	ident := pgx.Identifier{name}.Sanitize()
	if err := exec("CREATE DATABASE " + ident); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := exec("DROP DATABASE " + ident + " WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	return sh.s, name
}

func (sh *Shared) start() {
	if _, sh.err = pgserver.Find(); sh.err != nil {
		return
	}
	if sh.dir, sh.err = os.MkdirTemp("", "testpg-shared-"); sh.err != nil {
		return
	}
	sh.s, sh.err = start(sh.dir, sh.Config)
}

// Close stops the server (if it was started) by PID and removes its
// directory.
func (sh *Shared) Close() error {
	var err error
	if sh.s != nil {
		err = sh.s.Stop(30 * time.Second)
	}
	if sh.dir != "" {
		if rerr := os.RemoveAll(sh.dir); err == nil {
			err = rerr
		}
	}
	return err
}
