//go:build linux

package mariadb

import (
	"crypto/rand"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/interlink/interlink/internal/runas"
)

// ErrMissing says MariaDB (or, for a cluster, Galera or rsync) is not
// installed; its text is the install command.
var ErrMissing = errors.New("MariaDB with Galera not installed (install it: apt-get update && apt-get install -y mariadb-server galera-4 rsync)")

// Where Debian's packages put the programs (PATH is tried after them) and
// the Galera provider. Tests empty them to play a machine without.
var (
	BinDirs   = []string{"/usr/sbin", "/usr/bin"}
	Providers = []string{"/usr/lib/galera/libgalera_smm.so", "/usr/lib64/galera-4/libgalera_smm.so", "/usr/lib/libgalera_smm.so"}
)

// Binaries are the installed programs a server needs.
type Binaries struct {
	Server    string // mariadbd
	InstallDB string // mariadb-install-db
	Provider  string // libgalera_smm.so ("" when not needed)
}

// Find returns the installed programs, with the Galera provider and rsync
// (the state transfer) when galera; else ErrMissing.
func Find(galera bool) (Binaries, error) {
	var b Binaries
	var err error
	if b.Server, err = look("mariadbd"); err != nil {
		return b, err
	}
	if b.InstallDB, err = look("mariadb-install-db"); err != nil {
		return b, err
	}
	if !galera {
		return b, nil
	}
	if _, err = look("rsync"); err != nil {
		return b, err
	}
	for _, p := range Providers {
		if _, err := os.Stat(p); err == nil {
			b.Provider = p
			return b, nil
		}
	}
	return b, ErrMissing
}

func look(name string) (string, error) {
	for _, d := range BinDirs {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", ErrMissing
}

// Config is one server. Dir is required; every other zero value has a
// default.
type Config struct {
	// Dir holds my.cnf, and data/ and run/ owned by User. The caller
	// removes it after Stop.
	Dir    string
	Listen string // bind-address: default 127.0.0.1; "*" for every address
	Port   int    // default: a free port on 127.0.0.1
	// User is the operating-system user the server runs as: "mysql" when
	// running as root, else the current user.
	User string
	// SQLUser and Password are the account Start creates on a standalone
	// or bootstrapping server (joiners get it with the state transfer):
	// every privilege, from any host. Default "interlink" and random.
	SQLUser  string
	Password string
	Database string // created with the account; default "sbtest"
	Galera   *Galera
	// Settings are added to my.cnf's [mariadbd] section (and win).
	Settings map[string]string
	// StartCmd starts each program (mariadb-install-db, mariadbd); a lab
	// passes its node's Start so the server runs in the node. Default
	// (*exec.Cmd).Start.
	StartCmd func(*exec.Cmd) error
}

// Galera makes the server a member of a cluster.
type Galera struct {
	Cluster string     // wsrep_cluster_name
	Node    string     // wsrep_node_name
	Address netip.Addr // wsrep_node_address: where the other members reach it
	// Members are the addresses of every member (this one too), the
	// wsrep_cluster_address gcomm:// list.
	Members []netip.Addr
	// Bootstrap starts a new cluster (--wsrep-new-cluster) instead of
	// joining one.
	Bootstrap bool
}

// Server is a started server; Stop ends it.
type Server struct {
	Config
	PID int
}

// Files of a server in dir.
func DataDir(dir string) string  { return filepath.Join(dir, "data") }
func RunDir(dir string) string   { return filepath.Join(dir, "run") }
func LogFile(dir string) string  { return filepath.Join(dir, "run", "error.log") }
func Socket(dir string) string   { return filepath.Join(dir, "run", "mysqld.sock") }
func pidFile(dir string) string  { return filepath.Join(dir, "run", "mysqld.pid") }
func confFile(dir string) string { return filepath.Join(dir, "my.cnf") }
func initFile(dir string) string { return filepath.Join(dir, "run", "init.sql") }

func (c *Config) defaults() error {
	if c.Dir == "" {
		return errors.New("mariadb: Dir is required")
	}
	if c.Listen == "" {
		c.Listen = "127.0.0.1"
	}
	if c.Port == 0 {
		p, err := FreePort()
		if err != nil {
			return err
		}
		c.Port = p
	}
	if c.User == "" {
		u, err := runas.Default("mysql")
		if err != nil {
			return err
		}
		c.User = u
	}
	if c.SQLUser == "" {
		c.SQLUser = "interlink"
	}
	if c.Password == "" {
		b := make([]byte, 12)
		rand.Read(b)
		c.Password = hex.EncodeToString(b)
	}
	if c.Database == "" {
		c.Database = "sbtest"
	}
	if c.StartCmd == nil {
		c.StartCmd = (*exec.Cmd).Start
	}
	if g := c.Galera; g != nil && (!g.Address.IsValid() || len(g.Members) == 0) {
		return errors.New("mariadb: a Galera member needs its address and the members'")
	}
	return nil
}

// FreePort returns a TCP port free on 127.0.0.1 at the time of the call.
func FreePort() (int, error) {
	p, err := runas.FreePort("127.0.0.1")
	if err != nil {
		return 0, fmt.Errorf("mariadb: %w", err)
	}
	return p, nil
}

// DSN is the mysql:// URL of the server's account and database at
// addr:port, as `interlink db bench --dsn` takes it.
func DSN(addr netip.Addr, port int, user, password, db string) string {
	u := url.URL{Scheme: "mysql", User: url.UserPassword(user, password),
		Host: net.JoinHostPort(addr.String(), strconv.Itoa(port)), Path: "/" + db}
	return u.String()
}

// DSN is the server's URL over TCP at its listen address (127.0.0.1 when
// it listens on every address).
func (s *Server) DSN() string {
	a, err := netip.ParseAddr(s.Listen)
	if err != nil || a.IsUnspecified() {
		a = netip.AddrFrom4([4]byte{127, 0, 0, 1})
	}
	return DSN(a, s.Port, s.SQLUser, s.Password, s.Database)
}

// account is the server's user, as mariadb's errors name it (a missing
// mysql account means the server is not installed).
func (c *Config) account() runas.Account {
	return runas.Account{Name: c.User, Server: "mariadb", Hint: "install the server: apt-get install -y mariadb-server"}
}

// prepare makes Dir (0711), data/ and run/ (0700, the server user's) and
// writes my.cnf.
func (c *Config) prepare(b Binaries) error {
	uid, gid, err := c.account().IDs()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(c.Dir, 0o711); err != nil {
		return fmt.Errorf("mariadb: %w", err)
	}
	if err := os.Chmod(c.Dir, 0o711); err != nil {
		return fmt.Errorf("mariadb: %w", err)
	}
	for _, d := range []string{DataDir(c.Dir), RunDir(c.Dir)} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("mariadb: %w", err)
		}
		if err := os.Chown(d, uid, gid); err != nil {
			return fmt.Errorf("mariadb: %w", err)
		}
	}
	if err := os.WriteFile(confFile(c.Dir), []byte(c.myCnf(b)), 0o644); err != nil {
		return fmt.Errorf("mariadb: %w", err)
	}
	return nil
}

