// Package idlestat reads the kernel's cpuidle statistics of every CPU and
// state (/sys/devices/system/cpu/cpuN/cpuidle/stateK/{name,latency,usage,
// time}; kernel Documentation/admin-guide/pm/cpuidle.rst) and their change
// over a span, so that a measurement can say how often its host's CPUs
// went idle, and so had to be woken, while it ran.
package idlestat

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// State is one idle state of one CPU as the kernel counts it.
type State struct {
	CPU       string
	Name      string
	LatencyUs int64 // exit latency the driver declares, us
	Usage     int64 // times the state was entered
	TimeUs    int64 // time spent in it, us
}

// Snapshot is every CPU's idle states at one moment; empty where the
// kernel has no cpuidle (no driver, or not Linux).
type Snapshot struct {
	States []State
}

// Read takes a snapshot under root ("/" for this host). A state whose
// files cannot be read is left out; no states at all is an empty snapshot.
func Read(root string) Snapshot {
	dirs, _ := filepath.Glob(filepath.Join(root, "sys/devices/system/cpu/cpu[0-9]*/cpuidle/state[0-9]*"))
	var s Snapshot
	for _, d := range dirs {
		cpu := filepath.Base(filepath.Dir(filepath.Dir(d)))
		name, err := os.ReadFile(filepath.Join(d, "name"))
		if err != nil {
			continue
		}
		st := State{CPU: cpu, Name: strings.TrimSpace(string(name))}
		ok := true
		for _, f := range []struct {
			file string
			v    *int64
		}{{"latency", &st.LatencyUs}, {"usage", &st.Usage}, {"time", &st.TimeUs}} {
			b, err := os.ReadFile(filepath.Join(d, f.file))
			if err != nil {
				ok = false
				break
			}
			if *f.v, err = strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err != nil {
				ok = false
				break
			}
		}
		if ok {
			s.States = append(s.States, st)
		}
	}
	return s
}

// PollState is the name the kernel gives its polling idle state
// (drivers/cpuidle/poll_state.c).
const PollState = "POLL"

// Delta is what the CPUs' idle states counted between two snapshots.
type Delta struct {
	CPUs    int   `json:"cpus"`
	Entries int64 `json:"entries"` // idle-state entries, all CPUs
	// SleepEntries leaves out the polling state (POLL: the CPU spins,
	// it does not sleep, and leaving it costs next to nothing).
	SleepEntries int64        `json:"sleep_entries"`
	IdleNs       int64        `json:"idle_ns"` // time in idle states, all CPUs
	States       []StateDelta `json:"states"`
}

// StateDelta is one state's share of a Delta, summed over the CPUs.
type StateDelta struct {
	Name string `json:"name"`
	// ExitLatencyNs is the largest exit latency the driver declares for
	// the state on any CPU (for a VM's halt state it leaves out the VM
	// exit and entry, which cost far more).
	ExitLatencyNs int64 `json:"exit_latency_ns"`
	Entries       int64 `json:"entries"`
	IdleNs        int64 `json:"idle_ns"`
}

// Since is what happened from before to s; nil when either snapshot has
// no states (no cpuidle: the figures are not available, not 0).
func (s Snapshot) Since(before Snapshot) *Delta {
	if len(s.States) == 0 || len(before.States) == 0 {
		return nil
	}
	type key struct{ cpu, name string }
	prev := make(map[key]State, len(before.States))
	for _, st := range before.States {
		prev[key{st.CPU, st.Name}] = st
	}
	d := &Delta{}
	cpus := map[string]bool{}
	byName := map[string]*StateDelta{}
	for _, st := range s.States {
		p, ok := prev[key{st.CPU, st.Name}]
		if !ok || st.Usage < p.Usage || st.TimeUs < p.TimeUs {
			continue // a CPU that came or went, or a counter reset
		}
		cpus[st.CPU] = true
		sd := byName[st.Name]
		if sd == nil {
			sd = &StateDelta{Name: st.Name}
			byName[st.Name] = sd
		}
		sd.ExitLatencyNs = max(sd.ExitLatencyNs, st.LatencyUs*1000)
		sd.Entries += st.Usage - p.Usage
		sd.IdleNs += (st.TimeUs - p.TimeUs) * 1000
	}
	if len(cpus) == 0 {
		return nil
	}
	d.CPUs = len(cpus)
	for _, sd := range byName {
		d.Entries += sd.Entries
		if sd.Name != PollState {
			d.SleepEntries += sd.Entries
		}
		d.IdleNs += sd.IdleNs
		d.States = append(d.States, *sd)
	}
	sort.Slice(d.States, func(i, j int) bool { return d.States[i].ExitLatencyNs < d.States[j].ExitLatencyNs })
	return d
}
