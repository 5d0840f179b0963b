package wire

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"io"
	"testing"
	"time"
)

func TestMessagesRoundTrip(t *testing.T) {
	n := bytes.Repeat([]byte{7}, NonceLen)
	msgs := []any{
		&Hello{Magic: Magic, Version: Version, Nonce: n, Software: "interlink test"},
		&Challenge{Version: Version, Nonce: n, Proof: n},
		&Auth{Proof: n},
		&Welcome{Session: 42, Limits: Limits{MaxDuration: time.Minute, MaxRateBitsPerSec: 1e9, MaxSessions: 4, MaxEndpoints: 8}},
		&Refuse{Reason: "wrong token"},
		&Request{ID: 3, Kind: "pmtu.probe", Body: []byte(`{"a":1}`)},
		&Response{ID: 3, Body: []byte(`{"b":2}`)},
		&Bye{},
	}
	var buf bytes.Buffer
	for _, m := range msgs {
		if err := Write(&buf, m); err != nil {
			t.Fatalf("write %T: %v", m, err)
		}
	}
	for _, want := range msgs {
		got, err := Read(&buf)
		if err != nil {
			t.Fatalf("read %T: %v", want, err)
		}
		wb, _ := encodeForCompare(want)
		gb, _ := encodeForCompare(got)
		if !bytes.Equal(wb, gb) {
			t.Errorf("round trip %T: got %s want %s", want, gb, wb)
		}
	}
	if _, err := Read(&buf); err != io.EOF {
		t.Errorf("after last frame: %v, want EOF", err)
	}
}

func encodeForCompare(m any) ([]byte, error) {
	var b bytes.Buffer
	err := Write(&b, m)
	return b.Bytes(), err
}

func TestReadFrameBoundsLength(t *testing.T) {
	hdr := []byte{byte(TRequest), 0, 0, 0, 0}
	binary.BigEndian.PutUint32(hdr[1:], MaxPayload+1)
	// The reader must refuse before reading (or allocating) the payload.
	_, err := ReadFrame(io.MultiReader(bytes.NewReader(hdr), neverReader{t}))
	if !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("oversized frame: %v, want ErrFrameTooLarge", err)
	}
	if err := WriteFrame(io.Discard, TRequest, make([]byte, MaxPayload+1)); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("write oversized: %v", err)
	}
	for _, typ := range []byte{0, byte(tMax) + 1, 255} {
		_, err := ReadFrame(bytes.NewReader([]byte{typ, 0, 0, 0, 0}))
		if !errors.Is(err, ErrBadType) {
			t.Errorf("type %d: %v, want ErrBadType", typ, err)
		}
	}
	if _, err := ReadFrame(bytes.NewReader([]byte{byte(TBye), 0, 0, 0, 9, '{'})); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("truncated payload: %v", err)
	}
}

type neverReader struct{ t *testing.T }

func (r neverReader) Read([]byte) (int, error) {
	r.t.Error("payload of an oversized frame was read")
	return 0, io.EOF
}

func TestDecodeValidates(t *testing.T) {
	bad := []Frame{
		{THello, []byte(`{"magic":"http","version":1,"nonce":"` + b64(NonceLen) + `"}`)},
		{THello, []byte(`{"magic":"interlink","version":1,"nonce":"AAAA"}`)},
		{TAuth, []byte(`{"proof":"AAAA"}`)},
		{TWelcome, []byte(`{"session":0}`)},
		{TWelcome, []byte(`{"session":1,"limits":{"max_sessions":-1}}`)},
		{TRequest, []byte(`{"id":1,"kind":""}`)},
		{TRequest, []byte(`{"id":1,"kind":"` + string(bytes.Repeat([]byte("k"), MaxKindLen+1)) + `"}`)},
		{TRefuse, []byte(`not json`)},
		{TRefuse, []byte(`{"reason":"` + string(bytes.Repeat([]byte("r"), MaxReasonLen+1)) + `"}`)},
	}
	for _, f := range bad {
		if _, err := Decode(f); !errors.Is(err, ErrBadMessage) {
			t.Errorf("%s %s: %v, want ErrBadMessage", f.Type, f.Payload[:min(40, len(f.Payload))], err)
		}
	}
}

