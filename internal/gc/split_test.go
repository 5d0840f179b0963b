package gc

import (
	"testing"

	"github.com/interlink/interlink/internal/wire"
)

// TestHeldStamp: the servers' wake-ups and work cross in one stamp, each
// capped at 32 bits of ns, never negative; a queued block or forward gets
// them with the flag, the session header untouched, and other datagrams
// and blocks of a request without a stamp stay as they were.
func TestHeldStamp(t *testing.T) {
	if w, k := heldTimes(heldStamp(38000, 2100)); w != 38000 || k != 2100 {
		t.Errorf("round trip: %d %d", w, k)
	}
	if w, k := heldTimes(heldStamp(1<<40, -5)); w != 0xffffffff || k != 0 {
		t.Errorf("capped: %d %d", w, k)
	}
	e := &engine{splits: make([][2]*splitHists, 2)}
	mk := func(typ msgType, h hold) outMsg {
		b := make([]byte, HeaderLen+100)
		for i := range b[:wire.HeaderLen] {
			b[i] = 0xaa
		}
		(&msg{Type: typ, Hops: 2, Chunks: 1}).put(b[wire.HeaderLen:])
		return outMsg{n: len(b), buf: b, hold: h}
	}
	outs := []outMsg{mk(msgBlock, hold{on: true, rx: 1000, readAt: 6000}), mk(msgBlock, hold{}), mk(msgRequest, hold{})}
	e.stampHeld(outs)
	for i, o := range outs {
		var m msg
		if err := m.parse(o.buf[wire.HeaderLen:]); err != nil {
			t.Fatal(err)
		}
		wake, work := heldTimes(m.Stamp)
		if held := m.Flags&flagHeld != 0; held != (i == 0) || i == 0 && (wake != 5000 || work <= 0) || i > 0 && m.Stamp != 0 {
			t.Errorf("datagram %d: flags %x, wake %d, work %d", i, m.Flags, wake, work)
		}
		for _, c := range o.buf[:wire.HeaderLen] {
			if c != 0xaa {
				t.Fatalf("datagram %d: the session header changed", i)
			}
		}
	}
}
