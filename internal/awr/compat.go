package awr

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Reports of different databases, or of one database on different
// releases, measure different things: pooling them under "instance 1"
// would give verdicts about nothing. Compare keeps every database apart
// (instances are matched within one DB id), and Comparable tells a caller
// that refuses to mix them what is mixed.

// ErrMixed marks reports of more than one database or release.
var ErrMixed = errors.New("reports of different databases or releases")

// Database is one database of the reports compared: its DB id, its name,
// the releases its reports print and how many reports each side has.
type Database struct {
	ID       string   `json:"db_id"`
	Name     string   `json:"db_name"`
	Releases []string `json:"releases"`
	Before   int      `json:"reports_before"`
	After    int      `json:"reports_after"`
}

// databases lists the databases of the reports, by DB id, in the order
// they first came.
func databases(before, after []Report) []Database {
	var out []Database
	add := func(reps []Report, isAfter bool) {
		for _, r := range reps {
			i := dbIndex(out, r.DBID)
			if i < 0 {
				out = append(out, Database{ID: r.DBID, Name: r.DBName, Releases: []string{}})
				i = len(out) - 1
			}
			d := &out[i]
			if r.Release != "" && !slices.Contains(d.Releases, r.Release) {
				d.Releases = append(d.Releases, r.Release)
			}
			if isAfter {
				d.After++
			} else {
				d.Before++
			}
		}
	}
	add(before, false)
	add(after, true)
	return out
}

// Comparable returns nil when every report is of one database (one DB id)
// and one release, else an error wrapping ErrMixed that names them with a
// file of each.
func Comparable(before, after []Report) error {
	all := append(append([]Report(nil), before...), after...)
	var ids, rels []string
	seenID, seenRel := map[string]bool{}, map[string]bool{}
	for _, r := range all {
		if !seenID[r.DBID] {
			seenID[r.DBID] = true
			ids = append(ids, fmt.Sprintf("DB id %s (%s, %s)", orNone(r.DBID), orNone(r.DBName), r.File))
		}
		if !seenRel[r.Release] {
			seenRel[r.Release] = true
			rels = append(rels, fmt.Sprintf("release %s (%s)", orNone(r.Release), r.File))
		}
	}
	switch {
	case len(ids) > 1:
		return fmt.Errorf("%w: %d databases: %s", ErrMixed, len(ids), strings.Join(ids, ", "))
	case len(rels) > 1:
		return fmt.Errorf("%w: one database on %d releases: %s", ErrMixed, len(rels), strings.Join(rels, ", "))
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// instKey is an instance of one database.
type instKey struct {
	db string
	n  int
}

// sortKeys orders instances by database (in the order of dbs), then by
// number.
func sortKeys(keys []instKey, dbs []Database) {
	sort.SliceStable(keys, func(i, j int) bool {
		if a, b := dbIndex(dbs, keys[i].db), dbIndex(dbs, keys[j].db); a != b {
			return a < b
		}
		return keys[i].n < keys[j].n
	})
}

// dbIndex is the index of the database with DB id id in dbs, or -1.
func dbIndex(dbs []Database, id string) int {
	return slices.IndexFunc(dbs, func(d Database) bool { return d.ID == id })
}

func dbName(dbs []Database, id string) string {
	if i := dbIndex(dbs, id); i >= 0 {
		return dbs[i].Name
	}
	return ""
}

// Mixed reports whether the diff covers more than one database or one
// database on more than one release.
func (d *Diff) Mixed() bool {
	return len(d.Databases) > 1 || len(d.Databases) == 1 && len(d.Databases[0].Releases) > 1
}

// Unmatched lists the databases with reports on one side only: nothing of
// theirs was compared.
func (d *Diff) Unmatched() []string {
	var out []string
	for _, db := range d.Databases {
		if db.Before == 0 || db.After == 0 {
			side := "after"
			if db.After == 0 {
				side = "before"
			}
			out = append(out, fmt.Sprintf("database %s (DB id %s) has reports %s the change only: not compared", orNone(db.Name), orNone(db.ID), side))
		}
	}
	return out
}

// oneEach reports whether every database with reports on both sides has
// one report per side (with one database: one report before, one after).
func oneEach(dbs []Database) bool {
	both := false
	for _, d := range dbs {
		if d.Before > 0 && d.After > 0 {
			both = true
			if d.Before != 1 || d.After != 1 {
				return false
			}
		}
	}
	return both
}
