package counters

import (
	"net"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/roottest"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/interlink/interlink/internal/osthread"
)

// On Linux Take always works: through /proc/thread-self where the kernel
// has it (3.17 on), through /proc/self/task/TID otherwise.
func TestTakeLive(t *testing.T) {
	_, err := os.Stat("/proc/thread-self/net/snmp")
	if live.hasThreadSelf() != (err == nil) {
		t.Errorf("hasThreadSelf() = %v, but stat of /proc/thread-self/net/snmp: %v", live.hasThreadSelf(), err)
	}
	s, err := Take()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.SNMP.Get("Ip", "InReceives"); !ok {
		t.Errorf("no Ip InReceives in %v", s.SNMP)
	}
}

// A kernel without /proc/thread-self (before 3.17: RHEL and OL 7) is a
// procfs root that lacks it; Take's fallback through /proc/self/task/TID
// must read the same figures as thread-self, and those of the calling
// thread's namespace, not the process's. Both are read in a fresh network
// namespace on a thread of its own, after a known number of datagrams.
func TestTakeWithoutThreadSelf(t *testing.T) {
	roottest.Require(t, "it creates a network namespace")
	old := t.TempDir()
	for name, target := range map[string]string{"self": "/proc/self", "stat": "/proc/stat"} {
		if err := os.Symlink(target, filepath.Join(old, name)); err != nil {
			t.Fatal(err)
		}
	}
	fallback := &procFS{root: old, gettid: gettid}
	if fallback.hasThreadSelf() {
		t.Fatal("the probe found thread-self in a root without it")
	}
	const sent = 7
	type pair struct {
		viaThreadSelf, viaTask *Snapshot
		dir                    string
		err                    error
	}
	done := make(chan pair, 1)
	osthread.Spent(func() {
		var p pair
		defer func() { done <- p }()
		if p.err = unix.Unshare(unix.CLONE_NEWNET); p.err != nil {
			return
		}
		if p.err = loopbackDatagrams(sent); p.err != nil {
			return
		}
		p.dir = fallback.threadNetDir()
		if p.viaTask, p.err = fallback.take(); p.err != nil {
			return
		}
		p.viaThreadSelf, p.err = TakeFrom("/proc/thread-self/net", "/proc/stat")
	})
	var p pair
	select {
	case p = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the namespace thread did not finish in 20 s")
	}
	if p.err != nil {
		t.Fatal(p.err)
	}
	if want := filepath.Join(old, "self", "task"); filepath.Dir(filepath.Dir(p.dir)) != want {
		t.Errorf("fallback read %s, want a directory under %s", p.dir, want)
	}
	if !reflect.DeepEqual(p.viaTask.SNMP, p.viaThreadSelf.SNMP) {
		t.Errorf("the fallback read other counters than thread-self:\n%v\n%v", p.viaTask.SNMP, p.viaThreadSelf.SNMP)
	}
	if !reflect.DeepEqual(p.viaTask.Dev, p.viaThreadSelf.Dev) {
		t.Errorf("the fallback read other interfaces than thread-self:\n%v\n%v", p.viaTask.Dev, p.viaThreadSelf.Dev)
	}
	if v, _ := p.viaTask.SNMP.Get("Udp", "InDatagrams"); v != sent {
		t.Errorf("Udp InDatagrams = %d in the new namespace, want %d: not the thread's namespace", v, sent)
	}
}

// loopbackDatagrams brings lo up in the calling thread's namespace and
// sends n datagrams to itself over it, reading each back.
func loopbackDatagrams(n int) error {
	lo, err := netlink.LinkByName("lo")
	if err != nil {
		return err
	}
	if err := netlink.LinkSetUp(lo); err != nil {
		return err
	}
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return err
	}
	defer c.Close()
	buf := make([]byte, 64)
	for i := 0; i < n; i++ {
		if _, err := c.WriteToUDP([]byte("counters"), c.LocalAddr().(*net.UDPAddr)); err != nil {
			return err
		}
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		if _, _, err := c.ReadFromUDP(buf); err != nil {
			return err
		}
	}
	return nil
}
