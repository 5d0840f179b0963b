package vm

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
	frameMagic = "ILvm"
	// maxPayload bounds a frame, so a damaged length cannot make a
	// reader wait for gigabytes.
	maxPayload = 64 << 10

	frameRequest = 'R' // host -> guest: JSON request, starts a command
	frameSignal  = 'K' // host -> guest: one byte, a signal for the command
	frameStdout  = 'O' // guest -> host: output
	frameStderr  = 'E' // guest -> host: error output
	frameExit    = 'X' // guest -> host: JSON exit, the command's last frame
	frameQuery   = 'Q' // host -> guest: JSON []ServiceProbe, asks about its services
	frameAnswer  = 'A' // guest -> host: JSON []ServiceAnswer, the query's only frame
)

type frame struct {
	typ     byte
	id      uint32
	payload []byte
}

// Request is a command the host asks the guest to run.
type Request struct {
	Argv []string `json:"argv"`
	Env  []string `json:"env,omitempty"` // added to the guest's environment
}

// exitFrame is how a command ended: its exit code (128+N when killed by
// signal N), or Error when it could not start (Code is 127 then).
type exitFrame struct {
	Code  int    `json:"code"`
	Error string `json:"error,omitempty"`
}

// frameWriter writes whole frames, one at a time, from any goroutine.
type frameWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (fw *frameWriter) send(f frame) error {
	if len(f.payload) > maxPayload {
		return fmt.Errorf("vm channel: frame of %d bytes", len(f.payload))
	}
	buf := make([]byte, 0, len(frameMagic)+13+len(f.payload)+4)
	buf = append(buf, frameMagic...)
	buf = append(buf, f.typ)
	buf = binary.BigEndian.AppendUint32(buf, f.id)
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(f.payload)))
	buf = append(buf, f.payload...)
	buf = binary.BigEndian.AppendUint32(buf, crc32.ChecksumIEEE(buf[len(frameMagic):]))
	fw.mu.Lock()
	defer fw.mu.Unlock()
	_, err := fw.w.Write(buf)
	return err
}

// data sends b as frames of type typ no larger than maxPayload.
func (fw *frameWriter) data(typ byte, id uint32, b []byte) error {
	for len(b) > 0 {
		n := min(len(b), maxPayload)
		if err := fw.send(frame{typ: typ, id: id, payload: b[:n]}); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// errShortRead is what frameReader.next returns when the stream ends.
var errShortRead = errors.New("vm channel: closed")

// frameHeader is the length of a frame before its payload: magic, type,
// id, length.
const frameHeader = len(frameMagic) + 9

// partialFrameTimeout is how long the guest waits for more of a request
// whose start it has. The host writes a frame in one go, so its rest
// follows at once unless it never will: a caller that went away before
// qemu read all of its request (qemu drops the unread rest) leaves the
// start of a frame in the guest's line, whose length would otherwise
// swallow the next caller's frame. (A var for tests.)
var partialFrameTimeout = time.Second

// frameReader reads frames from a line that can carry leftovers.
type frameReader struct {
	r *bufio.Reader
	// deadline, when set (giveUpOnCut), bounds the wait for a frame's
	// rest.
	deadline func(time.Time) error
}

func newFrameReader(src io.Reader) *frameReader {
	return &frameReader{r: bufio.NewReaderSize(src, frameHeader+maxPayload+4)}
}

// giveUpOnCut makes the reader skip a frame whose rest stops coming for
// partialFrameTimeout, where src has read deadlines (a tty the runtime can
// poll, a socket). The guest's side only: the host reads the guest's
// output, which is never cut short but can stall with the guest, and a
// stalled frame must not be dropped.
func (fr *frameReader) giveUpOnCut(src io.Reader) {
	if d, ok := src.(interface{ SetReadDeadline(time.Time) error }); ok && d.SetReadDeadline(time.Time{}) == nil {
		fr.deadline = d.SetReadDeadline
	}
}

// next returns the next intact frame. Whatever is not one is skipped: it
// looks for the magic again from the byte after the one where a damaged
// frame, a frame cut short or a magic inside a payload started, so the
// frame that follows is never lost.
func (fr *frameReader) next() (frame, error) {
	for {
		b, err := fr.r.Peek(len(frameMagic))
		if err != nil {
			return frame{}, errShortRead
		}
		if string(b) != frameMagic {
			fr.r.Discard(1)
			continue
		}
		f, ok, err := fr.whole()
		if err != nil {
			return frame{}, err
		}
		if ok {
			return f, nil
		}
		fr.r.Discard(1)
	}
}

// whole reads the frame starting at the magic the reader is at: ok false
// when it is not a whole, intact frame (nothing consumed then).
func (fr *frameReader) whole() (frame, bool, error) {
	hdr, err := fr.peek(frameHeader)
	if err != nil {
		return frame{}, false, fr.cut(err)
	}
	n := int(binary.BigEndian.Uint32(hdr[frameHeader-4:]))
	if n > maxPayload {
		return frame{}, false, nil
	}
	b, err := fr.peek(frameHeader + n + 4)
	if err != nil {
		return frame{}, false, fr.cut(err)
	}
	body := b[len(frameMagic) : frameHeader+n]
	if crc32.ChecksumIEEE(body) != binary.BigEndian.Uint32(b[frameHeader+n:]) {
		return frame{}, false, nil
	}
	f := frame{typ: body[0], id: binary.BigEndian.Uint32(body[1:5]), payload: append([]byte(nil), body[9:]...)}
	fr.r.Discard(frameHeader + n + 4)
	return f, true, nil
}

// peek waits for the next n bytes as long as they keep coming: it gives
// up (os.ErrDeadlineExceeded) only after partialFrameTimeout without a
// byte, so a long frame on a slow line (a guest in software emulation
// under load) is not taken for a cut one. A last short look follows the
// timeout: a guest whose CPU was not run for a while sees its timer and
// the waiting bytes at once, and must not lose the race to the timer.
func (fr *frameReader) peek(n int) ([]byte, error) {
	if fr.deadline == nil {
		return fr.r.Peek(n)
	}
	defer fr.deadline(time.Time{})
	wait := partialFrameTimeout
	for have := fr.r.Buffered(); ; have = fr.r.Buffered() {
		fr.deadline(time.Now().Add(wait))
		b, err := fr.r.Peek(n)
		switch {
		case !errors.Is(err, os.ErrDeadlineExceeded):
			return b, err
		case fr.r.Buffered() > have:
			wait = partialFrameTimeout
		case wait == partialFrameTimeout:
			wait = partialFrameTimeout / 10
		default:
			return b, err
		}
	}
}

// cut is what a failed wait for a frame's rest means: nil (skip it and
// look on) when the rest did not come in time, else the line ended.
func (fr *frameReader) cut(err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return nil
	}
	// A line that ended holds no more frames, even where bytes are left.
	return errShortRead
}
