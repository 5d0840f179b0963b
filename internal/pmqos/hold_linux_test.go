package pmqos

import (
	"os"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/roottest"
)

// testUS is the value the tests hold: one nobody else is likely to hold,
// above 0 so that a lower request held by another process is seen.
const testUS = 7

// needHoldable skips under -short, fails the test without root (the
// file is root's) and skips
// it while another process holds testUS or less: then a release cannot be
// seen in the aggregate. It returns the aggregate before the test.
func needHoldable(t *testing.T) int32 {
	t.Helper()
	roottest.Require(t, Path+" is root's")
	if _, err := os.Stat(Path); err != nil {
		t.Skipf("this kernel has no %s: %v", Path, err)
	}
	before, err := Current()
	if err != nil {
		t.Fatal(err)
	}
	if before <= testUS {
		t.Skipf("another process holds a CPU latency request of %d us: a hold of %d us cannot be seen", before, testUS)
	}
	return before
}

// waitAggregate polls the aggregate until ok says yes, for up to 5 s, and
// returns the last value read.
func waitAggregate(t *testing.T, ok func(int32) bool) (int32, bool) {
	t.Helper()
	var v int32
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		var err error
		if v, err = Current(); err != nil {
			t.Fatal(err)
		}
		if ok(v) {
			return v, true
		}
	}
	return v, false
}

func released(v int32) bool { return v > testUS }

func TestHoldAndRelease(t *testing.T) {
	needHoldable(t)
	h, err := Open(testUS)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	if v, _ := Current(); v != testUS {
		t.Errorf("aggregate while held: %d us, want %d", v, testUS)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if v, ok := waitAggregate(t, released); !ok {
		t.Errorf("aggregate after Close: %d us: not released", v)
	}
	if _, err := Open(-1); err == nil {
		t.Error("Open(-1) held")
	}
}
