package cli

import (
	"io"
	"os"
)

// isTerminal reports whether w is a terminal: progress goes there, never
// into a pipe or a file.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
