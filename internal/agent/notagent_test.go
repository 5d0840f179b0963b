package agent

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"
)

// fakePeer listens on loopback and answers every connection with answer
// (nothing when empty), then holds it open until the test ends.
func fakePeer(t *testing.T, answer string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
			if answer != "" {
				c.Write([]byte(answer))
			}
		}
	}()
	return ln.Addr().String()
}

// A web server or sshd at the address: "not an interlink agent", with
// what it answered, not a frame-decoding error.
func TestDialNotAnAgent(t *testing.T) {
	for answer, want := range map[string]string{
		"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n": `not an interlink agent: it answered "HTTP/1.1 400 Bad Request"; check the address and port 'interlink agent' listens on`,
		"SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n":                    `not an interlink agent: it answered "SSH-2.0-OpenSSH_9.2p1 Debian-2"`,
	} {
		addr := fakePeer(t, answer)
		_, err := Dial(context.Background(), addr, testToken, DialOptions{})
		if !errors.Is(err, ErrNotAgent) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "frame") {
			t.Errorf("%q: %v, want %q", answer, err, want)
		}
	}
}

// A peer that accepts and says nothing: how long it was given, and what
// to check.
func TestDialSilentPeer(t *testing.T) {
	if testing.Short() {
		t.Skip("waits the 5 s handshake timeout")
	}
	addr := fakePeer(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := Dial(ctx, addr, testToken, DialOptions{})
	if err == nil || !strings.Contains(err.Error(), "no answer to the handshake within 5s; is 'interlink agent' listening") {
		t.Errorf("%v", err)
	}
}
