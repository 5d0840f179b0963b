package buftest

import (
	"strings"
	"sync"
	"testing"
)

// Writers and a reader at once (run with -race): every write is kept whole.
func TestConcurrent(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				b.Write([]byte("line\n"))
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	if got := b.String(); got != strings.Repeat("line\n", 400) {
		t.Errorf("%d bytes, want %d whole lines", len(got), 400)
	}
}
