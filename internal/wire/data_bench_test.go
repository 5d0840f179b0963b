package wire

import "testing"

// BenchmarkSealOpen is the tag's cost per datagram at each end of a
// session, for each tag algorithm: one Seal at the sender, one Open at the
// receiver.
func BenchmarkSealOpen(b *testing.B) {
	for name, alg := range map[string]string{"hmac-sha256": TagHMAC, TagGMAC: TagGMAC} {
		b.Run(name, func(b *testing.B) {
			key := make([]byte, 32)
			s, _ := NewSealerTag(alg, key, 7)
			o, _ := NewOpenerTag(alg, key, 7)
			pkt := make([]byte, 8192)
			b.ReportAllocs()
			for b.Loop() {
				s.SealPacket(pkt, 16, 0)
				if _, err := o.Open(pkt); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
