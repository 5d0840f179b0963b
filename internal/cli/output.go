package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"

	"github.com/interlink/interlink/internal/atomicfile"
	"github.com/interlink/interlink/internal/drift"
	"github.com/interlink/interlink/internal/readfile"
	"github.com/interlink/interlink/internal/report"
	"github.com/interlink/interlink/internal/store"
	"github.com/interlink/interlink/internal/termtext"
)

// outputFlags are the flags every command with a typed result shares:
// --html writes the result as a self-contained HTML report; --save (and
// --save-as NAME, --label K=V) records it in the results history at --db.
type outputFlags struct {
	html   string
	save   bool
	saveAs string
	labels []string
	db     string
	fs     *pflag.FlagSet // to tell an empty --save-as from none
}

// saving reports whether the result goes into the history.
func (o *outputFlags) saving() bool { return o.save || o.saveAs != "" }

func (o *outputFlags) add(fs *pflag.FlagSet) {
	o.fs = fs
	fs.StringVar(&o.html, "html", "", "also write the result as a self-contained HTML report to FILE")
	fs.BoolVar(&o.save, "save", false, "record the result in the results history (see 'interlink history')")
	fs.StringVar(&o.saveAs, "save-as", "", "record the result and name it NAME, a baseline for 'interlink diff NAME'")
	fs.StringArrayVar(&o.labels, "label", nil, "with --save: label the result KEY=VALUE (repeatable)")
	addDBFlag(fs, &o.db)
}

func addDBFlag(fs *pflag.FlagSet, db *string) {
	fs.StringVar(db, "db", "", "the results history (default $XDG_DATA_HOME/interlink/history.db)")
}

var (
	labelRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}=[^\x00-\x1f\x7f]{0,256}$`)
	nameRE  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$`)
)

// check validates the flags before any work, so that a long run does not
// end in a report or a history that cannot be written. It changes nothing
// (commands pass their flags by value).
func (o *outputFlags) check(cmd string) error {
	if o.html != "" {
		if err := writableDir(o.html); err != nil {
			return usageError("%s: --html %s: %v", cmd, termtext.Clean(o.html), err)
		}
	}
	if o.saveAs == "" && o.fs != nil && o.fs.Changed("save-as") {
		// --save-as "$NAME" with NAME unset ran and saved nothing.
		return usageError("%s: --save-as is empty: want a NAME (or --save for no name)", cmd)
	}
	if o.saveAs != "" && !nameRE.MatchString(o.saveAs) {
		return usageError("%s: --save-as %q: want a name of letters, digits and _.:- starting with a letter (not a number, which would read as a result id)", cmd, termtext.Clean(o.saveAs))
	}
	if len(o.labels) > 0 && !o.saving() {
		return usageError("%s: --label goes with --save or --save-as", cmd)
	}
	for _, l := range o.labels {
		if !labelRE.MatchString(l) {
			return usageError("%s: --label %q: want KEY=VALUE (KEY of letters, digits and _.-)", cmd, termtext.Clean(l))
		}
	}
	if o.saving() {
		// Checked, not opened: a run refused later for bad input must
		// not leave a new, empty history behind.
		db, err := historyPath(cmd, o.db)
		if err != nil {
			return err
		}
		if err := store.Check(db); err != nil {
			return usageError("%s: --db %s: %s", cmd, termtext.Clean(db), termtext.Clean(err.Error()))
		}
	}
	return nil
}

func cutLabel(l string) (string, string, bool) {
	for i := range l {
		if l[i] == '=' {
			return l[:i], l[i+1:], true
		}
	}
	return l, "", false
}

// historyPath is --db, or the default history when it is empty.
func historyPath(cmd, db string) (string, error) {
	if db != "" {
		return db, nil
	}
	db, err := store.DefaultPath()
	if err != nil {
		return "", usageError("%s: %v", cmd, err)
	}
	return db, nil
}

