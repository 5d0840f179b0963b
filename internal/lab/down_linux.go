package lab

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/interlink/interlink/internal/shellq"
	"github.com/interlink/interlink/internal/termtext"
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
			return nil, fmt.Errorf("lab %s: namespace %s is gone; run 'interlink lab up' again, or remove the lab: %s", name, ns, shellq.Join("interlink", "lab", "down", name))
		}
	}
	return newLab(st.Topology), nil
}

// Down removes everything the lab called name created: the processes
// running in its namespaces, the namespaces (and with them every veth and
// bridge), its state and the files kept for it (Lab.Dir). It works on a lab
// whose Up (or whose user, such as `lab demo`) was killed halfway. While an
// Up or Down of the name runs elsewhere it returns a *BusyError (ErrBusy)
// and changes nothing. When a process of the lab survives SIGKILL, Down
// says which and leaves the lab recorded, so a later Down finishes the job.
// opts are for tests.
func Down(name string, opts ...DownOption) error {
	if err := CheckPrivilege(); err != nil {
		return err
	}
	if err := validName(name); err != nil {
		return fmt.Errorf("lab: name %w", err)
	}
	unlock, err := lock(name, opDown)
	if err != nil {
		return err
	}
	err = down(name, newDownConfig(opts))
	unlock(err == nil || errors.Is(err, ErrNotFound))
	return err
}

// down is Down with the lock held. Besides the recorded namespaces it
// removes any namespace named for this lab (il-NAME, il-NAME.*), which only
// this lab can have created, and the files of a write that was cut short;
// it returns ErrNotFound only when there was nothing at all.
func down(name string, cfg downConfig) error {
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
			if isLabNS(name, e.Name()) && !slices.Contains(names, e.Name()) {
				names = append(names, e.Name())
			}
		}
	}
	var files []string // what a killed writer can leave besides the state
	for _, f := range labFiles(name) {
		if _, serr := os.Lstat(f); serr == nil {
			files = append(files, f)
		}
	}
	if st == nil && len(names) == 0 && len(files) == 0 {
		return err
	}
	var errs []error
	if st != nil {
		// Each kind stops what runs its nodes: a service that will not
		// stop cleanly is killed below, and its error reported only if
		// the lab cannot be removed; qemu runs in the switch namespace,
		// so killProcesses would find it too, but it goes by PID first,
		// as recorded.
		for _, k := range kinds {
			if serr := k.stop(st); serr != nil {
				errs = append(errs, serr)
			}
		}
	}
	if err := killProcesses(names, cfg); err != nil {
		return fmt.Errorf("lab %s: %w", name, err)
	}
	stopErrs := errs
	errs = nil
	for i := len(names) - 1; i >= 0; i-- {
		if err := removeNS(names[i]); err != nil {
			errs = append(errs, err)
		}
	}
	for _, f := range files {
		if err := os.RemoveAll(f); err != nil {
			errs = append(errs, fmt.Errorf("remove %s: %w", f, err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("lab %s: %w", name, errors.Join(append(stopErrs, errs...)...))
	}
	if err := os.Remove(statePath(name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("lab %s: remove state: %w", name, err)
	}
	return nil
}

// killProcesses ends the processes whose network namespace is one of the
// named ones (as `ip netns pids` finds them): SIGTERM, then SIGKILL after
// cfg.grace. It returns an error naming the processes still there cfg.reap
// after SIGKILL (a process stuck in the kernel). This process itself is never
// signalled; zombies have left their namespaces and do not count.
func killProcesses(names []string, cfg downConfig) error {
	type key struct{ dev, ino uint64 }
	want := map[key]string{}
	for _, n := range names {
		var st unix.Stat_t
		if err := unix.Stat(nsPath(n), &st); err == nil {
			want[key{st.Dev, st.Ino}] = n
		}
	}
	if len(want) == 0 {
		return nil
	}
	signal := cfg.signal
	if signal == nil {
		signal = unix.Kill
	}
	where := map[int]string{} // pid -> namespace
	find := func() []int {
		var pids []int
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			var st unix.Stat_t
			if unix.Stat("/proc/"+e.Name()+"/ns/net", &st) == nil {
				if ns, ok := want[key{st.Dev, st.Ino}]; ok {
					pids = append(pids, pid)
					where[pid] = ns
				}
			}
		}
		return pids
	}
	gone := func(d time.Duration) []int {
		deadline := time.Now().Add(d)
		for {
			pids := find()
			if len(pids) == 0 || !time.Now().Before(deadline) {
				return pids
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	pids := find()
	if len(pids) == 0 {
		return nil
	}
	for _, pid := range pids {
		signal(pid, unix.SIGTERM)
	}
	if pids = gone(cfg.grace); len(pids) == 0 {
		return nil
	}
	for _, pid := range pids {
		signal(pid, unix.SIGKILL)
	}
	if pids = gone(cfg.reap); len(pids) == 0 {
		return nil
	}
	return &SurvivorsError{Processes: describe(pids, where)}
}

// describe names processes for an error: PID, command name and namespace.
func describe(pids []int, where map[int]string) []string {
	var out []string
	for _, pid := range pids {
		comm, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
		out = append(out, fmt.Sprintf("%d (%s) in %s", pid, termtext.Clean(strings.TrimSpace(string(comm))), where[pid]))
	}
	return out
}
