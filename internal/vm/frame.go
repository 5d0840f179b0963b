package vm

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"sync"
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

// errShortRead is what readFrame returns when the stream ends.
var errShortRead = errors.New("vm channel: closed")

// readFrame returns the next intact frame, skipping anything else.
func readFrame(r *bufio.Reader) (frame, error) {
	for {
		// Find the magic.
		matched := 0
		for matched < len(frameMagic) {
			c, err := r.ReadByte()
			if err != nil {
				return frame{}, errShortRead
			}
			switch {
			case c == frameMagic[matched]:
				matched++
			case c == frameMagic[0]:
				matched = 1
			default:
				matched = 0
			}
		}
		hdr := make([]byte, 9)
		if _, err := io.ReadFull(r, hdr); err != nil {
			return frame{}, errShortRead
		}
		n := binary.BigEndian.Uint32(hdr[5:])
		if n > maxPayload {
			continue // not a frame: look for the next magic
		}
		rest := make([]byte, int(n)+4)
		if _, err := io.ReadFull(r, rest); err != nil {
			return frame{}, errShortRead
		}
		sum := crc32.NewIEEE()
		sum.Write(hdr)
		sum.Write(rest[:n])
		if sum.Sum32() != binary.BigEndian.Uint32(rest[n:]) {
			continue
		}
		return frame{typ: hdr[0], id: binary.BigEndian.Uint32(hdr[1:5]), payload: rest[:n]}, nil
	}
}
