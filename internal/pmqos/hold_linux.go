package pmqos

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"sync"
)

// Hold is a CPU-latency request held open. Close ends it; the kernel ends
// it too when the process dies.
type Hold struct {
	us int32
	mu sync.Mutex
	f  *os.File // nil once closed
}

// Open requests that no CPU enters an idle state with an exit latency
// above us microseconds, until Close. It needs write access to Path
// (root, as a rule).
func Open(us int32) (*Hold, error) {
	if us < 0 || us >= MaxUS {
		return nil, fmt.Errorf("pmqos: %d us: %w", us, ErrBadValue)
	}
	f, err := os.OpenFile(Path, os.O_WRONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("pmqos: %w", err)
	}
	var b [4]byte
	binary.NativeEndian.PutUint32(b[:], uint32(us))
	if _, err := f.Write(b[:]); err != nil {
		f.Close()
		return nil, fmt.Errorf("pmqos: write %s: %w", Path, err)
	}
	return &Hold{us: us, f: f}, nil
}

// US is the value the hold requests.
func (h *Hold) US() int32 { return h.us }

// Close ends the request; a second Close does nothing.
func (h *Hold) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.f == nil {
		return nil
	}
	err := h.f.Close()
	h.f = nil
	return err
}

// Current reads the kernel's aggregate CPU-latency request: the smallest
// value any process holds, MaxUS when none does. Reading opens a request
// of its own with the default value, which constrains nothing.
func Current() (int32, error) {
	f, err := os.Open(Path)
	if err != nil {
		return 0, fmt.Errorf("pmqos: %w", err)
	}
	defer f.Close()
	var b [4]byte
	if _, err := io.ReadFull(f, b[:]); err != nil {
		return 0, fmt.Errorf("pmqos: read %s: %w", Path, err)
	}
	return int32(binary.NativeEndian.Uint32(b[:])), nil
}
