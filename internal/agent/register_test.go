package agent

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
)

// registerTest registers kind for the life of the test only: handlers are
// process-global, and a kind left behind would make the next run of the
// same test (go test -count=2) a duplicate, which Register refuses.
func registerTest(t testing.TB, kind string, h Handler) {
	t.Helper()
	Register(kind, h)
	t.Cleanup(func() {
		handlersMu.Lock()
		defer handlersMu.Unlock()
		delete(handlers, kind)
	})
}

// TestRegisterTestUndone: a kind registered by a test is gone after it, so
// the test can register it again (as every run of -count=N does), while
// Register itself still refuses a duplicate.
func TestRegisterTestUndone(t *testing.T) {
	const kind = "test.again"
	h := func(ctx context.Context, s *Session, _ json.RawMessage) (any, error) { return nil, nil }
	for i := 0; i < 2; i++ {
		t.Run("run", func(t *testing.T) {
			registerTest(t, kind, h)
			if !slices.Contains(Kinds(), kind) {
				t.Fatalf("%s not registered", kind)
			}
			func() {
				defer func() {
					if recover() == nil {
						t.Error("Register took a duplicate kind")
					}
				}()
				Register(kind, h)
			}()
		})
		if slices.Contains(Kinds(), kind) {
			t.Fatalf("%s still registered after the test", kind)
		}
	}
}
