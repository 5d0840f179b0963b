package vm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ReadyLine is what the guest prints on its console when its links are
// configured, its agent answers and it serves commands.
const ReadyLine = "interlink-guest: ready"

// StatusLine is what the guest prints on its console, before ReadyLine,
// when it serves status queries on StatusDevice. A guest that cannot open
// it (its kernel has fewer serial ports) says why instead, and serves
// queries on ChannelDevice only, as it always does.
const StatusLine = "interlink-guest: status queries on " + StatusDevice

// Guest is the guest's side, run by the initramfs's init as `interlink lab
// guest CONFIG`: it configures the links and routes of the node, starts
// its agent, prints ReadyLine on console and serves commands on
// ChannelDevice and status queries on StatusDevice until ctx ends.
func Guest(ctx context.Context, configPath string, console io.Writer) error {
	data, err := os.ReadFile(configPath)
	if err != nil {
		return fmt.Errorf("guest: %w", err)
	}
	var cfg GuestConfig
	if err := json.Unmarshal(data, &cfg); err != nil {
		return fmt.Errorf("guest: %s: %w", configPath, err)
	}
	if err := configure(&cfg); err != nil {
		return fmt.Errorf("guest: %w", err)
	}
	svcs := newGuestServices()
	if cfg.AgentPort != 0 {
		if err := startAgent(ctx, &cfg, svcs); err != nil {
			return fmt.Errorf("guest: %w", err)
		}
	}
	if cfg.SSHD != nil {
		if err := startSSHD(ctx, svcs); err != nil {
			return fmt.Errorf("guest: %w", err)
		}
	}
	ch, err := openChannel(ChannelDevice)
	if err != nil {
		return fmt.Errorf("guest: %w", err)
	}
	defer ch.Close()
	if st, err := openChannel(StatusDevice); err != nil {
		fmt.Fprintf(console, "interlink-guest: no status port (%v): lab status asks on the command channel\n", err)
	} else {
		defer st.Close()
		go newServer(nil, svcs, true).serve(ctx, st)
		fmt.Fprintln(console, StatusLine)
	}
	up, _ := os.ReadFile("/proc/uptime")
	fmt.Fprintf(console, "%s at %s s\n", ReadyLine, strings.Fields(string(up) + " ?")[0])
	// INTERLINK_LAB and INTERLINK_NODE come with each request (the lab
	// sets a node's environment in one place, whatever its kind).
	return newServer(nil, svcs, false).serve(ctx, ch)
}

// startAgent starts `interlink agent` in a session of its own and waits
// until it answers on loopback (20 s: a guest in software emulation is
// slow to start a 40 MB binary), tracked in svcs.
func startAgent(ctx context.Context, cfg *GuestConfig, svcs *guestServices) error {
	if err := os.MkdirAll("/run/interlink", 0o700); err != nil {
		return err
	}
	token := "/run/interlink/agent.token"
	if err := os.WriteFile(token, []byte(cfg.AgentToken), 0o600); err != nil {
		return err
	}
	log, err := os.Create("/run/interlink/agent.log")
	if err != nil {
		return err
	}
	defer log.Close()
	self, err := os.Executable()
	if err != nil {
		return err
	}
	port := strconv.Itoa(cfg.AgentPort)
	cmd := exec.Command(self, "agent", "--listen", "0.0.0.0:"+port, "--token-file", token)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	svcs.track(ServiceAgent, cmd)
	return waitPort(ctx, "agent", port)
}

// startSSHD starts sshd in the foreground of a session of its own and
// waits until it answers on port 22; tracked in svcs.
func startSSHD(ctx context.Context, svcs *guestServices) error {
	for _, d := range []string{"/run/sshd", "/run/interlink"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	log, err := os.Create("/run/interlink/sshd.log")
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := exec.Command(sshdPath, "-D", "-e", "-f", "/etc/ssh/sshd_config")
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("sshd: %w", err)
	}
	svcs.track(ServiceSSHD, cmd)
	return waitPort(ctx, "sshd", "22")
}

