package guest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/interlink/interlink/internal/vm/channel"
)

// Server is the guest's side of one serial port: the command channel
// runs commands and answers queries; the status channel (queriesOnly)
// answers queries and refuses commands. Both answer a Hello with the
// protocol this binary speaks.
type Server struct {
	env         []string // added to every command's environment
	svcs        *Services
	queriesOnly bool
	mu          sync.Mutex
	running     map[uint32]*os.Process // the commands that run, by id
}

// NewServer returns a server for the services svcs; env is added to the
// environment of every command it runs.
func NewServer(env []string, svcs *Services, queriesOnly bool) *Server {
	return &Server{env: env, svcs: svcs, queriesOnly: queriesOnly, running: map[uint32]*os.Process{}}
}

// refusal is what a command sent on the status channel gets.
const refusal = "this is the status channel, which answers queries only: run commands on the command channel (lab exec)"

// Serve runs the commands the host sends on ch, each in its own goroutine,
// and answers its hellos and queries, until ctx ends.
func (s *Server) Serve(ctx context.Context, ch io.ReadWriter) error {
	fw := channel.NewWriter(ch)
	r := channel.NewReader(ch)
	r.GiveUpOnCut(ch)
	for ctx.Err() == nil {
		f, err := r.Next()
		if errors.Is(err, channel.ErrClosed) {
			time.Sleep(100 * time.Millisecond) // a tty read error: try again
			continue
		}
		switch f.Type {
		case channel.Hello:
			// Answered before the next frame is read, so before anything
			// else of the same call.
			if h, err := channel.JSON(channel.Hello, f.ID, channel.HelloBody{Version: channel.Version}); err == nil {
				fw.Send(h)
			}
		case channel.Request:
			var req channel.Command
			switch {
			case s.queriesOnly:
				sendExit(fw, f.ID, channel.ExitBody{Code: 127, Error: refusal})
			case json.Unmarshal(f.Payload, &req) != nil || len(req.Argv) == 0:
				sendExit(fw, f.ID, channel.ExitBody{Code: 127, Error: "bad request"})
			default:
				go s.run(fw, f.ID, req)
			}
		case channel.Query:
			// A query that does not parse gets no answers, which the
			// host reports as such (not as a guest that is silent).
			var probes []channel.ServiceProbe
			json.Unmarshal(f.Payload, &probes)
			go func(id uint32) {
				if a, err := channel.JSON(channel.Answer, id, s.svcs.answer(probes)); err == nil {
					fw.Send(a)
				}
			}(f.ID)
		case channel.Signal:
			s.mu.Lock()
			p := s.running[f.ID]
			s.mu.Unlock()
			if p != nil && len(f.Payload) == 1 {
				p.Signal(syscall.Signal(f.Payload[0]))
			}
		}
	}
	return ctx.Err()
}

// run runs req, known by id while it runs (for Signal), and sends its
// exit.
func (s *Server) run(fw *channel.Writer, id uint32, req channel.Command) {
	x := runCommand(req, s.env, fw, id, func(p *os.Process) {
		s.mu.Lock()
		s.running[id] = p
		s.mu.Unlock()
	})
	s.mu.Lock()
	delete(s.running, id)
	s.mu.Unlock()
	sendExit(fw, id, x)
}

func sendExit(fw *channel.Writer, id uint32, x channel.ExitBody) {
	if f, err := channel.JSON(channel.Exit, id, x); err == nil {
		fw.Send(f)
	}
}

// runCommand runs req, sending its output as frames; started is told the
// process once it runs. It returns once the command has exited and what
// it wrote before is sent: a background child it left holding its pipes
// (`sleep 20 &`) is not waited for, as lab exec in a namespace node does
// not wait for it either.
func runCommand(req channel.Command, env []string, fw *channel.Writer, id uint32, started func(*os.Process)) channel.ExitBody {
	cmd := exec.Command(req.Argv[0], req.Argv[1:]...)
	cmd.Env = append(append(os.Environ(), env...), req.Env...)
	cmd.Dir = "/root"
	var readers []*os.File
	for _, typ := range []byte{channel.Stdout, channel.Stderr} {
		r, w, err := os.Pipe()
		if err != nil {
			return channel.ExitBody{Code: 127, Error: err.Error()}
		}
		defer r.Close()
		defer w.Close()
		readers = append(readers, r)
		if typ == channel.Stdout {
			cmd.Stdout = w
		} else {
			cmd.Stderr = w
		}
	}
	// Real pipes (*os.File): the command gets them as its descriptors,
	// and Wait waits for the command alone, not for whoever shares them.
	if err := cmd.Start(); err != nil {
		return channel.ExitBody{Code: 127, Error: err.Error()}
	}
	cmd.Stdout.(*os.File).Close()
	cmd.Stderr.(*os.File).Close()
	started(cmd.Process)
	var wg sync.WaitGroup
	for i, typ := range []byte{channel.Stdout, channel.Stderr} {
		wg.Add(1)
		go func(r *os.File) {
			defer wg.Done()
			forward(r, func(b []byte) { fw.Data(typ, id, b) })
		}(readers[i])
	}
	err := cmd.Wait()
	// Wake the readers: each sends what the pipe holds now, and stops.
	for _, r := range readers {
		r.SetReadDeadline(time.Now())
	}
	wg.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return channel.ExitBody{Code: 128 + int(ws.Signal())}
		}
		return channel.ExitBody{Code: ee.ExitCode()}
	}
	if err != nil {
		return channel.ExitBody{Code: 127, Error: err.Error()}
	}
	return channel.ExitBody{}
}

// forward hands what r reads to send until r ends, or until its read
// deadline passes (the command has exited): then it sends what the pipe
// still holds (FIONREAD, which Linux spells TIOCINQ) and stops, whoever else writes to it later.
func forward(r *os.File, send func([]byte)) {
	buf := make([]byte, 4096)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			send(buf[:n])
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			break
		}
		if err != nil {
			return
		}
	}
	left := 0
	if rc, err := r.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { left, _ = unix.IoctlGetInt(int(fd), unix.TIOCINQ) })
	}
	r.SetReadDeadline(time.Time{})
	for left > 0 {
		n, err := r.Read(buf[:min(left, len(buf))])
		if n > 0 {
			send(buf[:n])
		}
		if left -= n; err != nil {
			return
		}
	}
}
