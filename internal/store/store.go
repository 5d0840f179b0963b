// Package store is the results history: every result saved with --save,
// with when, where and how it was made, in one SQLite file (pure Go,
// modernc.org/sqlite) at $XDG_DATA_HOME/interlink/history.db or --db.
//
// Several interlink processes may save at once (a cron mesh while an
// operator benches): each save is one IMMEDIATE transaction, and a writer
// that finds the file locked waits up to BusyTimeout. The file keeps the
// rollback journal rather than WAL, because WAL needs shared memory that
// NFS home directories do not give. A file that is not an interlink
// history (corrupt, or another program's database) is refused with
// ErrNotHistory and left exactly as it was.
package store

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/interlink/interlink/internal/readfile"
)

// ErrNotHistory marks a file that is not an interlink results history.
var ErrNotHistory = errors.New("not an interlink history database")

// ErrNotFound marks a result id or name the history does not hold.
var ErrNotFound = errors.New("no such result")

// BusyTimeout is how long a writer waits for another to finish.
const BusyTimeout = 15 * time.Second

// appID marks the file as ours (PRAGMA application_id, "ilk1").
const appID = 0x696c6b31

// Record is one saved result.
type Record struct {
	ID      int64             `json:"id"`
	Time    time.Time         `json:"time"`
	Host    string            `json:"host"`
	Command string            `json:"command"` // check, pmtu, mesh, bench, ab, lab demo
	Schema  string            `json:"schema"`
	Args    []string          `json:"args"` // the command line, without the program name
	Labels  map[string]string `json:"labels"`
	// Name is the baseline name given with --save-as, "" for none. A name
	// belongs to one result; naming another moves it.
	Name string `json:"name,omitempty"`
	// Summary is the result's verdict in a few words, for listings.
	Summary string          `json:"summary"`
	Doc     json.RawMessage `json:"result,omitempty"`
}

// Store is an open history. Close it when done.
type Store struct {
	db   *sql.DB
	path string
}

// DefaultPath is $XDG_DATA_HOME/interlink/history.db, or
// ~/.local/share/interlink/history.db without XDG_DATA_HOME.
func DefaultPath() (string, error) {
	dir := os.Getenv("XDG_DATA_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no home directory for the history (give --db PATH): %w", err)
		}
		dir = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(dir, "interlink", "history.db"), nil
}

// Open opens the history at path to save in it, creating it (and its
// directory, mode 0700) when absent. A path that is not a regular file (a
// named pipe, a device) is refused.
func Open(path string) (*Store, error) {
	if !haveDriver {
		return nil, fmt.Errorf("results history: %w on this system", errors.ErrUnsupported)
	}
	if _, err := regular(path, os.O_RDWR); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		return nil, err
	}
	s := &Store{db: db, path: path}
	if err := s.init(); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// OpenRead opens the history at path to read it, creating and changing
// nothing (history and diff only read; a mistyped --db must not leave a
// new file behind). A path that does not exist and an empty file are an
// empty history: List finds nothing, Get and the others ErrNotFound.
func OpenRead(path string) (*Store, error) {
	if !haveDriver {
		return nil, fmt.Errorf("results history: %w on this system", errors.ErrUnsupported)
	}
	fi, err := regular(path, os.O_RDONLY)
	if errors.Is(err, fs.ErrNotExist) {
		return &Store{path: path}, nil
	}
	if err != nil {
		return nil, err
	}
	if fi.Size() == 0 {
		return &Store{path: path}, nil
	}
	db, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		return nil, err
	}
	id, tables, err := kind(db)
	switch {
	case err != nil:
		db.Close()
		return nil, notHistory(err)
	case tables > 0 && id != appID:
		db.Close()
		return nil, notOurs(id)
	case tables == 0:
		db.Close()
		return &Store{path: path}, nil
	}
	return &Store{db: db, path: path}, nil
}

// Check says, changing nothing, whether Open(path) can save a result: an
// existing file must be a history this process can read and write, else
// the nearest directory above path that exists must be writable (Open
// makes the rest). Commands call it before a run, so that a run does not
// end in a history that cannot be written, nor leave an empty one behind
// when the run itself is refused.
func Check(path string) error {
	if _, err := regular(path, os.O_RDWR); err == nil {
		s, err := OpenRead(path)
		if err != nil {
			return err
		}
		return s.Close()
	} else if !absent(err) {
		return err
	}
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		fi, err := os.Stat(dir)
		switch {
		case err == nil && !fi.IsDir():
			return fmt.Errorf("%s is not a directory", dir)
		case err == nil:
			if err := unix.Access(dir, unix.W_OK|unix.X_OK); err != nil {
				return fmt.Errorf("directory %s: %w", dir, err)
			}
			return nil
		case !absent(err) || filepath.Dir(dir) == dir:
			return err
		}
	}
}

// absent says whether err means nothing is at the path: it does not
// exist, or a file stands where a directory of it should be (the walk up
// in Check then names that file).
func absent(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ENOTDIR)
}

