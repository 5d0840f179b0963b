package mariadb

import (
	"context"
	"database/sql"
	"strings"
)

// This file has no build tag: interlink db reads a member's status on any
// system, while starting servers is Linux's.

// Querier is what WsrepStatus needs: a *sql.DB or *sql.Conn.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// WsrepStatus returns the server's wsrep_% status variables by name
// (empty on a server without Galera).
func WsrepStatus(ctx context.Context, q Querier) (map[string]string, error) {
	rows, err := q.QueryContext(ctx, "SHOW GLOBAL STATUS LIKE 'wsrep%'")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		out[strings.ToLower(k)] = v
	}
	return out, rows.Err()
}
