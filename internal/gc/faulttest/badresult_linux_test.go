//go:build linux

package faulttest

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/interlink/interlink/internal/agent"
	"github.com/interlink/interlink/internal/agent/agenttest"
	"github.com/interlink/interlink/internal/cli"
	"github.com/interlink/interlink/internal/gc"
	"github.com/interlink/interlink/internal/wire"
)

// tamperProxy relays TCP connections to the agent at target and rewrites
// each answer to gc.result with edit, as a broken or foreign agent could
// answer (the control session authenticates its peers, not each frame).
// It returns the address to give instead of target.
func tamperProxy(t *testing.T, target string, edit func(*gc.NodeRun)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				relay(c, target, edit)
			}()
		}
	}()
	return ln.Addr().String()
}

func relay(c net.Conn, target string, edit func(*gc.NodeRun)) {
	defer c.Close()
	s, err := net.Dial("tcp", target)
	if err != nil {
		return
	}
	defer s.Close()
	var mu sync.Mutex
	results := map[uint32]bool{} // ids of the gc.result requests
	go func() {
		defer s.Close()
		for {
			f, err := wire.ReadFrame(c)
			if err != nil {
				return
			}
			if m, err := wire.Decode(f); err == nil {
				if r, ok := m.(*wire.Request); ok && r.Kind == gc.KindResult {
					mu.Lock()
					results[r.ID] = true
					mu.Unlock()
				}
			}
			if wire.WriteFrame(s, f.Type, f.Payload) != nil {
				return
			}
		}
	}()
	for {
		f, err := wire.ReadFrame(s)
		if err != nil {
			return
		}
		m, _ := wire.Decode(f)
		r, ok := m.(*wire.Response)
		mu.Lock()
		ok = ok && results[r.ID]
		mu.Unlock()
		if ok {
			var nr gc.NodeRun
			if json.Unmarshal(r.Body, &nr) == nil {
				edit(&nr)
				r.Body, _ = json.Marshal(&nr)
			}
			err = wire.Write(c, r)
		} else {
			err = wire.WriteFrame(c, f.Type, f.Payload)
		}
		if err != nil {
			return
		}
	}
}

// A node whose agent answers gc.result with a result that does not fit
// the run (a peer index out of range, a histogram of another shape) ends
// `interlink bench --mode gc` with exit 3 and one line naming the node and
// the problem, nothing on stdout.
func TestBadResultExit3(t *testing.T) {
	tok := []byte(token)
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, tok, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, want string
		edit       func(*gc.NodeRun)
	}{
		{"unproven out of range", "unproven peer 7: the run's nodes are 0 to 1", func(nr *gc.NodeRun) { nr.Unproven = []int{7} }},
		{"histogram of another shape", "2-way receive times: a histogram of 1 to 4611686018427387904 at 4 digits", func(nr *gc.NodeRun) { nr.Hist[0] = wideHist(t) }},
	} {
		a := agenttest.Start(t, agent.Config{Token: tok, Software: "gc fault test"})
		b := tamperProxy(t, agenttest.Start(t, agent.Config{Token: tok, Software: "gc fault test"}), c.edit)
		var stdout, stderr bytes.Buffer
		code := cli.Main(context.Background(), []string{"bench", "--mode", "gc", "--token-file", file, "--time", "100ms", "a=" + a, "b=" + b}, &stdout, &stderr)
		want := "interlink: bench: node b (agent " + b + "): bad result: " + c.want
		if code != 3 || stdout.Len() != 0 || strings.Count(stderr.String(), "\n") != 1 || !strings.HasPrefix(stderr.String(), want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 3 and %q", c.name, code, stdout.String(), stderr.String(), want)
		}
	}
}

// wideHist is an encoded histogram of 1 ns to 2^62 ns at 4 digits, a
// shape whose counts take megabytes.
func wideHist(t *testing.T) string {
	h := hdrhistogram.New(1, 1<<62, 4)
	h.RecordValue(1000)
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
