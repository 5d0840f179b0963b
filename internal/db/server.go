package db

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"
)

// monitor is a connection of its own that reads what the server says about
// the run: settings, WAL position and pg_stat_replication.
type monitor struct {
	conn *pgx.Conn
}

// queryTimeout bounds each monitoring query so a stuck server cannot hold
// the run's end.
const queryTimeout = 5 * time.Second

func (m *monitor) info(ctx context.Context, s *Server) error {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	return m.conn.QueryRow(ctx, `SELECT current_setting('server_version'), pg_is_in_recovery(),
		current_setting('synchronous_commit'), current_setting('synchronous_standby_names')`).
		Scan(&s.Version, &s.InRecovery, &s.SynchronousCommit, &s.SynchronousStandbyNames)
}

// walLSN returns the primary's current WAL insert position as text.
func (m *monitor) walLSN(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	var lsn string
	err := m.conn.QueryRow(ctx, `SELECT pg_current_wal_lsn()::text`).Scan(&lsn)
	return lsn, err
}

func (m *monitor) walDiff(ctx context.Context, a, b string) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	var n int64
	err := m.conn.QueryRow(ctx, `SELECT pg_wal_lsn_diff($1::pg_lsn, $2::pg_lsn)::bigint`, a, b).Scan(&n)
	return n, err
}

// replRow is one pg_stat_replication row; byte positions are offsets from
// 0/0 (-1 when the role may not see them).
type replRow struct {
	pid                        int
	name, addr, state, sync    string
	sent, write, flush, replay int64
	sentLSN, replayLSN         string
	lagBytes                   int64
	writeLag, flushLag, rLag   int64
}

func (m *monitor) replication(ctx context.Context) (map[int]replRow, error) {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	rows, err := m.conn.Query(ctx, `SELECT pid, coalesce(application_name, ''), coalesce(client_addr::text, 'local'),
		coalesce(state, ''), coalesce(sync_state, ''),
		coalesce(pg_wal_lsn_diff(sent_lsn, '0/0')::bigint, -1), coalesce(pg_wal_lsn_diff(write_lsn, '0/0')::bigint, -1),
		coalesce(pg_wal_lsn_diff(flush_lsn, '0/0')::bigint, -1), coalesce(pg_wal_lsn_diff(replay_lsn, '0/0')::bigint, -1),
		coalesce(sent_lsn::text, ''), coalesce(replay_lsn::text, ''),
		coalesce(pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)::bigint, -1),
		coalesce((extract(epoch FROM write_lag) * 1e9)::bigint, 0), coalesce((extract(epoch FROM flush_lag) * 1e9)::bigint, 0),
		coalesce((extract(epoch FROM replay_lag) * 1e9)::bigint, 0)
		FROM pg_stat_replication`)
	if err != nil {
		return nil, err
	}
	out := map[int]replRow{}
	for rows.Next() {
		var r replRow
		if err := rows.Scan(&r.pid, &r.name, &r.addr, &r.state, &r.sync, &r.sent, &r.write, &r.flush, &r.replay,
			&r.sentLSN, &r.replayLSN, &r.lagBytes, &r.writeLag, &r.flushLag, &r.rLag); err != nil {
			rows.Close()
			return nil, err
		}
		out[r.pid] = r
	}
	return out, rows.Err()
}

// standbys tracks pg_stat_replication over the run.
type standbys struct {
	start, last map[int]replRow
	maxLag      map[int]int64 // bytes
	maxLagTime  map[int]int64 // ns
	err         error
}

func (s *standbys) sample(ctx context.Context, m *monitor) (worstLag int64) {
	rows, err := m.replication(ctx)
	if err != nil {
		if s.err == nil {
			s.err = err
		}
		return -1
	}
	if s.start == nil {
		s.start, s.maxLag, s.maxLagTime = rows, map[int]int64{}, map[int]int64{}
	}
	s.last = rows
	worstLag = -1
	for pid, r := range rows {
		s.maxLag[pid] = max(s.maxLag[pid], r.lagBytes)
		s.maxLagTime[pid] = max(s.maxLagTime[pid], r.rLag)
		worstLag = max(worstLag, r.lagBytes)
	}
	return worstLag
}

// result lists every standby seen at the start, with its progress to the
// end (or Gone), and those that connected during the run.
func (s *standbys) result() ([]Standby, error) {
	if s.err != nil {
		return nil, fmt.Errorf("pg_stat_replication: %s", cleanErr(s.err))
	}
	out := []Standby{}
	seen := map[int]bool{}
	add := func(pid int, a, b replRow, gone bool) {
		st := Standby{Name: b.name, ClientAddr: b.addr, State: b.state, SyncState: b.sync, Gone: gone,
			Visible: b.sent >= 0 && a.sent >= 0, SentLSN: b.sentLSN, ReplayLSN: b.replayLSN,
			ReplayLagBytes: b.lagBytes, MaxReplayLagBytes: s.maxLag[pid],
			WriteLag: b.writeLag, FlushLag: b.flushLag, ReplayLag: b.rLag, MaxReplayLag: s.maxLagTime[pid]}
		if st.Visible {
			st.SentBytes, st.WriteBytes = b.sent-a.sent, b.write-a.write
			st.FlushBytes, st.ReplayBytes = b.flush-a.flush, b.replay-a.replay
		}
		out = append(out, st)
		seen[pid] = true
	}
	for pid, a := range s.start {
		if b, ok := s.last[pid]; ok {
			add(pid, a, b, false)
		} else {
			add(pid, a, a, true)
		}
	}
	for pid, b := range s.last {
		if !seen[pid] {
			add(pid, b, b, false)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].ClientAddr < out[j].ClientAddr
	})
	return out, nil
}
