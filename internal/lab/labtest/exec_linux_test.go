//go:build linux

package labtest

import (
	"context"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/interlink/interlink/internal/lab"
)

// TestExec: Node.Exec runs a command in a namespace node as it does in a
// VM node (lab/vmtest): with INTERLINK_LAB and INTERLINK_NODE set, the
// node's own interfaces, /dev/null as stdin unless given one, its exit
// code (128+N when signal N ended it), SIGTERM when ctx is done, and the
// signals WithSignals passes on.
func TestExec(t *testing.T) {
	l := up(t, "jumbo", "exec")
	n2 := node(t, l, "node2")
	run := func(ctx context.Context, stdout io.Writer, argv []string, opts ...lab.ExecOption) (int, string) {
		t.Helper()
		var errb strings.Builder
		code, err := n2.Exec(ctx, argv, stdout, &errb, opts...)
		if err != nil {
			t.Fatalf("Exec %q: %v", argv, err)
		}
		return code, errb.String()
	}
	ctx := context.Background()
	var out strings.Builder
	code, errOut := run(ctx, &out, []string{"/bin/sh", "-c", `echo "$INTERLINK_LAB $INTERLINK_NODE"; cat /sys/class/net/eth1/mtu; echo oops >&2; exit 5`})
	if want := l.Name() + " node2\n9000\n"; code != 5 || out.String() != want || errOut != "oops\n" {
		t.Errorf("exit %d, stdout %q, stderr %q; want 5, %q, %q", code, out.String(), errOut, want, "oops\n")
	}
	// Without WithStdin the command reads /dev/null: cat ends at once.
	out.Reset()
	if code, _ := run(ctx, &out, []string{"cat"}); code != 0 || out.String() != "" {
		t.Errorf("cat without stdin: exit %d, %q", code, out.String())
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w.WriteString("from stdin\n")
	w.Close()
	out.Reset()
	if code, _ := run(ctx, &out, []string{"cat"}, lab.WithStdin(r)); code != 0 || out.String() != "from stdin\n" {
		t.Errorf("cat with stdin: exit %d, %q", code, out.String())
	}
	if code, _ := run(ctx, io.Discard, []string{"/bin/sh", "-c", "kill -KILL $$"}); code != 128+int(syscall.SIGKILL) {
		t.Errorf("killed by SIGKILL: exit %d, want %d", code, 128+int(syscall.SIGKILL))
	}
	// ctx done once the command said it runs: it gets SIGTERM.
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ready := []string{"/bin/sh", "-c", "echo ready; exec sleep 60"}
	if code, _ := run(cctx, &firstWrite{fn: cancel}, ready); code != 128+int(syscall.SIGTERM) {
		t.Errorf("ctx done: exit %d, want %d (SIGTERM)", code, 128+int(syscall.SIGTERM))
	}
	// A signal passed on reaches it as it is.
	sigs := make(chan os.Signal, 1)
	hup := func() { sigs <- syscall.SIGHUP }
	if code, _ := run(ctx, &firstWrite{fn: hup}, ready, lab.WithSignals(sigs)); code != 128+int(syscall.SIGHUP) {
		t.Errorf("SIGHUP passed on: exit %d, want %d", code, 128+int(syscall.SIGHUP))
	}
}

// firstWrite calls fn when the first output arrives, and drops it all.
type firstWrite struct {
	once sync.Once
	fn   func()
}

func (w *firstWrite) Write(p []byte) (int, error) {
	w.once.Do(w.fn)
	return len(p), nil
}
