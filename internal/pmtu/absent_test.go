package pmtu

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// Sizes a search did not find are absent from the JSON and "n/a" in the
// text, never 0: no failed size on a clean path, no path MTU where nothing
// arrived. A search faster than a millisecond (loopback) does not read
// "in 0s".
func TestAbsentSizes(t *testing.T) {
	t.Parallel()
	opts := Options{MinTimeout: 5 * time.Millisecond, MaxTimeout: 5 * time.Millisecond}
	clean, err := Run(context.Background(), newFake(9000, 9000), opts)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(clean)
	if clean.PathMTU != 9000 || strings.Contains(string(b), `"smallest_failed"`) || strings.Contains(string(b), `"payload_failed"`) {
		t.Errorf("clean path: path MTU %d, JSON %s", clean.PathMTU, b)
	}
	dead := newFake(9000, 9000)
	dead.dead = true
	r, _ := Run(context.Background(), dead, opts)
	b, _ = json.Marshal(r)
	if strings.Contains(string(b), `"path_mtu"`) || strings.Contains(string(b), `"payload_passed"`) {
		t.Errorf("nothing arrived, yet sizes in the JSON: %s", b)
	}
	var out strings.Builder
	(&Report{Peer: "x", Method: "fake", Directions: []Direction{{Result: r}}}).WriteText(&out)
	if !strings.Contains(out.String(), "path MTU n/a") || strings.Contains(out.String(), "path MTU 0") {
		t.Errorf("nothing arrived: %s", out.String())
	}
	for d, want := range map[time.Duration]string{187 * time.Microsecond: "0.19 ms", 1500 * time.Microsecond: "2ms", 2345 * time.Millisecond: "2.345s"} {
		if got := elapsedText(d); got != want {
			t.Errorf("elapsedText(%v) = %q, want %q", d, got, want)
		}
	}
}
