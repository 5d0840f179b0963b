package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"github.com/interlink/interlink/internal/report"
	"github.com/interlink/interlink/internal/termtext"
)

// outputFlags are the flags every command with a typed result shares:
// --html writes the result as a self-contained HTML report.
type outputFlags struct {
	html string
}

func (o *outputFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&o.html, "html", "", "also write the result as a self-contained HTML report to FILE")
}

// check validates the flags before any work, so that a long run does not
// end in a report that cannot be written.
func (o *outputFlags) check(cmd string) error {
	if o.html == "" {
		return nil
	}
	if err := writableDir(o.html); err != nil {
		return usageError("%s: --html %s: %v", cmd, termtext.Clean(o.html), err)
	}
	return nil
}

// emit writes what the flags ask for of res, a typed result.
func (o *outputFlags) emit(cmd, title string, res any) error {
	if o.html == "" {
		return nil
	}
	if err := writeHTML(o.html, report.Page{Title: title, Generated: time.Now(), Results: []any{res}}); err != nil {
		return fmt.Errorf("%s: --html: %w", cmd, err)
	}
	return nil
}

// writableDir checks that path's directory exists and path is not a
// directory itself.
func writableDir(path string) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return errors.New("is a directory")
	}
	fi, err := os.Stat(filepath.Dir(path))
	if err != nil {
		return fmt.Errorf("directory %s: %w", filepath.Dir(path), errors.Unwrap(err))
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", filepath.Dir(path))
	}
	return nil
}

// writeHTML renders p into a temporary file beside path and renames it
// into place, so a failure leaves no half-written report behind.
func writeHTML(path string, p report.Page) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".interlink-report-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := report.HTML(tmp, p); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
