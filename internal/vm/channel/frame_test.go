package channel

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

// TestFrames: frames survive a line with leftovers of an earlier caller,
// a damaged frame and a payload containing the magic.
func TestFrames(t *testing.T) {
	var line bytes.Buffer
	fw := NewWriter(&line)
	fw.Send(Frame{Type: Stdout, ID: 1, Payload: []byte("whole but old")})
	old := line.Bytes()[:7] // the tail of a frame cut short
	line.Reset()
	line.Write([]byte("garbage IL"))
	line.Write(old[3:])
	fw.Send(Frame{Type: Stdout, ID: 2, Payload: []byte("ILvm inside")})
	// A damaged frame: one payload byte flipped.
	start := line.Len()
	fw.Send(Frame{Type: Stderr, ID: 2, Payload: []byte("damaged")})
	line.Bytes()[start+14] ^= 0xff
	fw.Data(Stdout, 3, bytes.Repeat([]byte{0}, MaxPayload+10))
	fw.Send(Frame{Type: Exit, ID: 2, Payload: []byte(`{"code":3}`)})
	r := NewReader(&line)
	var got []string
	for {
		f, err := r.Next()
		if err != nil {
			if !errors.Is(err, ErrClosed) {
				t.Fatal(err)
			}
			break
		}
		got = append(got, fmt.Sprintf("%c:%d:%s", f.Type, f.ID, short(f.Payload)))
	}
	want := []string{"O:2:ILvm inside", "O:3:65536 bytes", "O:3:10 bytes", `X:2:{"code":3}`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("frames:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestFramesCutShort: the start of a request whose caller went away (qemu
// drops what it had not read) does not swallow the next caller's frame,
// whether the next frame is longer than what the cut one lacks (its CRC
// fails at once) or shorter (its rest never comes: the reader gives up on
// it after PartialFrameTimeout without a byte), and a frame that comes
// slowly is still whole.
func TestFramesCutShort(t *testing.T) {
	defer func(d time.Duration) { PartialFrameTimeout = d }(PartialFrameTimeout)
	PartialFrameTimeout = 100 * time.Millisecond
	cut := func(n int) []byte {
		var b bytes.Buffer
		NewWriter(&b).Send(Frame{Type: Request, ID: 7, Payload: bytes.Repeat([]byte("x"), n)})
		return b.Bytes()[:HeaderLen+3]
	}
	whole := func(id uint32) []byte {
		var b bytes.Buffer
		NewWriter(&b).Send(Frame{Type: Query, ID: id, Payload: []byte(`[{"kind":"agent","address":"127.0.0.1:7471"}]`)})
		return b.Bytes()
	}
	host, guest := net.Pipe()
	defer host.Close()
	go func() {
		for _, b := range [][]byte{cut(10), whole(1), cut(1000), whole(2)} {
			if _, err := host.Write(b); err != nil {
				return
			}
		}
	}()
	// A test that failed would otherwise wait for a frame for ever.
	stop := time.AfterFunc(20*time.Second, func() { guest.Close() })
	defer stop.Stop()
	r := NewReader(guest)
	r.GiveUpOnCut(guest)
	for _, id := range []uint32{1, 2} {
		start := time.Now()
		f, err := r.Next()
		if err != nil || f.Type != Query || f.ID != id {
			t.Fatalf("frame %d: %c %d %v", id, f.Type, f.ID, err)
		}
		t.Logf("frame %d after %s", id, time.Since(start))
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("frame %d took %s", id, took)
		}
	}
	// A frame whose bytes come slowly, each well within the timeout but
	// the whole taking several times it, is whole: some 60 bytes 8 ms
	// apart, against 200 ms (a writer held 190 ms still makes it).
	PartialFrameTimeout = 200 * time.Millisecond
	go func() {
		for _, c := range whole(3) {
			if _, err := host.Write([]byte{c}); err != nil {
				return
			}
			time.Sleep(8 * time.Millisecond)
		}
	}()
	start := time.Now()
	if f, err := r.Next(); err != nil || f.ID != 3 {
		t.Errorf("a slow frame: %d %v, want frame 3", f.ID, err)
	}
	took := time.Since(start)
	t.Logf("slow frame after %s", took)
	if took < 2*PartialFrameTimeout {
		t.Errorf("the slow frame took %s, not several timeouts of %s: it tested nothing", took, PartialFrameTimeout)
	}
	guest.Close()
	if _, err := r.Next(); !errors.Is(err, ErrClosed) {
		t.Errorf("after the line closed: %v, want ErrClosed", err)
	}
}

// short shows a payload of zeros by its length.
func short(b []byte) string {
	if len(b) > 0 && b[0] == 0 {
		return fmt.Sprintf("%d bytes", len(b))
	}
	return string(b)
}

// FuzzFrameReader: on any line, Next never panics or spins, returns only
// frames that stand whole in the line as Append encodes them (so with
// their CRC), and finds a valid frame after arbitrary junk, unless a frame
// that started in the junk and is itself whole and intact took its bytes.
func FuzzFrameReader(f *testing.F) {
	f.Add([]byte("garbage IL"), byte(Stdout), uint32(2), []byte("ILvm inside"))
	f.Add(Append([]byte("ILv"), Frame{Type: Exit, ID: 9, Payload: []byte(`{"code":1}`)})[:20], byte(Exit), uint32(9), []byte(`{"code":1}`))
	// Junk that claims a long frame whose rest never comes.
	f.Add(append([]byte(Magic+"R\x00\x00\x00\x07"), 0, 0, 0xff, 0), byte(Query), uint32(1), []byte("[]"))
	f.Fuzz(func(t *testing.T, junk []byte, typ byte, id uint32, payload []byte) {
		if len(payload) > MaxPayload {
			payload = payload[:MaxPayload]
		}
		want := Frame{Type: typ, ID: id, Payload: payload}
		line := Append(append([]byte(nil), junk...), want)
		type got struct {
			f          Frame
			start, end int64
		}
		frames := make(chan got)
		go func() {
			defer close(frames)
			r := NewReader(bytes.NewReader(line))
			for {
				f, err := r.Next()
				if err != nil {
					if !errors.Is(err, ErrClosed) {
						t.Errorf("Next: %v, want a frame or ErrClosed", err)
					}
					return
				}
				n := int64(HeaderLen + len(f.Payload) + 4)
				frames <- got{f, r.off - n, r.off}
			}
		}()
		// A frame consumes at least HeaderLen+4 bytes: more frames than
		// fit, or none before the watchdog, is a spin.
		limit := len(line)/(HeaderLen+4) + 1
		var all []got
		watchdog := time.NewTimer(10 * time.Second)
		defer watchdog.Stop()
		for done := false; !done; {
			select {
			case g, ok := <-frames:
				if !ok {
					done = true
					break
				}
				if all = append(all, g); len(all) > limit {
					t.Fatalf("%d frames from %d bytes: the reader spins", len(all), len(line))
				}
			case <-watchdog.C:
				t.Fatalf("no end after 10s on %d bytes: the reader spins", len(line))
			}
		}
		at := int64(len(junk))
		found, covered := false, false
		for _, g := range all {
			if enc := Append(nil, g.f); !bytes.Equal(enc, line[g.start:g.end]) {
				t.Fatalf("frame %c %d at %d is not what the line holds there (a bad CRC let through?)", g.f.Type, g.f.ID, g.start)
			}
			if g.start == at {
				found = bytes.Equal(Append(nil, g.f), Append(nil, want))
			}
			if g.start < at && g.end > at {
				covered = true // a whole frame from the junk holds its start
			}
		}
		if !found && !covered {
			t.Fatalf("the valid frame after %d bytes of junk was not found (%d frames found)", len(junk), len(all))
		}
	})
}
