//go:build linux

package pgserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/interlink/interlink/internal/runas"
)

// BinDirs are where Debian's (and PGDG's) packages put the server
// binaries, newest first; PATH is tried after them.
var BinDirs = []string{"/usr/lib/postgresql/17/bin", "/usr/lib/postgresql/16/bin", "/usr/lib/postgresql/15/bin"}

// ErrMissing says the PostgreSQL server binaries are not installed.
var ErrMissing = errors.New("PostgreSQL server not found (install it: apt-get update && apt-get install -y postgresql)")

// Find returns the directory holding initdb, pg_ctl and postgres.
func Find() (string, error) {
	for _, d := range BinDirs {
		if _, err := os.Stat(filepath.Join(d, "pg_ctl")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", ErrMissing
}

// Config is one server. DataDir is required; the zero value of every other
// field has a default.
type Config struct {
	BinDir     string // default Find()
	DataDir    string // created (mode 0700, owned by User) if missing
	SocketDir  string // default DataDir + "-run"; created like DataDir; holds the log too
	ListenAddr string // default 127.0.0.1
	Port       int    // default: a free TCP port on ListenAddr
	// User is the operating-system user the server runs as: default
	// "postgres" when running as root (PostgreSQL refuses root), else the
	// current user.
	User string
	// Password of the database superuser "postgres" (scram-sha-256 over
	// TCP; the Unix socket trusts local users). Default: random.
	Password string
	// HBA lines appended to pg_hba.conf (e.g. "host all all 198.18.0.0/16
	// scram-sha-256" for a lab network).
	HBA []string
	// Settings appended to postgresql.conf.
	Settings map[string]string
	// StartCmd starts each command the server is run with (initdb,
	// pg_ctl, pg_basebackup); default (*exec.Cmd).Start. A lab passes its
	// node's Start, so the commands and the server run in the node.
	StartCmd func(*exec.Cmd) error
}

// Server is a running server. Stop stops it by PID.
type Server struct {
	Config
	PID int
}

func (c *Config) defaults() error {
	if c.DataDir == "" {
		return errors.New("pgserver: DataDir is required")
	}
	if c.BinDir == "" {
		d, err := Find()
		if err != nil {
			return err
		}
		c.BinDir = d
	}
	if c.SocketDir == "" {
		c.SocketDir = c.DataDir + "-run"
	}
	if c.ListenAddr == "" {
		c.ListenAddr = "127.0.0.1"
	}
	if c.Port == 0 {
		p, err := FreePort(c.ListenAddr)
		if err != nil {
			return err
		}
		c.Port = p
	}
	if c.User == "" {
		u, err := runas.Default("postgres")
		if err != nil {
			return err
		}
		c.User = u
	}
	if c.Password == "" {
		b := make([]byte, 12)
		rand.Read(b)
		c.Password = hex.EncodeToString(b)
	}
	if c.StartCmd == nil {
		c.StartCmd = (*exec.Cmd).Start
	}
	return nil
}

// FreePort returns a TCP port free on addr at the time of the call.
func FreePort(addr string) (int, error) {
	p, err := runas.FreePort(addr)
	if err != nil {
		return 0, fmt.Errorf("pgserver: %w", err)
	}
	return p, nil
}

// run runs a server binary as c.User and returns its error with its output.
func (c *Config) run(ctx context.Context, env []string, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(c.BinDir, name), args...)
	if err := c.account().Apply(cmd); err != nil {
		return err
	}
	cmd.Env = append(append(os.Environ(), "LC_ALL=C"), env...)
	cmd.Dir = c.SocketDir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := c.StartCmd(cmd)
	if err == nil {
		err = cmd.Wait()
	}
	if err != nil {
		return fmt.Errorf("pgserver: %s: %w: %s", name, err, strings.Join(strings.Fields(out.String()), " "))
	}
	return nil
}

// account is the server's user, as pgserver's errors name it.
func (c *Config) account() runas.Account {
	return runas.Account{Name: c.User, Server: "pgserver"}
}

// mkdirs creates the data and socket directories owned by c.User.
func (c *Config) mkdirs() error {
	uid, gid, err := c.account().IDs()
	if err != nil {
		return err
	}
	for _, d := range []string{c.DataDir, c.SocketDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("pgserver: %w", err)
		}
		if err := os.Chown(d, uid, gid); err != nil {
			return fmt.Errorf("pgserver: %w", err)
		}
	}
	return nil
}

// InitDB creates a new cluster in c.DataDir (which must be empty or
// missing) with superuser "postgres" and the configuration to listen on
// ListenAddr:Port.
func InitDB(ctx context.Context, c *Config) error {
	if err := c.defaults(); err != nil {
		return err
	}
	if err := c.mkdirs(); err != nil {
		return err
	}
	// The password goes through a file only the server's user can read
	// (a pipe on stdin is root's and initdb cannot open /dev/stdin).
	uid, gid, err := c.account().IDs()
	if err != nil {
		return err
	}
	pw := filepath.Join(c.SocketDir, "pwfile")
	if err := os.WriteFile(pw, []byte(c.Password+"\n"), 0o600); err != nil {
		return fmt.Errorf("pgserver: %w", err)
	}
	defer os.Remove(pw)
	if err := os.Chown(pw, uid, gid); err != nil {
		return fmt.Errorf("pgserver: %w", err)
	}
	if err := c.run(ctx, nil, "initdb", "-D", c.DataDir, "-U", "postgres", "--pwfile="+pw,
		"--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--no-instructions"); err != nil {
		return err
	}
	return c.configure()
}