// regular stats path and refuses anything but a regular file (SQLite
// says only "disk I/O error" of a named pipe or a device), then opens it
// with flag and closes it again, so that a file this process may not
// read or write is named with the system's reason rather than SQLite's
// "unable to open database file".
func regular(path string, flag int) (fs.FileInfo, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is %s, not a history file", path, readfile.Kind(fi.Mode()))
	}
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		return nil, err
	}
	return fi, f.Close()
}

// dsn is the driver's name for the file at path: the rollback journal,
// writers waiting up to BusyTimeout; read-only when ro.
func dsn(path string, ro bool) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", BusyTimeout.Milliseconds()))
	if ro {
		q.Set("mode", "ro")
	} else {
		q.Add("_pragma", "foreign_keys(1)")
		q.Set("_txlock", "immediate")
	}
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}

// querier is what kind reads through: the database or a transaction.
type querier interface {
	QueryRow(query string, args ...any) *sql.Row
}

// kind reads the file's application id and how many tables it holds.
func kind(q querier) (id, tables int, err error) {
	if err = q.QueryRow("PRAGMA application_id").Scan(&id); err != nil {
		return
	}
	err = q.QueryRow("SELECT count(*) FROM sqlite_schema").Scan(&tables)
	return
}

// notOurs is the error for another program's SQLite database.
func notOurs(id int) error {
	return fmt.Errorf("%w: another program's SQLite database (application_id %#x); the file was left as it is", ErrNotHistory, id)
}

// Path is where the history lives.
func (s *Store) Path() string { return s.path }

// Close closes the database.
func (s *Store) Close() error {
	if s.db == nil { // OpenRead's empty history
		return nil
	}
	return s.db.Close()
}

// init checks that the file is ours (or empty) and creates the tables,
// in one IMMEDIATE transaction: concurrent first opens take turns, and
// each sees the file whole (never another's half-made history).
func (s *Store) init() error {
	tx, err := s.db.Begin()
	if err != nil {
		return notHistory(err)
	}
	defer tx.Rollback()
	id, tables, err := kind(tx)
	if err != nil {
		return notHistory(err)
	}
	if tables > 0 && id != appID {
		return notOurs(id)
	}
	if id == appID {
		return notHistory(tx.Commit()) // ours and made: nothing to create
	}
	for _, stmt := range []string{
		fmt.Sprintf("PRAGMA application_id = %d", appID),
		"PRAGMA user_version = 1",
		`CREATE TABLE IF NOT EXISTS results (
			id      INTEGER PRIMARY KEY AUTOINCREMENT,
			time    TEXT NOT NULL,
			host    TEXT NOT NULL,
			command TEXT NOT NULL,
			schema  TEXT NOT NULL,
			args    TEXT NOT NULL,
			name    TEXT UNIQUE,
			summary TEXT NOT NULL,
			doc     TEXT NOT NULL)`,
		`CREATE TABLE IF NOT EXISTS labels (
			result INTEGER NOT NULL REFERENCES results(id) ON DELETE CASCADE,
			key    TEXT NOT NULL,
			value  TEXT NOT NULL,
			PRIMARY KEY (result, key))`,
		`CREATE INDEX IF NOT EXISTS results_command ON results(command, host, id)`,
	} {
		if _, err := tx.Exec(stmt); err != nil {
			return notHistory(err)
		}
	}
	return notHistory(tx.Commit())
}

// notHistory marks SQLite's "not a database" and "malformed" errors.
func notHistory(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if strings.Contains(msg, "not a database") || strings.Contains(msg, "malformed") || strings.Contains(msg, "corrupt") {
		return fmt.Errorf("%w (%s); the file was left as it is", ErrNotHistory, sqliteMsg(msg))
	}
	return err
}

// sqliteMsg is the message SQLite gives, without the driver's prefixes
// and its numeric code ("file is not a database (26)").
func sqliteMsg(s string) string {
	if i := strings.LastIndex(s, ": "); i >= 0 {
		s = s[i+2:]
	}
	return codeRE.ReplaceAllString(s, "")
}

var codeRE = regexp.MustCompile(`\s*\(\d+\)$`)

// Save records r (its ID is set) in one transaction. A Name given moves
// that name to r.
func (s *Store) Save(r *Record) error {
	if s.db == nil {
		return fmt.Errorf("save in %s: the history was opened to read", s.path)
	}
	args, err := json.Marshal(r.Args)
	if err != nil {
		return err
	}
	tx, err := s.db.Begin()
	if err != nil {
		return notHistory(err)
	}
	defer tx.Rollback()
	var name any
	if r.Name != "" {
		name = r.Name
		if _, err := tx.Exec("UPDATE results SET name = NULL WHERE name = ?", r.Name); err != nil {
			return notHistory(err)
		}
	}
	res, err := tx.Exec("INSERT INTO results (time, host, command, schema, args, name, summary, doc) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
		r.Time.UTC().Format(time.RFC3339Nano), r.Host, r.Command, r.Schema, string(args), name, r.Summary, string(r.Doc))
	if err != nil {
		return notHistory(err)
	}
	if r.ID, err = res.LastInsertId(); err != nil {
		return err
	}
	for k, v := range r.Labels {
		if _, err := tx.Exec("INSERT INTO labels (result, key, value) VALUES (?, ?, ?)", r.ID, k, v); err != nil {
			return notHistory(err)
		}
	}
	return notHistory(tx.Commit())
}