func b64(n int) string {
	var b bytes.Buffer
	for range n * 4 / 3 {
		b.WriteByte('A')
	}
	for b.Len()%4 != 0 {
		b.WriteByte('=')
	}
	return b.String()
}

func TestProofsAndKeys(t *testing.T) {
	tok := []byte("a shared token of enough length")
	cn, _ := NewNonce()
	sn, _ := NewNonce()
	if bytes.Equal(AgentProof(tok, cn, sn), ClientProof(tok, cn, sn)) {
		t.Fatal("agent and client proofs are equal: one could be reflected as the other")
	}
	if !ProofOK(ClientProof(tok, cn, sn), ClientProof(tok, cn, sn)) {
		t.Fatal("same inputs, different proofs")
	}
	if ProofOK(ClientProof(tok, cn, sn), ClientProof([]byte("another token of enough length"), cn, sn)) {
		t.Fatal("proof does not depend on the token")
	}
	k := SessionKeys(tok, cn, sn)
	if bytes.Equal(k.ClientToAgent, k.AgentToClient) {
		t.Fatal("direction keys are equal")
	}
	sn2, _ := NewNonce()
	if bytes.Equal(SessionKeys(tok, cn, sn2).ClientToAgent, k.ClientToAgent) {
		t.Fatal("keys do not depend on the nonces")
	}
}

func TestSealOpen(t *testing.T) {
	for name, alg := range map[string]string{"hmac-sha256": TagHMAC, TagGMAC: TagGMAC} {
		t.Run(name, func(t *testing.T) { testSealOpen(t, alg) })
	}
}

func testSealOpen(t *testing.T, alg string) {
	k := SessionKeys([]byte("token token token token"), bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32))
	s, err := NewSealerTag(alg, k.ClientToAgent, 77)
	if err != nil {
		t.Fatal(err)
	}
	o, _ := NewOpenerTag(alg, k.ClientToAgent, 77)
	other := func(key []byte, session uint64) *Opener { o, _ := NewOpenerTag(alg, key, session); return o }
	pkt := make([]byte, 1000)
	seq, err := s.SealPacket(pkt, KindProbe, 0)
	if err != nil || seq != 1 {
		t.Fatalf("seal: %d %v", seq, err)
	}
	h, err := o.Open(pkt)
	if err != nil || h.Kind != KindProbe || h.Seq != 1 || h.Length != 1000 {
		t.Fatalf("open: %+v %v", h, err)
	}
	if _, err := o.Open(pkt); !errors.Is(err, ErrReplay) {
		t.Errorf("replay: %v", err)
	}
	s.SealPacket(pkt, KindProbe, 0)
	if _, err := o.Open(pkt[:900]); !errors.Is(err, ErrBadLength) {
		t.Errorf("truncated: %v", err)
	}
	if _, err := other(k.AgentToClient, 77).Open(pkt); !errors.Is(err, ErrBadTag) {
		t.Errorf("other direction's key: %v", err)
	}
	if _, err := other(k.ClientToAgent, 78).Open(pkt); !errors.Is(err, ErrBadSession) {
		t.Errorf("other session: %v", err)
	}
	pkt[21] ^= 1 // flip a bit of ref
	if _, err := o.Open(pkt); !errors.Is(err, ErrBadTag) {
		t.Errorf("tampered: %v", err)
	}
	pkt[21] ^= 1
	if _, err := o.Open(pkt); err != nil {
		t.Errorf("a failed forgery must not burn the sequence number: %v", err)
	}
	if _, err := o.Open(make([]byte, 10)); !errors.Is(err, ErrShort) {
		t.Errorf("short: %v", err)
	}
	if _, err := o.Open(make([]byte, 100)); !errors.Is(err, ErrBadLength) && !errors.Is(err, ErrNotData) {
		t.Errorf("zeros: %v", err)
	}
	// A packet tagged with the other algorithm does not open.
	otherAlg := map[string]string{TagHMAC: TagGMAC, TagGMAC: TagHMAC}[alg]
	s2, _ := NewSealerTag(otherAlg, k.ClientToAgent, 77)
	for range 3 {
		s2.SealPacket(pkt, KindProbe, 0) // past o's window
	}
	if _, err := o.Open(pkt); !errors.Is(err, ErrBadTag) {
		t.Errorf("%q packet opened with %q: %v", otherAlg, alg, err)
	}
}

