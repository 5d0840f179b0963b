package db

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

// MySQLDefaultDatabase is the database a mysql:// DSN without one names
// (sysbench's default).
const MySQLDefaultDatabase = "sbtest"

// isMySQL reports whether dsn is a mysql:// (or mariadb://) URL.
func isMySQL(dsn string) bool {
	s := strings.ToLower(dsn)
	return strings.HasPrefix(s, "mysql://") || strings.HasPrefix(s, "mariadb://")
}

// mysqlTarget is one server of the MySQL DSNs: the driver's configuration
// (holding the password: never printed) and its address.
type mysqlTarget struct {
	cfg  *mysql.Config
	addr string // host:port
}

// parseMySQL parses each DSN, mysql://USER[:PASSWORD]@HOST[:PORT][,HOST[:PORT]...][/DB][?tls=...],
// into one target per host, in order. Without a password in the URL,
// MYSQL_PWD is used (as the mysql client does), so a password need not
// appear on a command line. Errors name what is wrong, never the password.
func parseMySQL(dsns []string, connectTimeout time.Duration) ([]mysqlTarget, error) {
	var out []mysqlTarget
	seen := map[string]bool{}
	for i, dsn := range dsns {
		which := "--dsn"
		if len(dsns) > 1 {
			which = fmt.Sprintf("--dsn %d", i+1)
		}
		ts, err := parseOneMySQL(dsn, connectTimeout)
		if err != nil {
			return nil, errorf(ErrSpec, "%s: %v (want mysql://USER:PASSWORD@HOST:PORT/DB)", which, err)
		}
		for _, t := range ts {
			if seen[t.addr] {
				return nil, errorf(ErrSpec, "%s: %s is given twice", which, t.addr)
			}
			seen[t.addr] = true
			out = append(out, t)
		}
	}
	return out, nil
}

func parseOneMySQL(dsn string, connectTimeout time.Duration) ([]mysqlTarget, error) {
	scheme, rest, _ := strings.Cut(dsn, "://")
	auth, tail := rest, ""
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		auth, tail = rest[:i], rest[i:]
	}
	userinfo, hosts := "", auth
	if i := strings.LastIndex(auth, "@"); i >= 0 {
		userinfo, hosts = auth[:i+1], auth[i+1:]
	}
	// The host list is split here: net/url takes one host.
	u, err := url.Parse(strings.ToLower(scheme) + "://" + userinfo + "host" + tail)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the message without the URL, which holds the password
		}
		return nil, err
	}
	if u.User == nil || u.User.Username() == "" {
		return nil, errors.New("no user")
	}
	if u.Fragment != "" {
		return nil, errors.New("a fragment (#) is not part of a DSN")
	}
	db := strings.TrimPrefix(u.Path, "/")
	if strings.Contains(db, "/") {
		return nil, fmt.Errorf("database %q: one name after the host", db)
	}
	if db == "" {
		db = MySQLDefaultDatabase
	}
	password, ok := u.User.Password()
	if !ok {
		password = os.Getenv("MYSQL_PWD")
	}
	tls := ""
	for k, v := range u.Query() {
		switch k {
		case "tls":
			switch tls = v[len(v)-1]; tls {
			case "true", "false", "skip-verify", "preferred":
			default:
				return nil, fmt.Errorf("tls=%s: want true, false, skip-verify or preferred", tls)
			}
		default:
			return nil, fmt.Errorf("parameter %q: only tls is taken", k)
		}
	}
	var out []mysqlTarget
	for _, h := range strings.Split(hosts, ",") {
		host, port, err := splitHost(h)
		if err != nil {
			return nil, err
		}
		cfg := mysql.NewConfig()
		cfg.User, cfg.Passwd, cfg.DBName = u.User.Username(), password, db
		cfg.Net, cfg.Addr = "tcp", net.JoinHostPort(host, strconv.Itoa(port))
		cfg.Timeout = connectTimeout
		cfg.TLSConfig = tls
		out = append(out, mysqlTarget{cfg: cfg, addr: cfg.Addr})
	}
	return out, nil
}

// splitHost reads HOST, HOST:PORT, [V6] or [V6]:PORT (port 3306 by default).
func splitHost(h string) (string, int, error) {
	host, port := h, "3306"
	switch {
	case strings.HasPrefix(h, "["):
		end := strings.Index(h, "]")
		if end < 0 {
			return "", 0, fmt.Errorf("host %q: missing ']'", h)
		}
		host = h[1:end]
		if rest := h[end+1:]; rest != "" {
			if !strings.HasPrefix(rest, ":") {
				return "", 0, fmt.Errorf("host %q: want [ADDRESS]:PORT", h)
			}
			port = rest[1:]
		}
	case strings.Count(h, ":") == 1:
		host, port, _ = strings.Cut(h, ":")
	case strings.Contains(h, ":"):
		return "", 0, fmt.Errorf("host %q: an IPv6 address goes in brackets", h)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 1 || p > 65535 {
		return "", 0, fmt.Errorf("host %q: port %q is not 1..65535", h, port)
	}
	if host == "" || strings.ContainsAny(host, "[]@/ ") {
		return "", 0, fmt.Errorf("host %q is not a host name or address", h)
	}
	return host, p, nil
}

// mysqlHint turns a connect error into one line that says what to fix.
func mysqlHint(t mysqlTarget, err error) string {
	var me *mysql.MySQLError
	if errors.Is(err, context.DeadlineExceeded) {
		// The bare "context deadline exceeded" said neither what was
		// waited for nor where.
		return t.addr + ": no answer from the server in time"
	}
	if !errors.As(err, &me) {
		msg := cleanErr(err)
		if !strings.Contains(msg, t.addr) { // dial errors name it already
			msg = t.addr + ": " + msg
		}
		return msg
	}
	where := fmt.Sprintf("database %q as user %q on %s", t.cfg.DBName, t.cfg.User, t.addr)
	switch me.Number {
	case 1045:
		return fmt.Sprintf("%s: login refused: %s (check the user and password in --dsn, or MYSQL_PWD)", where, me.Message)
	case 1044:
		return fmt.Sprintf("%s: %s (grant the user the database, or name another in --dsn)", where, me.Message)
	case 1049:
		return fmt.Sprintf("%s: %s (create it, or name another database in --dsn)", where, me.Message)
	case 1040:
		return fmt.Sprintf("%s: %s (lower --clients or raise max_connections)", where, me.Message)
	}
	return fmt.Sprintf("%s: %s (error %d)", where, me.Message, me.Number)
}
