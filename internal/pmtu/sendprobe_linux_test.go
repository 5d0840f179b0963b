package pmtu

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/roottest"

	"golang.org/x/sys/unix"

	"github.com/interlink/interlink/internal/lab"
)

// TestSendProbePendingICMPError reproduces the kernel behaviour sendProbe
// exists for: after a router's "packet too big", the socket holds EMSGSIZE
// as its pending error and the next send of any size returns it without
// sending. A probe that fits must still go out (a second attempt), while one
// above the local MTU must fail every attempt. Both address families.
func TestSendProbePendingICMPError(t *testing.T) {
	roottest.Require(t, "it builds a namespace lab")
	topo, err := lab.Load("routed")
	if err != nil {
		t.Fatal(err)
	}
	topo.Name = fmt.Sprintf("t4-sk%d", os.Getpid()%10000)
	l, err := lab.Up(context.Background(), topo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lab.Down(topo.Name) })
	n1, err := l.Node("node1")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		v6     bool
		family int
		dst    unix.Sockaddr
	}{
		{false, unix.AF_INET, &unix.SockaddrInet4{Addr: [4]byte{198, 18, 20, 3}, Port: 9}},
		{true, unix.AF_INET6, &unix.SockaddrInet6{Addr: [16]byte{0xfd, 0, 0, 0x20, 15: 3}, Port: 9}},
	} {
		err := n1.Do(func() error {
			fd, err := unix.Socket(c.family, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				return err
			}
			defer unix.Close(fd)
			if err := setProbeOptions(fd, c.v6); err != nil {
				return err
			}
			if err := unix.Connect(fd, c.dst); err != nil {
				return err
			}
			// 8000 bytes leave node1 (MTU 9000) and meet r1's 1400 hop.
			if _, err := unix.Write(fd, make([]byte, 8000)); err != nil {
				return fmt.Errorf("first send: %w", err)
			}
			// Wait for the router's answer: POLLERR once the error is queued.
			pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLERR}}
			deadline := time.Now().Add(2 * time.Second)
			for pfd[0].Revents&unix.POLLERR == 0 && time.Now().Before(deadline) {
				unix.Poll(pfd, 100)
			}
			if pfd[0].Revents&unix.POLLERR == 0 {
				return fmt.Errorf("no ICMP error from the router")
			}
			attempts := 0
			err = sendProbe(func() error {
				attempts++
				_, err := unix.Write(fd, make([]byte, 100))
				return err
			})
			if err != nil {
				return fmt.Errorf("a 100-byte probe after the router's error: %w (attempts %d)", err, attempts)
			}
			if attempts != 2 {
				t.Logf("v6=%v: %d attempt(s): the kernel did not report the pending error on send", c.v6, attempts)
			}
			// A datagram above the interface MTU is a real local limit.
			attempts = 0
			err = sendProbe(func() error {
				attempts++
				_, err := unix.Write(fd, make([]byte, 9001))
				return err
			})
			if !isMsgSize(err) || attempts != sendTries {
				return fmt.Errorf("9001 bytes on a 9000 interface: %v after %d attempts, want EMSGSIZE after %d", err, attempts, sendTries)
			}
			return nil
		})
		if err != nil {
			t.Errorf("v6=%v: %v", c.v6, err)
		}
	}
}
