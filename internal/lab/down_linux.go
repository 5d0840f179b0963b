package lab

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// Open returns the lab called name, which must be up.
func Open(name string) (*Lab, error) {
	if err := validName(name); err != nil {
		return nil, fmt.Errorf("lab: name %w", err)
	}
	st, err := readState(name)
	if err != nil {
		return nil, err
	}
	if !st.Complete || st.Topology == nil {
		return nil, fmt.Errorf("lab %s: %w", name, ErrIncomplete)
	}
	for _, ns := range st.Namespaces {
		if !nsExists(ns) {
			return nil, fmt.Errorf("lab %s: namespace %s is gone; run 'interlink lab up' again or 'interlink lab down %s'", name, ns, name)
		}
	}
	return newLab(st.Topology), nil
}

// Down removes everything the lab called name created: the processes
// running in its namespaces, the namespaces (and with them every veth and
// bridge) and its state. It works on a lab whose Up was killed halfway.
func Down(name string) error {
	if err := CheckPrivilege(); err != nil {
		return err
	}
	if err := validName(name); err != nil {
		return fmt.Errorf("lab: name %w", err)
	}
	unlock, err := lock(name)
	if err != nil {
		return err
	}
	err = down(name)
	unlock(err == nil || errors.Is(err, ErrNotFound))
	return err
}

// down is Down with the lock held. Besides the recorded namespaces it
// removes any namespace named for this lab (il-NAME, il-NAME.*), which only
// this lab can have created; it returns ErrNotFound only when there was
// nothing at all.
func down(name string) error {
	st, err := readState(name)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return err
	}
	var names []string
	if st != nil {
		names = append(names, st.Namespaces...)
	}
	if entries, rerr := os.ReadDir(NetnsDir); rerr == nil {
		for _, e := range entries {
			if isLabNS(name, e.Name()) && !contains(names, e.Name()) {
				names = append(names, e.Name())
			}
		}
	}
	if st == nil && len(names) == 0 {
		return err
	}
	if err := killProcesses(names); err != nil {
		return fmt.Errorf("lab %s: %w", name, err)
	}
	var errs []error
	for i := len(names) - 1; i >= 0; i-- {
		if err := removeNS(names[i]); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("lab %s: %w", name, errors.Join(errs...))
	}
	if err := os.Remove(statePath(name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("lab %s: remove state: %w", name, err)
	}
	return nil
}

// killProcesses ends the processes whose network namespace is one of the
// named ones (as `ip netns pids` finds them): SIGTERM, then SIGKILL after a
// grace period. This process itself is never signalled.
func killProcesses(names []string) error {
	type key struct{ dev, ino uint64 }
	want := map[key]bool{}
	for _, n := range names {
		var st unix.Stat_t
		if err := unix.Stat(nsPath(n), &st); err == nil {
			want[key{st.Dev, st.Ino}] = true
		}
	}
	if len(want) == 0 {
		return nil
	}
	find := func() []int {
		var pids []int
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			var st unix.Stat_t
			if unix.Stat("/proc/"+e.Name()+"/ns/net", &st) == nil && want[key{st.Dev, st.Ino}] {
				pids = append(pids, pid)
			}
		}
		return pids
	}
	pids := find()
	if len(pids) == 0 {
		return nil
	}
	for _, pid := range pids {
		unix.Kill(pid, unix.SIGTERM)
	}
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		if pids = find(); len(pids) == 0 {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, pid := range pids {
		unix.Kill(pid, unix.SIGKILL)
	}
	return nil
}
