package nfs

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// errShort is a reply that ends before its fields do.
var errShort = errors.New("reply too short")

// enc builds XDR (RFC 4506): big-endian 4-byte units, opaque data padded
// to a multiple of 4.
type enc struct{ b []byte }

func (e *enc) u32(v uint32) { e.b = binary.BigEndian.AppendUint32(e.b, v) }
func (e *enc) u64(v uint64) { e.b = binary.BigEndian.AppendUint64(e.b, v) }
func (e *enc) bool(v bool) {
	if v {
		e.u32(1)
	} else {
		e.u32(0)
	}
}

// opaque writes variable-length opaque data (length, bytes, padding).
func (e *enc) opaque(p []byte) {
	e.u32(uint32(len(p)))
	e.b = append(e.b, p...)
	e.pad(len(p))
}

func (e *enc) str(s string) { e.opaque([]byte(s)) }

func (e *enc) pad(n int) {
	for ; n%4 != 0; n++ {
		e.b = append(e.b, 0)
	}
}

// dec reads XDR; the first error sticks and later reads return zeros.
type dec struct {
	b   []byte
	err error
}

func (d *dec) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || len(d.b) < n {
		d.err = errShort
		return nil
	}
	p := d.b[:n]
	d.b = d.b[n:]
	return p
}

func (d *dec) u32() uint32 {
	if p := d.take(4); p != nil {
		return binary.BigEndian.Uint32(p)
	}
	return 0
}

func (d *dec) u64() uint64 {
	if p := d.take(8); p != nil {
		return binary.BigEndian.Uint64(p)
	}
	return 0
}

func (d *dec) bool() bool { return d.u32() != 0 }

// opaque reads variable-length opaque data of at most max bytes.
func (d *dec) opaque(max int) []byte {
	n := d.u32()
	if d.err == nil && int64(n) > int64(max) {
		d.err = fmt.Errorf("opaque of %d bytes, at most %d allowed", n, max)
		return nil
	}
	p := d.take(int(n))
	d.take((4 - int(n)%4) % 4)
	return p
}

func (d *dec) skip(n int) { d.take(n) }