// configure appends the listen settings, c.Settings and c.HBA to the
// cluster's files (later lines win in postgresql.conf).
func (c *Config) configure() error {
	set := map[string]string{
		"listen_addresses":        "'" + c.ListenAddr + "'",
		"port":                    strconv.Itoa(c.Port),
		"unix_socket_directories": "'" + c.SocketDir + "'",
	}
	for k, v := range c.Settings {
		set[k] = v
	}
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	conf := "\n# interlink\n"
	for _, k := range keys {
		conf += k + " = " + set[k] + "\n"
	}
	if err := appendFile(filepath.Join(c.DataDir, "postgresql.conf"), conf); err != nil {
		return err
	}
	if len(c.HBA) > 0 {
		return appendFile(filepath.Join(c.DataDir, "pg_hba.conf"), "\n"+strings.Join(c.HBA, "\n")+"\n")
	}
	return nil
}

func appendFile(path, s string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("pgserver: %w", err)
	}
	_, err = f.WriteString(s)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Start starts the cluster in c.DataDir with pg_ctl (the server outlives
// this process, as a lab service must) and waits until it accepts
// connections. The log is SocketDir/postgres.log.
func Start(ctx context.Context, c Config) (*Server, error) {
	if err := c.defaults(); err != nil {
		return nil, err
	}
	if err := c.mkdirs(); err != nil {
		return nil, err
	}
	if err := c.run(ctx, nil, "pg_ctl", "start", "-w", "-t", "60", "-D", c.DataDir, "-l", c.LogFile()); err != nil {
		return nil, fmt.Errorf("%w (log %s)", err, c.LogFile())
	}
	pid, err := ReadPID(c.DataDir)
	if err != nil {
		return nil, err
	}
	return &Server{Config: c, PID: pid}, nil
}

// LogFile is where the server logs.
func (c *Config) LogFile() string { return filepath.Join(c.SocketDir, "postgres.log") }

// DSN is a postgres:// URL for database db as the superuser over TCP.
func (s *Server) DSN(db string) string {
	u := url.URL{Scheme: "postgres", User: url.UserPassword("postgres", s.Password),
		Host: net.JoinHostPort(s.ListenAddr, strconv.Itoa(s.Port)), Path: "/" + db, RawQuery: "sslmode=disable"}
	return u.String()
}

// Env is the libpq environment for the server's client tools (psql,
// pgbench, pg_basebackup) over TCP.
func (s *Server) Env() []string {
	return []string{"PGHOST=" + s.ListenAddr, "PGPORT=" + strconv.Itoa(s.Port), "PGUSER=postgres",
		"PGPASSWORD=" + s.Password, "PGSSLMODE=disable"}
}

// Stop stops the server by its postmaster's PID: a fast shutdown
// (SIGINT: sessions are ended, the WAL is flushed), then SIGKILL if it is
// still there after timeout. It returns when the process is gone.
func (s *Server) Stop(timeout time.Duration) error {
	return StopPID(s.DataDir, s.PID, timeout)
}

// ReadPID reads the postmaster's PID from dataDir/postmaster.pid.
func ReadPID(dataDir string) (int, error) {
	b, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		return 0, fmt.Errorf("pgserver: %w", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || pid <= 1 {
		return 0, fmt.Errorf("pgserver: %s/postmaster.pid: bad PID %q", dataDir, line)
	}
	return pid, nil
}

// StopPID stops the postmaster pid if it is still the server of dataDir
// (its command line names dataDir, so a reused PID is left alone).
func StopPID(dataDir string, pid int, timeout time.Duration) error {
	if !isPostmaster(pid, dataDir) {
		return nil
	}
	if err := syscall.Kill(pid, syscall.SIGINT); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("pgserver: stop %d: %w", pid, err)
	}
	if waitGone(pid, dataDir, timeout) {
		return nil
	}
	syscall.Kill(pid, syscall.SIGKILL)
	if waitGone(pid, dataDir, 10*time.Second) {
		return fmt.Errorf("pgserver: postmaster %d ignored a fast shutdown for %v and was killed", pid, timeout)
	}
	return fmt.Errorf("pgserver: postmaster %d does not exit", pid)
}

func waitGone(pid int, dataDir string, timeout time.Duration) bool {
	end := time.Now().Add(timeout)
	for time.Now().Before(end) {
		if !isPostmaster(pid, dataDir) {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// isPostmaster reports whether pid is a live (not zombie) process whose
// command line names dataDir.
func isPostmaster(pid int, dataDir string) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	if i := strings.LastIndexByte(string(stat), ')'); i < 0 || i+2 >= len(stat) || stat[i+2] == 'Z' {
		return false
	}
	cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return err == nil && strings.Contains(string(cmd), dataDir)
}

// StartStandby copies primary into c.DataDir with pg_basebackup -R -X
// stream (standby.signal and primary_conninfo written), gives it its own
// listen address, port and settings, and starts it. Set cluster_name in
// c.Settings to name it in the primary's pg_stat_replication.
func StartStandby(ctx context.Context, primary *Server, c Config) (*Server, error) {
	if err := c.defaults(); err != nil {
		return nil, err
	}
	if err := c.mkdirs(); err != nil {
		return nil, err
	}
	if err := c.run(ctx, primary.Env(), "pg_basebackup", "-D", c.DataDir, "-R", "-X", "stream", "-c", "fast"); err != nil {
		return nil, err
	}
	// The copy holds the primary's listen settings; later lines win.
	if err := c.configure(); err != nil {
		return nil, err
	}
	return Start(ctx, c)
}
