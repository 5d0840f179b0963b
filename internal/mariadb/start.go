//go:build linux

package mariadb

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
)

// StartTimeout bounds Start's wait for the server (a joiner's state
// transfer included) unless ctx ends sooner.
const StartTimeout = 2 * time.Minute

func init() {
	// The driver logs lost connections to stderr by itself; interlink
	// reports what it sees in its own words.
	mysql.SetLogger(log.New(io.Discard, "", 0))
}

// Start prepares Dir, creates a new data directory for a standalone or
// bootstrapping server (a joiner's comes by state transfer), starts
// mariadbd as the server's user in its own session (it outlives the
// caller) and waits until it is ready: it takes logins and, in a cluster,
// is Synced in a primary component. It returns the Server, with its PID
// also when the wait fails (the caller stops it).
func Start(ctx context.Context, c Config) (*Server, error) {
	if err := c.defaults(); err != nil {
		return nil, err
	}
	bins, err := Find(c.Galera != nil)
	if err != nil {
		return nil, err
	}
	if err := c.prepare(bins); err != nil {
		return nil, err
	}
	creator := c.Galera == nil || c.Galera.Bootstrap
	args := []string{"--defaults-file=" + confFile(c.Dir)}
	if creator {
		if err := c.installDB(ctx, bins); err != nil {
			return nil, err
		}
		if err := c.writeInit(); err != nil {
			return nil, err
		}
		args = append(args, "--init-file="+initFile(c.Dir))
	}
	if c.Galera != nil && c.Galera.Bootstrap {
		args = append(args, "--wsrep-new-cluster")
	}
	out, err := os.OpenFile(filepath.Join(RunDir(c.Dir), "mariadbd.out"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("mariadb: %w", err)
	}
	defer out.Close()
	cmd := exec.Command(bins.Server, args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Dir = RunDir(c.Dir)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := c.account().Apply(cmd); err != nil {
		return nil, err
	}
	if err := c.StartCmd(cmd); err != nil {
		return nil, fmt.Errorf("mariadb: start %s: %w", bins.Server, err)
	}
	s := &Server{Config: c, PID: cmd.Process.Pid}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }() // reaps it if it ends while we live
	if err := s.wait(ctx, exited); err != nil {
		return s, err
	}
	if creator {
		os.Remove(initFile(c.Dir))
	}
	return s, nil
}

// installDB creates the system tables as the server's user.
func (c *Config) installDB(ctx context.Context, b Binaries) error {
	if _, err := os.Stat(filepath.Join(DataDir(c.Dir), "mysql")); err == nil {
		return nil // made before: keep it
	}
	cmd := exec.CommandContext(ctx, b.InstallDB, "--defaults-file="+confFile(c.Dir), "--skip-test-db",
		"--auth-root-authentication-method=socket", "--skip-name-resolve")
	cmd.Dir = RunDir(c.Dir)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := c.account().Apply(cmd); err != nil {
		return err
	}
	err := c.StartCmd(cmd)
	if err == nil {
		err = cmd.Wait()
	}
	if err != nil {
		return fmt.Errorf("mariadb: mariadb-install-db: %w: %s", err, lastLines(buf.String(), 3))
	}
	return nil
}

// writeInit writes the init file for the server's user, who reads it.
func (c *Config) writeInit() error {
	uid, gid, err := c.account().IDs()
	if err != nil {
		return err
	}
	p := initFile(c.Dir)
	if err := os.WriteFile(p, []byte(c.initSQL()), 0o600); err != nil {
		return fmt.Errorf("mariadb: %w", err)
	}
	if err := os.Chown(p, uid, gid); err != nil {
		return fmt.Errorf("mariadb: %w", err)
	}
	return nil
}

// Connector returns a connector to the server's database over its Unix
// socket as the SQL account (the socket is a file: it works from any
// namespace).
func (s *Server) Connector() (driver.Connector, error) {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = s.SQLUser, s.Password, "unix", Socket(s.Dir), s.Database
	cfg.Timeout = 2 * time.Second
	return mysql.NewConnector(cfg)
}

// wait polls the server through its socket until it is ready, it exits,
// ctx ends or StartTimeout passes; the error says what it last saw.
func (s *Server) wait(ctx context.Context, exited <-chan error) error {
	ctx, cancel := context.WithTimeout(ctx, StartTimeout)
	defer cancel()
	conn, err := s.Connector()
	if err != nil {
		return err
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	last := "no answer"
	for {
		ready, state, err := probe(ctx, db, s.Galera != nil)
		switch {
		case err != nil:
			last = strings.Join(strings.Fields(err.Error()), " ")
		case ready:
			return nil
		default:
			last = state
		}
		select {
		case werr := <-exited:
			return fmt.Errorf("mariadb: mariadbd exited at start (%v): %s", werr, s.logErrors())
		case <-ctx.Done():
			return fmt.Errorf("mariadb: %s not ready within %v (%s): %s", s.Dir, StartTimeout, last, s.logErrors())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// probe logs in once and says whether the server is ready, and what its
// wsrep state is.
func probe(ctx context.Context, db *sql.DB, galera bool) (bool, string, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if !galera {
		err := db.PingContext(ctx)
		return err == nil, "", err
	}
	st, err := WsrepStatus(ctx, db)
	if err != nil {
		return false, "", err
	}
	state := fmt.Sprintf("wsrep_ready %s, %s, cluster %s of %s", st["wsrep_ready"], st["wsrep_local_state_comment"],
		st["wsrep_cluster_status"], st["wsrep_cluster_size"])
	return st["wsrep_ready"] == "ON" && st["wsrep_local_state_comment"] == "Synced" && st["wsrep_cluster_status"] == "Primary", state, nil
}

// logErrors is the last [ERROR] lines of the server's error log (the
// state transfer's too), or where the log is.
func (s *Server) logErrors() string {
	b, _ := os.ReadFile(LogFile(s.Dir))
	var bad []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "[ERROR]") {
			bad = append(bad, strings.TrimSpace(l))
		}
	}
	if len(bad) == 0 {
		return "see " + LogFile(s.Dir)
	}
	return lastLines(strings.Join(bad, "\n"), 3) + " (" + LogFile(s.Dir) + ")"
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(strings.Fields(strings.Join(lines, "; ")), " ")
}

// Target is a server to stop: its directory and PID (0: read its PID file).
type Target struct {
	Dir string
	PID int
}

// PID returns the server's PID in dir, from recorded (when not 0) or its
// PID file, if that process is still the server of dir; else 0.
func PID(dir string, recorded int) int {
	pid := recorded
	if pid == 0 {
		b, err := os.ReadFile(pidFile(dir))
		if err != nil {
			return 0
		}
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	if pid > 1 && isServer(pid, dir) {
		return pid
	}
	return 0
}

// Stop ends the servers that still run: SIGTERM to all at once (a member
// leaving a cluster takes a moment; they leave together), SIGKILL to those
// still there after timeout. A PID that is no longer the server of its
// directory is left alone. It returns when they are gone.
func Stop(timeout time.Duration, targets ...Target) error {
	var pids []int
	var dirs []string
	for _, t := range targets {
		if pid := PID(t.Dir, t.PID); pid != 0 {
			syscall.Kill(pid, syscall.SIGTERM)
			pids, dirs = append(pids, pid), append(dirs, t.Dir)
		}
	}
	var errs []error
	deadline := time.Now().Add(timeout)
	for i, pid := range pids {
		if waitGone(pid, dirs[i], time.Until(deadline)) {
			continue
		}
		syscall.Kill(pid, syscall.SIGKILL)
		if !waitGone(pid, dirs[i], 10*time.Second) {
			errs = append(errs, fmt.Errorf("mariadb: mariadbd %d (%s) does not exit", pid, dirs[i]))
		}
	}
	return errors.Join(errs...)
}

// Stop ends the server (see the package's Stop).
func (s *Server) Stop(timeout time.Duration) error {
	return Stop(timeout, Target{Dir: s.Dir, PID: s.PID})
}

func waitGone(pid int, dir string, d time.Duration) bool {
	for end := time.Now().Add(d); ; time.Sleep(20 * time.Millisecond) {
		if !isServer(pid, dir) {
			return true
		}
		if !time.Now().Before(end) {
			return false
		}
	}
}

// isServer reports whether pid is a live (not zombie) mariadbd whose
// command line names dir's option file.
func isServer(pid int, dir string) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	if i := bytes.LastIndexByte(stat, ')'); i < 0 || i+2 >= len(stat) || stat[i+2] == 'Z' {
		return false
	}
	cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return err == nil && bytes.Contains(cmd, []byte("--defaults-file="+confFile(dir)+"\x00"))
}