// myCnf is the server's option file. The lab's servers are small (a
// 64 MiB buffer pool, 48 MiB redo log, 32 MiB Galera cache) and, as
// Galera clusters commonly run, flush the redo log once a second rather
// than at every commit: durability comes from the other members, and the
// commit's cost is the replication across the network.
func (c *Config) myCnf(b Binaries) string {
	set := map[string]string{
		"datadir":                        DataDir(c.Dir),
		"socket":                         Socket(c.Dir),
		"pid-file":                       pidFile(c.Dir),
		"log-error":                      LogFile(c.Dir),
		"port":                           strconv.Itoa(c.Port),
		"bind-address":                   c.Listen,
		"skip-name-resolve":              "ON",
		"max_connections":                "500",
		"innodb_buffer_pool_size":        "64M",
		"innodb_log_file_size":           "48M",
		"innodb_flush_log_at_trx_commit": "2",
		"binlog_format":                  "ROW",
		"innodb_autoinc_lock_mode":       "2",
		"default_storage_engine":         "InnoDB",
	}
	if g := c.Galera; g != nil {
		members := make([]string, len(g.Members))
		for i, a := range g.Members {
			members[i] = a.String()
			if a.Is6() {
				members[i] = "[" + a.String() + "]"
			}
		}
		node := g.Address.String()
		if g.Address.Is6() {
			node = "[" + node + "]"
		}
		set["wsrep_on"] = "ON"
		set["wsrep_provider"] = b.Provider
		set["wsrep_cluster_name"] = g.Cluster
		set["wsrep_node_name"] = g.Node
		set["wsrep_node_address"] = node
		set["wsrep_cluster_address"] = "gcomm://" + strings.Join(members, ",")
		set["wsrep_sst_method"] = "rsync"
		set["wsrep_provider_options"] = `"gcache.size=32M"`
		set["wsrep_slave_threads"] = "2"
	}
	for k, v := range c.Settings {
		set[k] = v
	}
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var sb strings.Builder
	sb.WriteString("# written by interlink\n[mariadbd]\n")
	for _, k := range keys {
		sb.WriteString(k + " = " + set[k] + "\n")
	}
	return sb.String()
}

// nativeHash is MySQL's mysql_native_password hash of pw
// ("*" + SHA1(SHA1(pw)) in upper-case hex): the init file holds it, not
// the password.
func nativeHash(pw string) string {
	a := sha1.Sum([]byte(pw))
	b := sha1.Sum(a[:])
	return "*" + strings.ToUpper(hex.EncodeToString(b[:]))
}

// quote is a single-quoted SQL string literal.
func quote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// initSQL creates the account and the database at the first start.
func (c *Config) initSQL() string {
	acct := quote(c.SQLUser) + "@'%'"
	return "CREATE USER IF NOT EXISTS " + acct + " IDENTIFIED BY PASSWORD " + quote(nativeHash(c.Password)) + ";\n" +
		"GRANT ALL PRIVILEGES ON *.* TO " + acct + " WITH GRANT OPTION;\n" +
		"CREATE DATABASE IF NOT EXISTS `" + strings.ReplaceAll(c.Database, "`", "``") + "`;\n"
}
