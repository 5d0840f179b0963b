package db

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"
)

// sysbench's table (oltp_common.lua create_table), with the comment that
// marks it as interlink's.
const mysqlCreate = `CREATE TABLE sbtest%d (
  id INTEGER NOT NULL AUTO_INCREMENT,
  k INTEGER DEFAULT '0' NOT NULL,
  c CHAR(120) DEFAULT '' NOT NULL,
  pad CHAR(60) DEFAULT '' NOT NULL,
  PRIMARY KEY (id)
) ENGINE = InnoDB COMMENT = '%s, %d rows'`

// initBatch is the rows of one INSERT while filling a table.
const initBatch = 1000

// mysqlTables returns the sbtest tables of the DSN's database: number ->
// table comment.
func mysqlTables(ctx context.Context, db *sql.DB) (map[int]string, error) {
	rows, err := db.QueryContext(ctx, `SELECT TABLE_NAME, TABLE_COMMENT FROM information_schema.TABLES
		WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME REGEXP '^sbtest[0-9]+$'`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int]string{}
	for rows.Next() {
		var name, comment string
		if err := rows.Scan(&name, &comment); err != nil {
			return nil, err
		}
		if n, err := strconv.Atoi(strings.TrimPrefix(name, "sbtest")); err == nil {
			out[n] = comment
		}
	}
	return out, rows.Err()
}

// initMySQL drops interlink's earlier sbtest tables and creates and fills
// tables of size rows, as sysbench's prepare does (rows sent from here in
// batches, the k index made after). It refuses tables interlink did not
// create. It returns the time taken and the tables' size.
func initMySQL(ctx context.Context, db *sql.DB, tables, size int) (time.Duration, int64, error) {
	start := time.Now()
	have, err := mysqlTables(ctx, db)
	if err != nil {
		return 0, 0, fmt.Errorf("init: list tables: %s", cleanErr(err))
	}
	var drop []string
	for _, n := range sortedKeys(have) {
		if !strings.HasPrefix(have[n], marker) {
			return 0, 0, errorf(ErrTables, "--init: table sbtest%d exists and was not created by interlink; drop it yourself or name another database", n)
		}
		drop = append(drop, "sbtest"+strconv.Itoa(n))
	}
	if len(drop) > 0 {
		if _, err := db.ExecContext(ctx, "DROP TABLE "+strings.Join(drop, ", ")); err != nil {
			return 0, 0, fmt.Errorf("init: drop: %s", cleanErr(err))
		}
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0))
	cl := &myClient{rng: rng}
	for t := 1; t <= tables; t++ {
		if _, err := db.ExecContext(ctx, fmt.Sprintf(mysqlCreate, t, marker, size)); err != nil {
			return 0, 0, fmt.Errorf("init: create sbtest%d: %s", t, cleanErr(err))
		}
		for lo := 1; lo <= size; lo += initBatch {
			n := min(initBatch, size-lo+1)
			args := make([]any, 0, 4*n)
			for id := lo; id < lo+n; id++ {
				args = append(args, id, rng.IntN(size)+1, string(cl.fill(nil, 10)), string(cl.fill(nil, 5)))
			}
			q := fmt.Sprintf("INSERT INTO sbtest%d (id, k, c, pad) VALUES ", t) + strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?),", n), ",")
			if _, err := db.ExecContext(ctx, q, args...); err != nil {
				return 0, 0, fmt.Errorf("init: fill sbtest%d: %s", t, cleanErr(err))
			}
		}
		if _, err := db.ExecContext(ctx, fmt.Sprintf("CREATE INDEX k_%d ON sbtest%d(k)", t, t)); err != nil {
			return 0, 0, fmt.Errorf("init: index sbtest%d: %s", t, cleanErr(err))
		}
	}
	var bytes sql.NullInt64
	if err := db.QueryRowContext(ctx, `SELECT SUM(DATA_LENGTH + INDEX_LENGTH) FROM information_schema.TABLES
		WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME REGEXP '^sbtest[0-9]+$'`).Scan(&bytes); err != nil {
		return 0, 0, fmt.Errorf("init: size: %s", cleanErr(err))
	}
	return time.Since(start), bytes.Int64, nil
}

// readMySQLTables finds the sbtest tables a run uses (sbtest1 and those
// numbered on from it), their size (sbtest1's largest id, as sysbench's
// table_size) and whether interlink made them.
func readMySQLTables(ctx context.Context, db *sql.DB) (tables, size int, ours bool, err error) {
	have, err := mysqlTables(ctx, db)
	if err != nil {
		return 0, 0, false, fmt.Errorf("list tables: %s", cleanErr(err))
	}
	for tables = 0; ; tables++ {
		if _, ok := have[tables+1]; !ok {
			break
		}
	}
	if tables == 0 {
		return 0, 0, false, errorf(ErrTables, "table sbtest1 does not exist; run with --init (or sysbench oltp_read_write prepare) first")
	}
	var n sql.NullInt64
	if err := db.QueryRowContext(ctx, "SELECT MAX(id) FROM sbtest1").Scan(&n); err != nil {
		return 0, 0, false, fmt.Errorf("size of sbtest1: %s", cleanErr(err))
	}
	if !n.Valid || n.Int64 < 1 {
		return 0, 0, false, errorf(ErrTables, "sbtest1 is empty; run with --init")
	}
	return tables, int(n.Int64), strings.HasPrefix(have[1], marker), nil
}

func sortedKeys(m map[int]string) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}
