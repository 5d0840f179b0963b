package vm

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/roottest"

	"github.com/interlink/interlink/internal/vm/channel"
	"github.com/interlink/interlink/internal/vm/guest"
)

// guestOnSocket serves with srv, as a guest does on one of its serial
// ports, on a unix socket named file in a directory of its own (the
// host's end of a channel, as qemu gives it: one client at a time, the
// next one waiting in the backlog). It returns the socket's path.
func guestOnSocket(t *testing.T, srv *guest.Server, file string) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), file)
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			// A tty never ends, so serve reads on after an error; a
			// socket's host end goes away: end serve with it.
			cctx, ccancel := context.WithCancel(ctx)
			srv.Serve(cctx, endsWith{c, ccancel})
			c.Close()
		}
	}()
	t.Cleanup(func() {
		cancel()
		l.Close()
		<-done
	})
	return sock
}

// endsWith is a connection that calls end when a read fails (other than
// by the reader's own deadline).
type endsWith struct {
	net.Conn
	end func()
}

func (e endsWith) Read(b []byte) (int, error) {
	n, err := e.Conn.Read(b)
	if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
		e.end()
	}
	return n, err
}

// startTracked starts a real process (sleep) as the guest's kind service.
func startTracked(t *testing.T, svcs *guest.Services, kind string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	svcs.Track(kind, cmd)
	t.Cleanup(func() { cmd.Process.Kill() })
	return cmd
}

// TestServicesQuery: over a real channel socket, the guest's side answers
// for its real processes: alive and listening, alive with nothing on the
// port, exited (by the PID it started), never started.
func TestServicesQuery(t *testing.T) {
	svcs := guest.NewServices()
	sshd := startTracked(t, svcs, channel.ServiceSSHD)
	agent := startTracked(t, svcs, channel.ServiceAgent)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed.Close() // a port nothing listens on now
	sock := guestOnSocket(t, guest.NewServer(nil, svcs, false), ChannelFile)
	probes := []channel.ServiceProbe{{Kind: channel.ServiceSSHD, Address: lis.Addr().String()}, {Kind: channel.ServiceAgent, Address: closed.Addr().String()}, {Kind: "nfs", Address: lis.Addr().String()}}
	ask := func() []channel.ServiceAnswer {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		a, err := Services(ctx, sock, probes)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	a := ask()
	if a[0] != (channel.ServiceAnswer{Kind: channel.ServiceSSHD, PID: sshd.Process.Pid, Alive: true, Listening: true}) {
		t.Errorf("sshd, alive on a listening port: %+v", a[0])
	}
	if a[1].PID != agent.Process.Pid || !a[1].Alive || a[1].Listening || !strings.Contains(a[1].Error, "refused") {
		t.Errorf("agent, alive, nothing on its port: %+v, want alive, not listening, connection refused", a[1])
	}
	if a[2].PID != 0 || a[2].Alive || a[2].Error != "the guest did not start nfs" {
		t.Errorf("a kind the guest did not start: %+v", a[2])
	}
	sshd.Process.Kill()
	deadline := time.Now().Add(60 * time.Second) // only against a hang
	for a = ask(); a[0].Alive && time.Now().Before(deadline); a = ask() {
		time.Sleep(20 * time.Millisecond)
	}
	if a[0].PID != sshd.Process.Pid || a[0].Alive || a[0].Listening {
		t.Errorf("sshd killed: %+v, want its PID, not alive (its port still listening is not asked)", a[0])
	}
}

// TestServicesNotAnswering: a channel that takes the connection but never
// answers (a hung guest, or one whose line another command holds) gives
// ErrNotAnswering when ctx ends, not sooner.
func TestServicesNotAnswering(t *testing.T) {
	sock := filepath.Join(t.TempDir(), ChannelFile)
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = Services(ctx, sock, []channel.ServiceProbe{{Kind: channel.ServiceAgent, Address: "127.0.0.1:1"}})
	if !errors.Is(err, ErrNotAnswering) || !strings.Contains(err.Error(), "guest not answering") {
		t.Errorf("err = %v, want ErrNotAnswering", err)
	}
	if ctx.Err() == nil {
		t.Error("gave up before its ctx ended")
	}
}

// TestStatusChannel: while a command (a real sleep) holds the command
// channel, a query there waits its turn and gets ErrNotAnswering, and the
// same query on the status channel, served for the same services, is
// answered at once; a command sent on the status channel is refused with
// one clear error.
func TestStatusChannel(t *testing.T) {
	roottest.Require(t, "the guest's command server sets the commands' credentials")
	svcs := guest.NewServices()
	agent := startTracked(t, svcs, channel.ServiceAgent)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	command := guestOnSocket(t, guest.NewServer(nil, svcs, false), ChannelFile)
	status := guestOnSocket(t, guest.NewServer(nil, svcs, true), StatusFile)
	execCtx, stop := context.WithTimeout(context.Background(), 20*time.Second)
	defer stop()
	held := &seen{want: "held", at: make(chan struct{})}
	done := make(chan error, 1)
	go func() {
		_, err := Exec(execCtx, command, channel.Command{Argv: []string{"sh", "-c", "echo held; exec sleep 15"}}, held, io.Discard)
		done <- err
	}()
	select {
	case <-held.at:
	case err := <-done:
		t.Fatalf("the command that holds the channel ended: %v", err)
	case <-time.After(60 * time.Second): // only against a hang
		t.Fatal("the command that holds the channel never started")
	}
	probes := []channel.ServiceProbe{{Kind: channel.ServiceAgent, Address: lis.Addr().String()}}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := Services(ctx, command, probes); !errors.Is(err, ErrNotAnswering) {
		t.Errorf("a query on the held command channel: %v, want ErrNotAnswering", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	start := time.Now()
	a, err := Services(ctx, status, probes)
	if err != nil || len(a) != 1 || a[0] != (channel.ServiceAnswer{Kind: channel.ServiceAgent, PID: agent.Process.Pid, Alive: true, Listening: true}) {
		t.Errorf("the query on the status channel: %+v, %v; want the agent alive and listening", a, err)
	}
	t.Logf("answered on the status channel in %s", time.Since(start).Round(time.Microsecond))
	var out, errb strings.Builder
	ran := filepath.Join(t.TempDir(), "ran")
	code, err := Exec(ctx, status, channel.Command{Argv: []string{"touch", ran}}, &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "answers queries only") || code != 127 {
		t.Errorf("a command on the status channel: exit %d, %v; want 127 and the refusal", code, err)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Error("the command sent on the status channel ran")
	}
	stop() // the held command gets SIGTERM
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("the held command, stopped: %v", err)
	}
}

// seen is a writer that closes at once it has seen want.
type seen struct {
	want string
	got  strings.Builder
	at   chan struct{}
}

func (s *seen) Write(b []byte) (int, error) {
	had := strings.Contains(s.got.String(), s.want)
	s.got.Write(b)
	if !had && strings.Contains(s.got.String(), s.want) {
		close(s.at)
	}
	return len(b), nil
}
