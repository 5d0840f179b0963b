package cli

import (
	"io"
	"os"

	"github.com/interlink/interlink/internal/textout"
)

// isTerminal reports whether w is a terminal: progress goes there, never
// into a pipe or a file.
func isTerminal(w io.Writer) bool {
	f, ok := textout.Underlying(w).(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// showProgress reports whether a command shows progress on stderr: only on
// a terminal, and never with --json, whose readers want the document alone
// (a terminal that runs `interlink ... --json | jq` still shows stderr).
func showProgress(e *env, asJSON bool) bool { return !asJSON && isTerminal(e.stderr) }
