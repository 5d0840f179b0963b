package store

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Filter selects results for List. Zero fields select everything.
type Filter struct {
	Command string
	Host    string
	Since   time.Time
	Labels  map[string]string // every key must have its value
	Before  int64             // only ids below this one
	Limit   int               // at most this many, newest first
	WithDoc bool              // also read each result's JSON
}

// List returns the results that match f, newest first.
func (s *Store) List(f Filter) ([]Record, error) {
	if s.db == nil { // OpenRead's empty history
		return nil, nil
	}
	var where []string
	var args []any
	if f.Command != "" {
		where, args = append(where, "command = ?"), append(args, f.Command)
	}
	if f.Host != "" {
		where, args = append(where, "host = ?"), append(args, f.Host)
	}
	if !f.Since.IsZero() {
		where, args = append(where, "time >= ?"), append(args, f.Since.UTC().Format(time.RFC3339Nano))
	}
	if f.Before > 0 {
		where, args = append(where, "id < ?"), append(args, f.Before)
	}
	for k, v := range f.Labels {
		where = append(where, "EXISTS (SELECT 1 FROM labels l WHERE l.result = results.id AND l.key = ? AND l.value = ?)")
		args = append(args, k, v)
	}
	doc := "''"
	if f.WithDoc {
		doc = "doc"
	}
	q := "SELECT id, time, host, command, schema, args, coalesce(name, ''), summary, " + doc + " FROM results"
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY id DESC"
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	rows, err := s.db.Query(q, args...)
	if err != nil {
		return nil, notHistory(err)
	}
	defer rows.Close()
	var out []Record
	for rows.Next() {
		r, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, notHistory(err)
	}
	return out, s.labels(out)
}

func scan(rows *sql.Rows) (Record, error) {
	var r Record
	var t, args, doc string
	if err := rows.Scan(&r.ID, &t, &r.Host, &r.Command, &r.Schema, &args, &r.Name, &r.Summary, &doc); err != nil {
		return r, notHistory(err)
	}
	var err error
	if r.Time, err = time.Parse(time.RFC3339Nano, t); err != nil {
		return r, fmt.Errorf("%w: result %d: bad time %q", ErrNotHistory, r.ID, t)
	}
	if err := json.Unmarshal([]byte(args), &r.Args); err != nil {
		return r, fmt.Errorf("%w: result %d: bad args", ErrNotHistory, r.ID)
	}
	if doc != "" {
		r.Doc = json.RawMessage(doc)
	}
	return r, nil
}

// labels fills in the labels of rs.
func (s *Store) labels(rs []Record) error {
	for i := range rs {
		rs[i].Labels = map[string]string{}
		rows, err := s.db.Query("SELECT key, value FROM labels WHERE result = ? ORDER BY key", rs[i].ID)
		if err != nil {
			return notHistory(err)
		}
		for rows.Next() {
			var k, v string
			if err := rows.Scan(&k, &v); err != nil {
				rows.Close()
				return notHistory(err)
			}
			rs[i].Labels[k] = v
		}
		rows.Close()
	}
	return nil
}

// Get returns the result with id, with its JSON.
func (s *Store) Get(id int64) (*Record, error) {
	return s.one("id = ?", id, fmt.Sprintf("result %d", id))
}

// ByName returns the result named name, with its JSON.
func (s *Store) ByName(name string) (*Record, error) {
	return s.one("name = ?", name, fmt.Sprintf("result named %q", name))
}

func (s *Store) one(where string, arg any, what string) (*Record, error) {
	if s.db == nil {
		return nil, fmt.Errorf("%w: no %s in the history", ErrNotFound, what)
	}
	rows, err := s.db.Query("SELECT id, time, host, command, schema, args, coalesce(name, ''), summary, doc FROM results WHERE "+where, arg)
	if err != nil {
		return nil, notHistory(err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, notHistory(err)
		}
		return nil, fmt.Errorf("%w: no %s in the history", ErrNotFound, what)
	}
	r, err := scan(rows)
	if err != nil {
		return nil, err
	}
	rows.Close()
	rs := []Record{r}
	return &rs[0], s.labels(rs)
}

// Previous returns the run of the same command on the same host saved
// before r, with its JSON.
func (s *Store) Previous(r *Record) (*Record, error) {
	rs, err := s.List(Filter{Command: r.Command, Host: r.Host, Before: r.ID, Limit: 1, WithDoc: true})
	if err != nil {
		return nil, err
	}
	if len(rs) == 0 {
		return nil, fmt.Errorf("%w: no %s run on %s before result %d", ErrNotFound, r.Command, r.Host, r.ID)
	}
	return &rs[0], nil
}

// Latest returns the newest result (of command, when not empty), with its
// JSON.
func (s *Store) Latest(command string) (*Record, error) {
	rs, err := s.List(Filter{Command: command, Limit: 1, WithDoc: true})
	if err != nil {
		return nil, err
	}
	if len(rs) == 0 {
		what := "result"
		if command != "" {
			what = command + " result"
		}
		return nil, fmt.Errorf("%w: no %s in the history", ErrNotFound, what)
	}
	return &rs[0], nil
}

// IsNotFound reports whether err says a result was not found.
func IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }
