package sysctl

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/interlink/interlink/internal/roottest"

	"golang.org/x/sys/unix"

	"github.com/interlink/interlink/internal/osthread"
)

// inNewNetns runs fn on a thread in a network namespace of its own, which
// goes with the thread when fn returns.
func inNewNetns(t *testing.T, fn func() error) error {
	t.Helper()
	roottest.Require(t, "a network namespace of its own")
	errc := make(chan error, 1)
	osthread.Spent(func() {
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			errc <- err
			return
		}
		errc <- fn()
	})
	return <-errc
}

func read(key string) string {
	b, _ := os.ReadFile(filepath.Join(Root, key))
	return strings.TrimSpace(string(b))
}

// TestWrite: the entries are written in the writing thread's network
// namespace, read back there, and the host's stay as they were.
func TestWrite(t *testing.T) {
	host := read("net/ipv4/ip_forward")
	want := "1"
	if host == "1" {
		want = "0"
	}
	var got, gotDAD string
	err := inNewNetns(t, func() error {
		if err := Write(map[string]string{"net/ipv4/ip_forward": want, "net/ipv6/conf/default/accept_dad": "0"}); err != nil {
			return err
		}
		got, gotDAD = read("net/ipv4/ip_forward"), read("net/ipv6/conf/default/accept_dad")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got != want || gotDAD != "0" {
		t.Errorf("read back ip_forward %q accept_dad %q, want %q and 0", got, gotDAD, want)
	}
	if now := read("net/ipv4/ip_forward"); now != host {
		t.Errorf("the host's ip_forward changed from %s to %s", host, now)
	}
}

// TestWriteStopsAtFirstFailure: entries go in key order; the first that
// the kernel refuses is named with its value and its errno, the ones
// before it are written and the ones after it are not tried.
func TestWriteStopsAtFirstFailure(t *testing.T) {
	var first, last, lastWas string
	err := inNewNetns(t, func() error {
		lastWas = read("net/ipv6/conf/all/hop_limit")
		err := Write(map[string]string{
			"net/ipv4/ip_forward":          "nonsense",
			"net/ipv4/conf/all/forwarding": "1",  // sorts first
			"net/ipv4/no_such_entry":       "1",  // sorts after the failure
			"net/ipv6/conf/all/hop_limit":  "33", // and this too
		})
		first, last = read("net/ipv4/conf/all/forwarding"), read("net/ipv6/conf/all/hop_limit")
		return err
	})
	if err == nil || !errors.Is(err, syscall.EINVAL) || !strings.HasPrefix(err.Error(), "sysctl net.ipv4.ip_forward=nonsense: ") {
		t.Fatalf("err = %v, want net.ipv4.ip_forward=nonsense named, EINVAL", err)
	}
	if first != "1" || last != lastWas {
		t.Errorf("conf/all/forwarding %q (want written: 1), ipv6 hop_limit %q (want untouched: %s)", first, last, lastWas)
	}
}

func TestName(t *testing.T) {
	if got := Name("net/ipv6/conf/all/accept_dad"); got != "net.ipv6.conf.all.accept_dad" {
		t.Errorf("Name = %q", got)
	}
}
