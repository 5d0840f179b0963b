package service

import (
	"context"
	"database/sql"
	"fmt"
	"net/netip"
	"strconv"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/interlink/interlink/internal/mariadb"
)

// GaleraUser and GaleraDatabase are the account and database a lab's
// Galera cluster gives clients (its DSNs name them).
const (
	GaleraUser     = "interlink"
	GaleraDatabase = "sbtest"
)

// Galera is one member of a lab's Galera cluster (package mariadb). Its
// files are in Dir, which the mysql user must be able to reach.
type Galera struct {
	Dir       string
	Cluster   string     // wsrep_cluster_name: the lab's name
	Name      string     // wsrep_node_name: the node's name
	Address   netip.Addr // the node's address on the cluster network
	Members   []netip.Addr
	Bootstrap bool // the first member: starts the cluster
	Port      int
	Password  string // of GaleraUser
}

// StartGalera starts the member in its node (a joiner copies a member's
// data by rsync over the cluster network first) and returns when it is
// Synced in a primary component; its PID also with an error once it ran.
func StartGalera(ctx context.Context, g Galera, start StartFunc) (int, error) {
	s, err := mariadb.Start(ctx, mariadb.Config{
		Dir: g.Dir, Listen: "*", Port: g.Port, SQLUser: GaleraUser, Password: g.Password, Database: GaleraDatabase,
		Galera:   &mariadb.Galera{Cluster: g.Cluster, Node: g.Name, Address: g.Address, Members: g.Members, Bootstrap: g.Bootstrap},
		StartCmd: start,
	})
	if s != nil {
		return s.PID, err
	}
	return 0, err
}

// GaleraInstalled returns mariadb.ErrMissing (with the apt line) when
// MariaDB, Galera or rsync is not installed.
func GaleraInstalled() error {
	_, err := mariadb.Find(true)
	return err
}

// GaleraPID returns the member's mariadbd PID (recorded, else from its PID
// file) if it still runs, else 0.
func GaleraPID(dir string, recorded int) int { return mariadb.PID(dir, recorded) }

// GaleraLog is the member's error log (the state transfer's lines too).
func GaleraLog(dir string) string { return mariadb.LogFile(dir) }

// StopGalera stops members together (see mariadb.Stop).
func StopGalera(timeout time.Duration, targets ...mariadb.Target) error {
	return mariadb.Stop(timeout, targets...)
}

// GaleraDSN is the mysql:// URL of the lab's account at addr:port.
func GaleraDSN(addr netip.Addr, port int, password string) string {
	return mariadb.DSN(addr, port, GaleraUser, password, GaleraDatabase)
}

// GaleraState logs in at addr through dial (from inside a node) and says
// how the member sees the cluster: "Synced, 3 members, Primary".
func GaleraState(ctx context.Context, addr netip.AddrPort, password string, dial DialFunc) (string, error) {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = GaleraUser, password, "tcp", addr.String()
	cfg.Timeout = 2 * time.Second
	cfg.DialFunc = dial
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return "", err
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	st, err := mariadb.WsrepStatus(ctx, db)
	if err != nil {
		return "", err
	}
	n, _ := strconv.Atoi(st["wsrep_cluster_size"])
	return fmt.Sprintf("%s, %d members, %s", st["wsrep_local_state_comment"], n, st["wsrep_cluster_status"]), nil
}
