package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// connTimes returns the times in us of n sequential connections, each:
// connect, a 64-byte request, its reply, close.
func connTimes(addr string, n int) ([]float64, error) {
	req := make([]byte, 64)
	req[0] = 'p'
	times := make([]float64, 0, n)
	for i := 0; i < n; i++ {
		t := time.Now()
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			return nil, err
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Write(req); err != nil {
			c.Close()
			return nil, err
		}
		if _, err := io.ReadFull(c, make([]byte, 64)); err != nil {
			c.Close()
			return nil, err
		}
		c.Close()
		times = append(times, float64(time.Since(t).Microseconds()))
	}
	return times, nil
}

// stream returns the bytes one connection receives in d and the seconds
// it took.
func stream(addr string, d time.Duration) (int64, float64, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return 0, 0, err
	}
	defer c.Close()
	req := make([]byte, 64)
	req[0] = 's'
	if _, err := c.Write(req); err != nil {
		return 0, 0, err
	}
	c.SetReadDeadline(time.Now().Add(d))
	buf := make([]byte, 256<<10)
	var n int64
	start := time.Now()
	for {
		m, err := c.Read(buf)
		n += int64(m)
		if err != nil {
			break
		}
	}
	return n, time.Since(start).Seconds(), nil
}

// cost is what a process spent: CPU time of all its threads (ns, from
// /proc/PID/task/*/schedstat) and context switches (voluntary and not);
// ok is false where /proc does not tell.
type cost struct {
	cpuNs, switches int64
	ok              bool
}

func costOf(pid int) cost {
	if pid == 0 {
		return cost{}
	}
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
	var c cost
	for _, t := range tasks {
		if b, err := os.ReadFile(filepath.Join(t, "schedstat")); err == nil {
			if f := strings.Fields(string(b)); len(f) > 0 {
				ns, _ := strconv.ParseInt(f[0], 10, 64)
				c.cpuNs += ns
				c.ok = true
			}
		}
		b, _ := os.ReadFile(filepath.Join(t, "status"))
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.HasSuffix(k, "ctxt_switches") {
				n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				c.switches += n
			}
		}
	}
	return c
}

func (c cost) sub(d cost) cost {
	return cost{cpuNs: c.cpuNs - d.cpuNs, switches: c.switches - d.switches, ok: c.ok && d.ok}
}

func (c cost) add(d cost) cost {
	return cost{cpuNs: c.cpuNs + d.cpuNs, switches: c.switches + d.switches, ok: d.ok}
}

// per is the cost per connection of n: "CPU us, switches".
func (c cost) per(n int) string {
	if !c.ok || n == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f us, %.2f", float64(c.cpuNs)/1e3/float64(n), float64(c.switches)/float64(n))
}