// TestTagHMACIsVersion1: a TagHMAC session's tag is exactly what every
// version-1 peer computes (HMAC-SHA256 of bytes 0:32, first 16 bytes), so
// a session with an older build works as before.
func TestTagHMACIsVersion1(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	pkt := make([]byte, 200)
	NewSealer(key, 5).SealPacket(pkt, KindProbe, 9)
	m := hmac.New(sha256.New, key)
	m.Write(pkt[:32])
	if !bytes.Equal(m.Sum(nil)[:TagLen], pkt[32:HeaderLen]) {
		t.Errorf("TagHMAC differs from version 1's HMAC-SHA256")
	}
	if _, err := NewSealerTag("rot13", key, 5); err == nil {
		t.Error("an unknown tag algorithm was taken")
	}
}

func TestPickTag(t *testing.T) {
	for _, c := range []struct {
		offer []string
		want  string
	}{{nil, TagHMAC}, {[]string{"sha3-kmac"}, TagHMAC}, {[]string{"sha3-kmac", TagGMAC}, TagGMAC}} {
		if got := PickTag(c.offer); got != c.want {
			t.Errorf("offer %q: picked %q, want %q", c.offer, got, c.want)
		}
	}
}

func TestWindow(t *testing.T) {
	var w Window
	for _, c := range []struct {
		seq uint64
		ok  bool
	}{
		{0, false}, {1, true}, {1, false}, {3, true}, {2, true}, {2, false},
		{100, true}, {36, false}, {37, true}, {37, false}, {99, true}, {101, true}, {1000, true}, {937, true}, {936, false},
	} {
		if got := w.Check(c.seq); got != c.ok {
			t.Errorf("Check(%d) = %v, want %v", c.seq, got, c.ok)
		}
	}
}

// TestKeysSub: a sub-channel's keys differ from the session's and from
// another label's in both directions, are the same on both ends, and a
// header sealed on one channel does not open on another.
func TestKeysSub(t *testing.T) {
	k := SessionKeys([]byte("token"), bytes.Repeat([]byte{1}, NonceLen), bytes.Repeat([]byte{2}, NonceLen))
	a, b := k.Sub("ping"), k.Sub("other")
	if again := k.Sub("ping"); !bytes.Equal(a.ClientToAgent, again.ClientToAgent) || !bytes.Equal(a.AgentToClient, again.AgentToClient) {
		t.Fatal("Sub is not deterministic")
	}
	for _, pair := range [][2][]byte{{a.ClientToAgent, k.ClientToAgent}, {a.AgentToClient, k.AgentToClient}, {a.ClientToAgent, b.ClientToAgent}, {a.ClientToAgent, a.AgentToClient}} {
		if bytes.Equal(pair[0], pair[1]) {
			t.Fatalf("keys of different channels are equal: %x", pair[0])
		}
	}
	pkt := make([]byte, HeaderLen)
	if _, err := NewSealer(a.ClientToAgent, 7).SealPacket(pkt, KindProbe, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := NewOpener(k.ClientToAgent, 7).Open(pkt); err == nil {
		t.Error("a sub-channel's datagram opened with the session's key")
	}
	if _, err := NewOpener(a.ClientToAgent, 7).Open(pkt); err != nil {
		t.Errorf("the sub-channel's own key refused its datagram: %v", err)
	}
}
