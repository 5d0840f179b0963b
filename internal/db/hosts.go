package db

import (
	"net"
	"slices"
	"strconv"

	"github.com/jackc/pgx/v5"
)

// Hosts returns the servers the spec's DSNs name, as HOST or HOST:PORT,
// in order; a DSN that does not parse names none (Normalize says why).
// A PostgreSQL DSN's fallback hosts are included.
func (s Spec) Hosts() []string {
	var out []string
	dsns := s.DSNs
	if len(dsns) == 0 && s.DSN != "" {
		dsns = []string{s.DSN}
	}
	for _, dsn := range dsns {
		if isMySQL(dsn) {
			ts, err := parseOneMySQL(dsn, DefaultConnectTimeout)
			if err != nil {
				continue
			}
			for _, t := range ts {
				out = append(out, t.addr)
			}
			continue
		}
		cfg, err := pgx.ParseConfig(dsn)
		if err != nil {
			continue
		}
		// Fallbacks repeat a host for each TLS mode sslmode allows.
		for _, hp := range append([]string{hostPort(cfg.Host, cfg.Port)}, fallbacks(cfg)...) {
			if !slices.Contains(out, hp) {
				out = append(out, hp)
			}
		}
	}
	return out
}

func fallbacks(cfg *pgx.ConnConfig) []string {
	var out []string
	for _, f := range cfg.Fallbacks {
		out = append(out, hostPort(f.Host, f.Port))
	}
	return out
}

func hostPort(host string, port uint16) string {
	return net.JoinHostPort(host, strconv.Itoa(int(port)))
}
