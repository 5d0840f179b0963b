package guest

import (
	"net"
	"os/exec"
	"sync"
	"time"

	"github.com/interlink/interlink/internal/vm/channel"
)

// DialTimeout bounds each connect the guest makes to answer a
// ServiceProbe. A live listener takes a connect at once, even a stopped
// one (the kernel completes it), so this only bounds a dropped one.
const DialTimeout = time.Second

// Services are the processes the guest started for its services, by
// kind, so that it can say whether each still lives.
type Services struct {
	mu    sync.Mutex
	procs map[string]*guestProc
}

// guestProc is one service's process: its PID and whether it has exited.
type guestProc struct {
	pid    int
	exited chan struct{} // closed once the process has exited and was reaped
}

// NewServices returns an empty set of services.
func NewServices() *Services { return &Services{procs: map[string]*guestProc{}} }

// Track records cmd, started, as kind's process and reaps it when it
// exits (which is how the guest knows it did: its PID alone could be
// taken again by another process).
func (s *Services) Track(kind string, cmd *exec.Cmd) {
	p := &guestProc{pid: cmd.Process.Pid, exited: make(chan struct{})}
	s.mu.Lock()
	s.procs[kind] = p
	s.mu.Unlock()
	go func() {
		cmd.Wait()
		close(p.exited)
	}()
}

// answer answers each probe: the process's PID, whether it lives and, if
// it does, whether a connect to the probe's address is taken. The probes
// are answered at once, each within DialTimeout.
func (s *Services) answer(probes []channel.ServiceProbe) []channel.ServiceAnswer {
	out := make([]channel.ServiceAnswer, len(probes))
	var wg sync.WaitGroup
	for i, pr := range probes {
		s.mu.Lock()
		p := s.procs[pr.Kind]
		s.mu.Unlock()
		out[i] = channel.ServiceAnswer{Kind: pr.Kind}
		if p == nil {
			out[i].Error = "the guest did not start " + pr.Kind
			continue
		}
		out[i].PID = p.pid
		select {
		case <-p.exited:
			continue
		default:
			out[i].Alive = true
		}
		wg.Add(1)
		go func(a *channel.ServiceAnswer) {
			defer wg.Done()
			c, err := net.DialTimeout("tcp", pr.Address, DialTimeout)
			if err != nil {
				a.Error = err.Error()
				return
			}
			c.Close()
			a.Listening = true
		}(&out[i])
	}
	wg.Wait()
	return out
}
