package service

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/interlink/interlink/internal/pgserver"
)

// Postgres is a PostgreSQL server of a lab node. Its data is Dir/data and
// its socket directory and log Dir/run; Dir itself must be reachable by
// the postgres user (mode 0711 on the way to it).
type Postgres struct {
	Dir      string
	Name     string       // cluster_name: a standby's application_name on its primary
	Listen   []netip.Addr // listen_addresses: the node's lab addresses
	Port     int
	Password string // of the superuser "postgres"
	// Networks are allowed to connect (and replicate) with the password.
	Networks []netip.Prefix
	Settings map[string]string
}

// DataDir returns where a server of dir keeps its data.
func DataDir(dir string) string { return filepath.Join(dir, "data") }

// LogFile returns where a server of dir logs.
func LogFile(dir string) string { return filepath.Join(dir, "run", "postgres.log") }

func (p Postgres) config(start StartFunc) pgserver.Config {
	listen := make([]string, len(p.Listen))
	for i, a := range p.Listen {
		listen[i] = a.String()
	}
	var hba []string
	for _, n := range p.Networks {
		hba = append(hba, "host all all "+n.String()+" scram-sha-256", "host replication all "+n.String()+" scram-sha-256")
	}
	set := map[string]string{"cluster_name": "'" + p.Name + "'"}
	for k, v := range p.Settings {
		set[k] = v
	}
	return pgserver.Config{
		DataDir: DataDir(p.Dir), SocketDir: filepath.Join(p.Dir, "run"),
		ListenAddr: strings.Join(listen, ","), Port: p.Port, Password: p.Password,
		HBA: hba, Settings: set, StartCmd: start,
	}
}

// prepare creates Dir (root's, 0711) for the postgres user's directories.
func (p Postgres) prepare() error {
	if err := os.MkdirAll(p.Dir, 0o711); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	return os.Chmod(p.Dir, 0o711)
}

// StartPrimary initialises a new cluster in Dir and starts it; it
// returns when the server accepts connections.
func StartPrimary(ctx context.Context, p Postgres, start StartFunc) (pid int, err error) {
	if err := p.prepare(); err != nil {
		return 0, err
	}
	c := p.config(start)
	if err := pgserver.InitDB(ctx, &c); err != nil {
		return 0, err
	}
	s, err := pgserver.Start(ctx, c)
	if err != nil {
		return 0, err
	}
	return s.PID, nil
}

// StartStandby copies the primary at primary (its address on the switch
// replication crosses) with pg_basebackup -R -X stream, run in the
// standby's node so the copy crosses the lab link, and starts it as a
// streaming standby.
func StartStandby(ctx context.Context, p Postgres, primary netip.AddrPort, start StartFunc) (pid int, err error) {
	if err := p.prepare(); err != nil {
		return 0, err
	}
	c := p.config(start)
	from := &pgserver.Server{Config: pgserver.Config{ListenAddr: primary.Addr().String(), Port: int(primary.Port()), Password: p.Password}}
	s, err := pgserver.StartStandby(ctx, from, c)
	if err != nil {
		return 0, err
	}
	return s.PID, nil
}

// PostgresPID returns the postmaster's PID of the server in dir, from
// recorded (when not 0) or its postmaster.pid, if it is running.
func PostgresPID(dir string, recorded int) int {
	pid := recorded
	if pid == 0 {
		pid, _ = pgserver.ReadPID(DataDir(dir))
	}
	if pid > 0 && Alive(pid, DataDir(dir)) {
		return pid
	}
	return 0
}

// StopPostgres stops the server in dir (fast shutdown, then SIGKILL after
// timeout) if it runs; a PID that is not its postmaster is left alone.
func StopPostgres(dir string, recorded int, timeout time.Duration) error {
	pid := PostgresPID(dir, recorded)
	if pid == 0 {
		return nil
	}
	return pgserver.StopPID(DataDir(dir), pid, timeout)
}

// DSN is the postgres:// URL of the superuser's database at addr:port.
func DSN(addr netip.Addr, port int, password string) string {
	return "postgres://postgres:" + password + "@" + net.JoinHostPort(addr.String(), strconv.Itoa(port)) + "/postgres?sslmode=disable"
}

// WaitStreaming waits until the primary at primary lists the standby name
// in pg_stat_replication as streaming and, when sync, as its synchronous
// standby: only then do commits wait for it. dial connects from a lab node.
// It gives up when ctx ends or after 30 s, saying what it last saw.
func WaitStreaming(ctx context.Context, primary netip.AddrPort, password, name string, sync bool, dial DialFunc) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cfg, err := pgx.ParseConfig(DSN(primary.Addr(), int(primary.Port()), password))
	if err != nil {
		return err
	}
	cfg.DialFunc = pgconn.DialFunc(dial)
	cfg.ConnectTimeout = 5 * time.Second
	last := "not listed"
	for {
		if c, err := pgx.ConnectConfig(ctx, cfg); err != nil {
			last = err.Error()
		} else {
			var state, syncState string
			err := c.QueryRow(ctx, `SELECT state, sync_state FROM pg_stat_replication WHERE application_name = $1`, name).Scan(&state, &syncState)
			c.Close(context.WithoutCancel(ctx))
			switch {
			case err == nil && state == "streaming" && (!sync || syncState == "sync"):
				return nil
			case err == nil:
				last = state + ", " + syncState
			case !errors.Is(err, pgx.ErrNoRows):
				last = err.Error()
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("standby %s is not streaming from %s within 30s (pg_stat_replication: %s)", name, primary, last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
