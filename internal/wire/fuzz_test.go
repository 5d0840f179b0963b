package wire

import (
	"bytes"
	"testing"
)

// FuzzRead feeds arbitrary bytes to the control decoder: it must never
// panic, never return a message that fails validation, and never consume
// more than one frame's bytes.
func FuzzRead(f *testing.F) {
	var b bytes.Buffer
	Write(&b, &Hello{Magic: Magic, Version: Version, Nonce: make([]byte, NonceLen)})
	f.Add(b.Bytes())
	b.Reset()
	Write(&b, &Request{ID: 1, Kind: "pmtu.probe", Body: []byte(`{"min":68}`)})
	f.Add(b.Bytes())
	f.Add([]byte{6, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte("GET / HTTP/1.1\r\n\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		for range 4 {
			m, err := Read(r)
			if err != nil {
				return
			}
			if verr := validate(m); verr != nil {
				t.Fatalf("Read returned an invalid message %T: %v", m, verr)
			}
		}
	})
}

// FuzzOpen feeds arbitrary datagrams to the data-packet verifier: nothing
// but a correctly tagged packet may pass.
func FuzzOpen(f *testing.F) {
	key := bytes.Repeat([]byte{9}, 32)
	s := NewSealer(key, 5)
	pkt := make([]byte, 64)
	s.SealPacket(pkt, KindProbe, 0)
	f.Add(pkt)
	f.Add(make([]byte, HeaderLen))
	f.Add([]byte("IL\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		o := NewOpener(key, 5)
		h, err := o.Open(data)
		if err != nil {
			return
		}
		// Only the seed packet (or a bit-identical header) can verify.
		if !bytes.Equal(data[:HeaderLen], pkt[:HeaderLen]) || int(h.Length) != len(data) {
			t.Fatalf("forged packet accepted: %x", data[:HeaderLen])
		}
	})
}
