// Package textout is the one way interlink's text renderers write: through
// a Writer that keeps the first error and writes nothing after it, so a
// renderer prints line by line as plainly as with fmt.Fprintf and still
// returns whether the whole text got out (a full disk, a closed file).
//
// The convention across packages: a text renderer is
//
//	func (r *Result) WriteText(out io.Writer) error {
//		w := textout.New(out)
//		fmt.Fprintf(w, ...) // as many as it takes, errors unchecked
//		return w.Err()
//	}
//
// and the command returns that error, which exits 3 with one line.
package textout

import (
	"io"
)

// Writer passes writes to the writer it wraps until one fails; from then
// on every write returns that first error without writing. It is not safe
// for concurrent use (nor are the writers it wraps, as a rule).
type Writer struct {
	w   io.Writer
	err error
}

// New returns a Writer over w, or w itself when it is a Writer already
// (a renderer called by another then shares its latch).
func New(w io.Writer) *Writer {
	if lw, ok := w.(*Writer); ok {
		return lw
	}
	return &Writer{w: w}
}

// Write writes p unless an earlier write failed. A short write without an
// error counts as io.ErrShortWrite.
func (w *Writer) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	n, err := w.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	w.err = err
	return n, err
}

// WriteString writes s unless an earlier write failed.
func (w *Writer) WriteString(s string) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	return w.Write([]byte(s))
}

// Err returns the first error a write met, nil when all went out.
func (w *Writer) Err() error { return w.err }

// Underlying returns the writer under any Writers wrapping out: a
// terminal check, or a child process's stdout, wants the file itself.
func Underlying(out io.Writer) io.Writer {
	for {
		lw, ok := out.(*Writer)
		if !ok {
			return out
		}
		out = lw.w
	}
}
