package wire

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"
)

// The tag algorithms of a session's data packets. The client offers what
// it has beyond TagHMAC in Hello.Tags, the agent picks one in Welcome.Tag;
// a peer that knows neither field (an older build) leaves them empty and
// the session uses TagHMAC, which every peer of this version has. A tag
// the two disagree on fails every packet, as a wrong key would: it never
// weakens one.
const (
	// TagHMAC is HMAC-SHA256 of header bytes 0:32 under the direction
	// key, its first TagLen bytes: two SHA-256 compressions and the HMAC
	// bookkeeping per packet.
	TagHMAC = ""
	// TagGMAC is AES-256-GMAC (GCM with nothing to encrypt, NIST SP
	// 800-38D) of header bytes 0:32, a TagLen-byte tag. The key is
	// HMAC-SHA256(direction key, gmacKeyLabel), so it is never the key
	// of another algorithm; the nonce is four zero bytes and the packet's
	// sequence number, which a Sealer never repeats and which the tag
	// covers. With AES and carry-less multiplication in hardware it costs
	// about a fifth of TagHMAC per packet (BenchmarkSealOpen).
	TagGMAC = "aes-gmac"
)

const gmacKeyLabel = "interlink/1 aes-gmac data key"

// Tags are the tag algorithms this build can use beyond TagHMAC, in order
// of preference (Hello.Tags).
var Tags = []string{TagGMAC}

// PickTag is the agent's choice from a client's offer: the first of its
// own preferences the client offered, else TagHMAC.
func PickTag(offered []string) string {
	for _, t := range Tags {
		for _, o := range offered {
			if o == t {
				return t
			}
		}
	}
	return TagHMAC
}

// tagger writes and checks the tag of a header for one direction key.
// Not safe for concurrent use: Sealer and Opener hold their lock.
type tagger interface {
	put(hdr []byte, seq uint64) // hdr[32:HeaderLen] = tag(hdr[:32])
	ok(hdr []byte, seq uint64) bool
}

func newTagger(alg string, key []byte) (tagger, error) {
	switch alg {
	case TagHMAC:
		return &hmacTag{mac: hmac.New(sha256.New, key)}, nil
	case TagGMAC:
		m := hmac.New(sha256.New, key)
		m.Write([]byte(gmacKeyLabel))
		blk, err := aes.NewCipher(m.Sum(nil))
		if err != nil {
			return nil, err
		}
		g, err := cipher.NewGCM(blk)
		if err != nil {
			return nil, err
		}
		return &gmacTag{aead: g}, nil
	}
	return nil, fmt.Errorf("tag algorithm %q unknown to this build", alg)
}

type hmacTag struct {
	mac hash.Hash
	sum [sha256.Size]byte // the MAC's output: a local array escapes through the interface, one allocation per packet
}

func (t *hmacTag) tag(hdr []byte) []byte {
	t.mac.Reset()
	t.mac.Write(hdr[:32])
	return t.mac.Sum(t.sum[:0])[:TagLen]
}

func (t *hmacTag) put(hdr []byte, _ uint64) { copy(hdr[32:HeaderLen], t.tag(hdr)) }

func (t *hmacTag) ok(hdr []byte, _ uint64) bool { return hmac.Equal(t.tag(hdr), hdr[32:HeaderLen]) }

type gmacTag struct {
	aead  cipher.AEAD
	nonce [12]byte
	none  [0]byte
}

func (t *gmacTag) setNonce(seq uint64) []byte {
	binary.BigEndian.PutUint64(t.nonce[4:], seq)
	return t.nonce[:]
}

// put appends the tag to hdr[32:32], which has room for it in place.
func (t *gmacTag) put(hdr []byte, seq uint64) {
	t.aead.Seal(hdr[32:32:HeaderLen], t.setNonce(seq), nil, hdr[:32])
}

func (t *gmacTag) ok(hdr []byte, seq uint64) bool {
	_, err := t.aead.Open(t.none[:0], t.setNonce(seq), hdr[32:HeaderLen], hdr[:32])
	return err == nil
}
