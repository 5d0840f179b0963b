package textout

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
)

// failAfter accepts n bytes, then fails every write.
type failAfter struct {
	n     int
	buf   bytes.Buffer
	calls int
}

var errFull = errors.New("no space left on device")

func (f *failAfter) Write(p []byte) (int, error) {
	f.calls++
	if f.buf.Len()+len(p) > f.n {
		k := f.n - f.buf.Len()
		f.buf.Write(p[:k])
		return k, errFull
	}
	return f.buf.Write(p)
}

// TestLatch: the first error is kept and returned by Err and every later
// write, which writes nothing more.
func TestLatch(t *testing.T) {
	dst := &failAfter{n: 10}
	w := New(dst)
	fmt.Fprintf(w, "line %d\n", 1)
	fmt.Fprintf(w, "line %d\n", 2) // fails
	fmt.Fprintf(w, "line %d\n", 3)
	io.WriteString(w, "more")
	if !errors.Is(w.Err(), errFull) || dst.calls != 2 || dst.buf.String() != "line 1\nlin" {
		t.Errorf("err %v, %d writes, wrote %q", w.Err(), dst.calls, dst.buf.String())
	}
	if _, err := w.Write([]byte("x")); !errors.Is(err, errFull) {
		t.Errorf("a write after the failure: %v", err)
	}
	// A renderer calling another shares the latch.
	if New(w) != w || Underlying(New(w)) != io.Writer(dst) || Underlying(&Writer{w: w}) != io.Writer(dst) {
		t.Error("New of a Writer is not that Writer")
	}
	var ok bytes.Buffer
	w = New(&ok)
	fmt.Fprintln(w, "all of it")
	if w.Err() != nil || ok.String() != "all of it\n" {
		t.Errorf("%v %q", w.Err(), ok.String())
	}
}

type shortWriter struct{}

func (shortWriter) Write(p []byte) (int, error) { return len(p) / 2, nil }

// TestShortWrite: a writer that takes less than it was given without
// saying why is a failure too.
func TestShortWrite(t *testing.T) {
	w := New(shortWriter{})
	fmt.Fprint(w, "abcd")
	if !errors.Is(w.Err(), io.ErrShortWrite) {
		t.Errorf("%v", w.Err())
	}
}
