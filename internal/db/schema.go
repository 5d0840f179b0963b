package db

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrTables marks a database whose tables cannot be used: missing (run
// --init), or pgbench tables interlink did not create (--init refuses to
// drop them).
var ErrTables = errors.New("db: tables")

// marker is the table comment --init sets; only tables carrying it are
// dropped by a later --init.
const marker = "interlink db bench"

var tables = []string{"pgbench_accounts", "pgbench_branches", "pgbench_history", "pgbench_tellers"}

// pgbench's schema (pgbench.c initCreateTables), fillfactor 100.
var createSQL = []string{
	`CREATE TABLE pgbench_history (tid int, bid int, aid int, delta int, mtime timestamp, filler char(22))`,
	`CREATE TABLE pgbench_tellers (tid int NOT NULL, bid int, tbalance int, filler char(84)) WITH (fillfactor=100)`,
	`CREATE TABLE pgbench_accounts (aid int NOT NULL, bid int, abalance int, filler char(84)) WITH (fillfactor=100)`,
	`CREATE TABLE pgbench_branches (bid int NOT NULL, bbalance int, filler char(88)) WITH (fillfactor=100)`,
}

// tableOwners returns, for each pgbench table that exists in the search
// path, its comment ("" without one).
func tableComments(ctx context.Context, c *pgx.Conn) (map[string]string, error) {
	rows, err := c.Query(ctx, `SELECT c.relname, coalesce(obj_description(c.oid, 'pg_class'), '')
		FROM pg_class c WHERE c.relname = ANY($1) AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
		AND pg_table_is_visible(c.oid)`, tables)
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for rows.Next() {
		var name, comment string
		if err := rows.Scan(&name, &comment); err != nil {
			rows.Close()
			return nil, err
		}
		m[name] = comment
	}
	return m, rows.Err()
}

// initTables drops interlink's earlier tables and creates and fills
// pgbench's at scale, server-side (pgbench -I dtGvp: generate_series, no
// rows cross the network). It refuses tables interlink did not create.
func initTables(ctx context.Context, c *pgx.Conn, scale int) (time.Duration, int64, error) {
	start := time.Now()
	have, err := tableComments(ctx, c)
	if err != nil {
		return 0, 0, fmt.Errorf("init: list tables: %s", cleanErr(err))
	}
	for _, t := range tables {
		if comment, ok := have[t]; ok && !strings.HasPrefix(comment, marker) {
			return 0, 0, errorf(ErrTables, "--init: table %s exists and was not created by interlink; drop it yourself or name another database", t)
		}
	}
	stmts := []string{"DROP TABLE IF EXISTS " + strings.Join(tables, ", ")}
	stmts = append(stmts, createSQL...)
	stmts = append(stmts,
		fmt.Sprintf(`INSERT INTO pgbench_branches (bid, bbalance) SELECT bid, 0 FROM generate_series(1, %d) bid`, scale),
		fmt.Sprintf(`INSERT INTO pgbench_tellers (tid, bid, tbalance) SELECT tid, (tid - 1) / %d + 1, 0 FROM generate_series(1, %d) tid`,
			TellersPerScale, scale*TellersPerScale),
		fmt.Sprintf(`INSERT INTO pgbench_accounts (aid, bid, abalance, filler) SELECT aid, (aid - 1) / %d + 1, 0, '' FROM generate_series(1, %d) aid`,
			AccountsPerScale, scale*AccountsPerScale),
	)
	for _, t := range tables {
		stmts = append(stmts, fmt.Sprintf(`COMMENT ON TABLE %s IS '%s, scale %d'`, t, marker, scale))
	}
	tx, err := c.Begin(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("init: %s", cleanErr(err))
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	for _, q := range stmts {
		if _, err := tx.Exec(ctx, q); err != nil {
			return 0, 0, fmt.Errorf("init: %s: %s", strings.Fields(q)[0]+" "+strings.Fields(q)[1], cleanErr(err))
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, 0, fmt.Errorf("init: commit: %s", cleanErr(err))
	}
	// Outside the transaction: VACUUM cannot run in one.
	for _, q := range []string{
		`VACUUM ANALYZE pgbench_branches, pgbench_tellers, pgbench_accounts, pgbench_history`,
		`ALTER TABLE pgbench_branches ADD PRIMARY KEY (bid)`,
		`ALTER TABLE pgbench_tellers ADD PRIMARY KEY (tid)`,
		`ALTER TABLE pgbench_accounts ADD PRIMARY KEY (aid)`,
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			return 0, 0, fmt.Errorf("init: %s: %s", strings.Fields(q)[0], cleanErr(err))
		}
	}
	var size int64
	if err := c.QueryRow(ctx, `SELECT sum(pg_total_relation_size(t::regclass))::bigint FROM unnest($1::text[]) t`, tables).Scan(&size); err != nil {
		return 0, 0, fmt.Errorf("init: size: %s", cleanErr(err))
	}
	return time.Since(start), size, nil
}

// readScale checks that the tables exist and returns the scale factor
// (pgbench's rule: the number of branches) and whether interlink made them.
func readScale(ctx context.Context, c *pgx.Conn) (int, bool, error) {
	have, err := tableComments(ctx, c)
	if err != nil {
		return 0, false, fmt.Errorf("list tables: %s", cleanErr(err))
	}
	for _, t := range tables {
		if _, ok := have[t]; !ok {
			return 0, false, errorf(ErrTables, "table %s does not exist; run with --init (or pgbench -i) first", t)
		}
	}
	var n int
	if err := c.QueryRow(ctx, `SELECT count(*) FROM pgbench_branches`).Scan(&n); err != nil {
		return 0, false, fmt.Errorf("count branches: %s", cleanErr(err))
	}
	if n < 1 {
		return 0, false, errorf(ErrTables, "pgbench_branches is empty; run with --init")
	}
	return n, strings.HasPrefix(have["pgbench_accounts"], marker), nil
}
