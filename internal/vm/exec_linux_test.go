package vm

import (
	"context"
	"errors"
	"io"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/roottest"

	"github.com/interlink/interlink/internal/vm/channel"
	"github.com/interlink/interlink/internal/vm/guest"
)

// oldGuest serves a channel socket as a guest of protocol version
// (0: from before the hello, which it ignores) would: it answers queries
// with no answers and records whether a command reached it.
func oldGuest(t *testing.T, version int) (sock string, ran chan struct{}) {
	t.Helper()
	sock = filepath.Join(t.TempDir(), ChannelFile)
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	ran = make(chan struct{}, 10)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			fw, r := channel.NewWriter(c), channel.NewReader(c)
			for {
				f, err := r.Next()
				if err != nil {
					break
				}
				switch f.Type {
				case channel.Hello:
					if version > 0 {
						h, _ := channel.JSON(channel.Hello, f.ID, channel.HelloBody{Version: version})
						fw.Send(h)
					}
				case channel.Query:
					fw.Send(channel.Frame{Type: channel.Answer, ID: f.ID, Payload: []byte("[]")})
				case channel.Request:
					ran <- struct{}{}
					x, _ := channel.JSON(channel.Exit, f.ID, channel.ExitBody{})
					fw.Send(x)
				}
			}
			c.Close()
		}
	}()
	return sock, ran
}

// TestOlderGuest: a guest of another protocol (one from before the hello,
// or a newer one) is named, with what to do, and gets no command; a query
// to it is not misread as its answer.
func TestOlderGuest(t *testing.T) {
	for _, version := range []int{0, channel.Version + 1} {
		sock, ran := oldGuest(t, version)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := Exec(ctx, sock, channel.Command{Argv: []string{"true"}}, io.Discard, io.Discard)
		want := "(version " + strconv.Itoa(version) + ","
		if !errors.Is(err, ErrGuestProtocol) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "lab down, lab up") {
			t.Errorf("Exec on a guest of version %d: %v, want ErrGuestProtocol naming %q and the restart", version, err, want)
		}
		if _, err := Services(ctx, sock, []channel.ServiceProbe{{Kind: channel.ServiceAgent, Address: "127.0.0.1:1"}}); !errors.Is(err, ErrGuestProtocol) {
			t.Errorf("Services on a guest of version %d: %v, want ErrGuestProtocol", version, err)
		}
		select {
		case <-ran:
			t.Errorf("a guest of version %d was sent the command", version)
		default:
		}
	}
}

// TestExecBackground: a command that leaves a child in the background
// holding its output (sh -c 'sleep 60 & echo $!') returns when it exits,
// with what it wrote: the child is still there after Exec returned.
func TestExecBackground(t *testing.T) {
	// The guest's command server runs commands as a guest's root does.
	roottest.Require(t, "the guest's command server sets the commands' credentials")
	sock := guestOnSocket(t, guest.NewServer(nil, guest.NewServices(), false), ChannelFile)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	var out strings.Builder
	code, err := Exec(ctx, sock, channel.Command{Argv: []string{"sh", "-c", "sleep 60 & echo $!; echo done"}}, &out, io.Discard)
	if err != nil || code != 0 {
		t.Fatalf("exit %d, %v", code, err)
	}
	lines := strings.Fields(out.String())
	if len(lines) != 2 || lines[1] != "done" {
		t.Fatalf("output %q, want the child's PID and done", out.String())
	}
	pid, _ := strconv.Atoi(lines[0])
	if pid <= 0 {
		t.Fatalf("output %q: no PID", out.String())
	}
	defer syscall.Kill(pid, syscall.SIGKILL)
	if err := syscall.Kill(pid, 0); err != nil {
		t.Errorf("the background sleep %d had ended when Exec returned (%v): Exec waited for it", pid, err)
	}
}
