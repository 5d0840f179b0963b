package db

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
)

// TestOpenAllErrors: openAll is parallel.First (whose bound
// internal/parallel tests) with each client's error named: the lowest
// failing client's is returned, and every client is opened.
func TestOpenAllErrors(t *testing.T) {
	boom := errors.New("refused")
	var opened atomic.Int32
	err := openAll(20, 4, func(i int) error {
		opened.Add(1)
		if i == 7 || i == 12 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "client 8 of 20: ") {
		t.Errorf("%v, want client 8's", err)
	}
	if opened.Load() != 20 {
		t.Errorf("%d clients opened, want 20", opened.Load())
	}
}
