package lab

import (
	"errors"
	"strings"
	"testing"
)

// These tests need no privilege: they run as any user, on any OS.

func TestFlockHolder(t *testing.T) {
	locks := []byte(`1: POSIX  ADVISORY  WRITE 700 00:1a:4242 0 EOF
2: FLOCK  ADVISORY  READ  701 00:1a:4242 0 EOF
3: OFDLCK ADVISORY  WRITE -1 00:1a:4242 0 EOF
4: FLOCK  ADVISORY  WRITE 702 fd:01:4242 0 EOF
5: FLOCK  ADVISORY  WRITE 703 00:1a:4242 0 EOF
5: -> FLOCK  ADVISORY  WRITE 704 00:1a:4242 0 EOF
6: FLOCK  ADVISORY  WRITE garbage
`)
	for _, c := range []struct {
		major, minor uint32
		ino          uint64
		want         int
	}{
		{0x00, 0x1a, 4242, 703}, // not the POSIX, READ, OFD or waiting lines
		{0xfd, 0x01, 4242, 702}, // major and minor are hex
		{0x00, 0x1a, 4243, 0},
		{0x00, 0x1b, 4242, 0},
	} {
		if got := flockHolder(locks, c.major, c.minor, c.ino); got != c.want {
			t.Errorf("holder of %x:%x:%d = %d, want %d", c.major, c.minor, c.ino, got, c.want)
		}
	}
	if got := flockHolder(nil, 0, 0x1a, 4242); got != 0 {
		t.Errorf("holder in an empty table = %d", got)
	}
}

func TestLockOwner(t *testing.T) {
	for _, c := range []struct {
		content string
		pid     int
		want    string
	}{{"703 up\n", 703, "up"}, {"703 down\n", 703, "down"}, {"702 up\n", 703, ""}, {"", 703, ""}, {"703\n", 703, ""}} {
		if got := lockOwner([]byte(c.content), c.pid); got != c.want {
			t.Errorf("lockOwner(%q, %d) = %q, want %q", c.content, c.pid, got, c.want)
		}
	}
}

func TestBusyError(t *testing.T) {
	for _, c := range []struct {
		err  *BusyError
		want string
	}{
		{&BusyError{Lab: "jumbo", PID: 4242, Op: opUp}, "lab jumbo is being built by PID 4242"},
		{&BusyError{Lab: "jumbo", PID: 4242, Op: opDown}, "lab jumbo is being removed by PID 4242"},
		{&BusyError{Lab: "jumbo", PID: 4242}, "lab jumbo is being built or removed by PID 4242"},
		{&BusyError{Lab: "jumbo", Op: opUp}, "lab jumbo is being built by another process"},
	} {
		if got := c.err.Error(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.err, got, c.want)
		}
		if !errors.Is(c.err, ErrBusy) {
			t.Errorf("%+v is not ErrBusy", c.err)
		}
	}
	s := &SurvivorsError{Processes: []string{"12 (sleep) in il-x.n1"}}
	if !errors.Is(s, ErrSurvivors) || !strings.Contains(s.Error(), "1 process(es) still running in the lab after SIGKILL: 12 (sleep) in il-x.n1") {
		t.Errorf("survivors error %q", s)
	}
}

func TestCheckName(t *testing.T) {
	for _, ok := range []string{"jumbo", "t3-a_1", strings.Repeat("a", 24)} {
		if err := CheckName(ok); err != nil {
			t.Errorf("CheckName(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "Bad", "a.b", "-a", "a b", strings.Repeat("a", 25), "a\x1b[2J"} {
		err := CheckName(bad)
		if err == nil {
			t.Errorf("CheckName(%q) accepted", bad)
			continue
		}
		if strings.ContainsAny(err.Error(), "\x1b\n") {
			t.Errorf("CheckName(%q): error %q carries control characters", bad, err)
		}
	}
	if err := CheckName(""); err.Error() != "is empty: a lab needs a name" {
		t.Errorf("empty name: %q", err)
	}
}

func TestOptions(t *testing.T) {
	c := newDownConfig(nil)
	if c.signal != nil || c.grace <= 0 || c.reap <= 0 {
		t.Errorf("default down config %+v", c)
	}
	c = newDownConfig([]DownOption{WithGrace(1, 2)})
	if c.grace != 1 || c.reap != 2 {
		t.Errorf("WithGrace: %+v", c)
	}
}