// openStore opens the history at db (or the default) with open
// (store.Open to save, store.OpenRead to read), as bad input (exit 3, one
// line) when the file is not a history.
func openStore(cmd, db string, open func(string) (*store.Store, error)) (*store.Store, error) {
	db, err := historyPath(cmd, db)
	if err != nil {
		return nil, err
	}
	st, err := open(db)
	if err != nil {
		return nil, usageError("%s: --db %s: %s", cmd, termtext.Clean(db), termtext.Clean(err.Error()))
	}
	return st, nil
}

// emit writes what the flags ask for of res, a typed result: the HTML
// report and the history record. The result has been printed before, so
// a failure here loses nothing that was measured.
func (o *outputFlags) emit(e *env, cmd, title string, res any) error {
	if o.html != "" {
		if err := writeHTML(o.html, report.Page{Title: title, Generated: time.Now(), Results: []any{res}}); err != nil {
			return fmt.Errorf("%s: --html: %w", cmd, err)
		}
	}
	if !o.saving() {
		return nil
	}
	labels := map[string]string{}
	for _, l := range o.labels {
		k, v, _ := cutLabel(l)
		labels[k] = v
	}
	doc, err := json.Marshal(res)
	if err != nil {
		return fmt.Errorf("%s: --save: %w", cmd, err)
	}
	var head struct {
		Schema string `json:"schema"`
	}
	_ = json.Unmarshal(doc, &head)
	host, _ := os.Hostname()
	rec := &store.Record{Time: time.Now(), Host: host, Command: cmd, Schema: head.Schema, Args: e.args, Labels: labels,
		Name: o.saveAs, Summary: drift.Summary(res), Doc: doc}
	st, err := openStore(cmd, o.db, store.Open)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.Save(rec); err != nil {
		return fmt.Errorf("%s: --save: %s: %s (the result above was not recorded)", cmd, termtext.Clean(st.Path()), termtext.Clean(err.Error()))
	}
	name := ""
	if rec.Name != "" {
		name = fmt.Sprintf(" as %q", rec.Name)
	}
	fmt.Fprintf(e.stderr, "interlink: saved %s result %d%s in %s\n", cmd, rec.ID, name, termtext.Clean(st.Path()))
	return nil
}

// writableDir checks that path's directory exists and is writable, and
// that path, if it exists, is a regular file: the file is replaced by a
// rename, which would put a regular file in the place of a directory,
// /dev/null or a named pipe (as root, /dev/stdout too; atomicfile refuses
// that as well; here it is bad input, found before any work). A link is
// written through (atomicfile.Resolve), so its target's directory counts.
func writableDir(path string) error {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("is %s, not a file to write", readfile.Kind(fi.Mode()))
	}
	dir := filepath.Dir(atomicfile.Resolve(path)) // where the rename happens
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("directory %s: %w", dir, errors.Unwrap(err))
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	// A directory this process may not write (its mode, a read-only
	// mount) is found now, not after the run whose result it would hold.
	if err := unix.Access(dir, unix.W_OK); err != nil {
		return fmt.Errorf("directory %s: %w", dir, err)
	}
	return nil
}

// notInput refuses an output path that names one of the inputs (by
// os.SameFile, so a link or another spelling counts too): 'awr
// awrrpt.html --html awrrpt.html' replaced the AWR report with the page
// made from it, 'report r.json -o r.json' the result.
func notInput(cmd, flag, out string, inputs []string) error {
	ofi, err := os.Stat(out)
	if out == "" || err != nil {
		return nil
	}
	for _, in := range inputs {
		if fi, err := os.Stat(in); err == nil && os.SameFile(ofi, fi) {
			return usageError("%s: %s %s is also an input; write the report to another file", cmd, flag, termtext.Clean(out))
		}
	}
	return nil
}

// writeHTML renders p into a temporary file beside path and renames it
// into place, so a failure leaves no half-written report behind.
func writeHTML(path string, p report.Page) error {
	return atomicfile.Write(path, atomicfile.Options{}, func(w io.Writer) error { return report.HTML(w, p) })
}
