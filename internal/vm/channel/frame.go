package channel

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"sync"
	"time"
)

// The command channel is a byte stream (a serial line) that can carry
// leftovers: output of a command whose caller went away is still in the
// line when the next caller connects. Every frame therefore starts with a
// magic, carries the id of its command and ends with a CRC-32, and a
// reader skips whatever is not a whole, intact frame.
//
//	magic "ILvm" | type (1) | id (4) | length (4) | payload | crc32 (4)
//
// big-endian; the CRC covers type, id, length and payload.
const (
	Magic = "ILvm"
	// MaxPayload bounds a frame, so a damaged length cannot make a
	// reader wait for gigabytes.
	MaxPayload = 64 << 10
	// HeaderLen is the length of a frame before its payload: magic,
	// type, id, length.
	HeaderLen = len(Magic) + 9
)

// Frame is one frame: its type (Hello, Request, ...), the id of the call
// it belongs to, and its payload (at most MaxPayload bytes).
type Frame struct {
	Type    byte
	ID      uint32
	Payload []byte
}

// Append appends f, encoded, to buf.
func Append(buf []byte, f Frame) []byte {
	start := len(buf)
	buf = append(buf, Magic...)
	buf = append(buf, f.Type)
	buf = binary.BigEndian.AppendUint32(buf, f.ID)
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(f.Payload)))
	buf = append(buf, f.Payload...)
	return binary.BigEndian.AppendUint32(buf, crc32.ChecksumIEEE(buf[start+len(Magic):]))
}

// Writer writes whole frames, one at a time, from any goroutine.
type Writer struct {
	mu sync.Mutex
	w  io.Writer
}

// NewWriter returns a Writer on w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Send writes f in one Write.
func (fw *Writer) Send(f Frame) error {
	if len(f.Payload) > MaxPayload {
		return fmt.Errorf("vm channel: frame of %d bytes", len(f.Payload))
	}
	buf := Append(make([]byte, 0, HeaderLen+len(f.Payload)+4), f)
	fw.mu.Lock()
	defer fw.mu.Unlock()
	_, err := fw.w.Write(buf)
	return err
}

// Data sends b as frames of type typ no larger than MaxPayload.
func (fw *Writer) Data(typ byte, id uint32, b []byte) error {
	for len(b) > 0 {
		n := min(len(b), MaxPayload)
		if err := fw.Send(Frame{Type: typ, ID: id, Payload: b[:n]}); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// ErrClosed is what Reader.Next returns when the stream ends.
var ErrClosed = errors.New("vm channel: closed")

// PartialFrameTimeout is how long the guest waits for more of a request
// whose start it has. The host writes a frame in one go, so its rest
// follows at once unless it never will: a caller that went away before
// qemu read all of its request (qemu drops the unread rest) leaves the
// start of a frame in the guest's line, whose length would otherwise
// swallow the next caller's frame. (A var for tests.)
var PartialFrameTimeout = time.Second

// Reader reads frames from a line that can carry leftovers.
type Reader struct {
	r *bufio.Reader
	// deadline, when set (GiveUpOnCut), bounds the wait for a frame's
	// rest.
	deadline func(time.Time) error
	// off counts the bytes consumed, frames and skipped bytes alike.
	off int64
}

// NewReader returns a Reader of src.
func NewReader(src io.Reader) *Reader {
	return &Reader{r: bufio.NewReaderSize(src, HeaderLen+MaxPayload+4)}
}

// GiveUpOnCut makes the reader skip a frame whose rest stops coming for
// PartialFrameTimeout, where src has read deadlines (a tty the runtime can
// poll, a socket). The guest's side only: the host reads the guest's
// output, which is never cut short but can stall with the guest, and a
// stalled frame must not be dropped.
func (fr *Reader) GiveUpOnCut(src io.Reader) {
	if d, ok := src.(interface{ SetReadDeadline(time.Time) error }); ok && d.SetReadDeadline(time.Time{}) == nil {
		fr.deadline = d.SetReadDeadline
	}
}

// Next returns the next intact frame, or ErrClosed once the line ended. Whatever is not one is skipped: it
// looks for the magic again from the byte after the one where a damaged
// frame, a frame cut short or a magic inside a payload started, so the
// frame that follows is never lost.
func (fr *Reader) Next() (Frame, error) {
	for {
		b, err := fr.r.Peek(len(Magic))
		if err != nil {
			return Frame{}, ErrClosed
		}
		if string(b) != Magic {
			fr.skip()
			continue
		}
		f, ok, err := fr.whole()
		if err != nil {
			return Frame{}, err
		}
		if ok {
			return f, nil
		}
		fr.skip()
	}
}

// skip consumes one byte: the search for the magic goes on from the next.
func (fr *Reader) skip() {
	n, _ := fr.r.Discard(1)
	fr.off += int64(n)
}

// whole reads the frame starting at the magic the reader is at: ok false
// when it is not a whole, intact frame (nothing consumed then).
func (fr *Reader) whole() (Frame, bool, error) {
	hdr, err := fr.peek(HeaderLen)
	if err != nil {
		return Frame{}, false, fr.cut(err)
	}
	n := int(binary.BigEndian.Uint32(hdr[HeaderLen-4:]))
	if n > MaxPayload {
		return Frame{}, false, nil
	}
	b, err := fr.peek(HeaderLen + n + 4)
	if err != nil {
		return Frame{}, false, fr.cut(err)
	}
	body := b[len(Magic) : HeaderLen+n]
	if crc32.ChecksumIEEE(body) != binary.BigEndian.Uint32(b[HeaderLen+n:]) {
		return Frame{}, false, nil
	}
	f := Frame{Type: body[0], ID: binary.BigEndian.Uint32(body[1:5]), Payload: append([]byte(nil), body[9:]...)}
	fr.r.Discard(HeaderLen + n + 4)
	fr.off += int64(HeaderLen + n + 4)
	return f, true, nil
}

// peek waits for the next n bytes as long as they keep coming: it gives
// up (os.ErrDeadlineExceeded) only after PartialFrameTimeout without a
// byte, so a long frame on a slow line (a guest in software emulation
// under load) is not taken for a cut one. A last short look follows the
// timeout: a guest whose CPU was not run for a while sees its timer and
// the waiting bytes at once, and must not lose the race to the timer.
func (fr *Reader) peek(n int) ([]byte, error) {
	if fr.deadline == nil {
		return fr.r.Peek(n)
	}
	defer fr.deadline(time.Time{})
	wait := PartialFrameTimeout
	for have := fr.r.Buffered(); ; have = fr.r.Buffered() {
		fr.deadline(time.Now().Add(wait))
		b, err := fr.r.Peek(n)
		switch {
		case !errors.Is(err, os.ErrDeadlineExceeded):
			return b, err
		case fr.r.Buffered() > have:
			wait = PartialFrameTimeout
		case wait == PartialFrameTimeout:
			wait = PartialFrameTimeout / 10
		default:
			return b, err
		}
	}
}

// cut is what a failed wait for a frame's rest means: nil (skip it and
// look on) when the rest did not come in time, or when the line ended
// before it (a frame cut short at the end can still have whole frames
// inside what it claimed); else the line failed.
func (fr *Reader) cut(err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, io.EOF) {
		return nil
	}
	return ErrClosed
}
