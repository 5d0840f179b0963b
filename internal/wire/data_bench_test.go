package wire

import "testing"

// BenchmarkSealOpen is the tag's cost per datagram at each end of a
// session: one Seal at the sender, one Open at the receiver.
func BenchmarkSealOpen(b *testing.B) {
	key := make([]byte, 32)
	s, o := NewSealer(key, 7), NewOpener(key, 7)
	pkt := make([]byte, 8192)
	b.ReportAllocs()
	for b.Loop() {
		s.SealPacket(pkt, 16, 0)
		if _, err := o.Open(pkt); err != nil {
			b.Fatal(err)
		}
	}
}