// waitPort waits until something answers on loopback at port, 20 s at
// most (a guest in software emulation is slow to start a program).
func waitPort(ctx context.Context, what, port string) error {
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%s: no answer on port %s within 20s: %w", what, port, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// openChannel opens the serial port raw (cfmakeraw): 8 bits, no echo, no
// line editing, no translation.
func openChannel(dev string) (*os.File, error) {
	f, err := os.OpenFile(dev, os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, fmt.Errorf("channel: %w", err)
	}
	t, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("channel %s: %w", dev, err)
	}
	t.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON | unix.IXOFF
	t.Oflag &^= unix.OPOST
	t.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	t.Cflag &^= unix.CSIZE | unix.PARENB | unix.CBAUD
	t.Cflag |= unix.CS8 | unix.CLOCAL | unix.CREAD | unix.B115200
	t.Ispeed, t.Ospeed = unix.B115200, unix.B115200
	t.Cc[unix.VMIN], t.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(int(f.Fd()), unix.TCSETS, t); err != nil {
		f.Close()
		return nil, fmt.Errorf("channel %s: %w", dev, err)
	}
	return f, nil
}

// server is the guest's side of one serial port: the command channel
// runs commands and answers queries; the status channel (queriesOnly)
// answers queries and refuses commands.
type server struct {
	env         []string // added to every command's environment
	svcs        *guestServices
	queriesOnly bool
	mu          sync.Mutex
	running     map[uint32]*os.Process // the commands that run, by id
}

func newServer(env []string, svcs *guestServices, queriesOnly bool) *server {
	return &server{env: env, svcs: svcs, queriesOnly: queriesOnly, running: map[uint32]*os.Process{}}
}

// refusal is what a command sent on the status channel gets.
const refusal = "this is the status channel, which answers queries only: run commands on the command channel (lab exec)"

// serve runs the commands the host sends on ch, each in its own goroutine,
// and answers its queries about the services, until ctx ends.
func (s *server) serve(ctx context.Context, ch io.ReadWriter) error {
	fw := &frameWriter{w: ch}
	r := newFrameReader(ch)
	r.giveUpOnCut(ch)
	for ctx.Err() == nil {
		f, err := r.next()
		if errors.Is(err, errShortRead) {
			time.Sleep(100 * time.Millisecond) // a tty read error: try again
			continue
		}
		switch f.typ {
		case frameRequest:
			var req Request
			switch {
			case s.queriesOnly:
				sendExit(fw, f.id, exitFrame{Code: 127, Error: refusal})
			case json.Unmarshal(f.payload, &req) != nil || len(req.Argv) == 0:
				sendExit(fw, f.id, exitFrame{Code: 127, Error: "bad request"})
			default:
				go s.run(fw, f.id, req)
			}
		case frameQuery:
			// A query that does not parse gets no answers, which the
			// host reports as such (not as a guest that is silent).
			var probes []ServiceProbe
			json.Unmarshal(f.payload, &probes)
			go func(id uint32) {
				body, _ := json.Marshal(s.svcs.answer(probes))
				fw.send(frame{typ: frameAnswer, id: id, payload: body})
			}(f.id)
		case frameSignal:
			s.mu.Lock()
			p := s.running[f.id]
			s.mu.Unlock()
			if p != nil && len(f.payload) == 1 {
				p.Signal(syscall.Signal(f.payload[0]))
			}
		}
	}
	return ctx.Err()
}

// run runs req, known by id while it runs (for frameSignal), and sends its
// exit.
func (s *server) run(fw *frameWriter, id uint32, req Request) {
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

func sendExit(fw *frameWriter, id uint32, x exitFrame) {
	body, _ := json.Marshal(x)
	fw.send(frame{typ: frameExit, id: id, payload: body})
}

// runCommand runs req, sending its output as frames; started is told the
// process once it runs.
func runCommand(req Request, env []string, fw *frameWriter, id uint32, started func(*os.Process)) exitFrame {
	cmd := exec.Command(req.Argv[0], req.Argv[1:]...)
	cmd.Env = append(append(os.Environ(), env...), req.Env...)
	cmd.Dir = "/root"
	outR, outW := io.Pipe()
	errR, errW := io.Pipe()
	cmd.Stdout, cmd.Stderr = outW, errW
	if err := cmd.Start(); err != nil {
		return exitFrame{Code: 127, Error: err.Error()}
	}
	started(cmd.Process)
	var wg sync.WaitGroup
	for _, p := range []struct {
		r   *io.PipeReader
		typ byte
	}{{outR, frameStdout}, {errR, frameStderr}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 4096)
			for {
				n, err := p.r.Read(buf)
				if n > 0 {
					fw.data(p.typ, id, buf[:n])
				}
				if err != nil {
					return
				}
			}
		}()
	}
	err := cmd.Wait()
	outW.Close()
	errW.Close()
	wg.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return exitFrame{Code: 128 + int(ws.Signal())}
		}
		return exitFrame{Code: ee.ExitCode()}
	}
	if err != nil {
		return exitFrame{Code: 127, Error: err.Error()}
	}
	return exitFrame{}
}
