package idlestat

import (
	"os"
	"path/filepath"
	"testing"
)

// tree writes a cpuidle tree under root: per CPU, per state name, latency,
// usage and time.
func tree(t *testing.T, root string, states map[string][][4]string) {
	t.Helper()
	for cpu, sts := range states {
		for i, st := range sts {
			d := filepath.Join(root, "sys/devices/system/cpu", cpu, "cpuidle", "state"+string(rune('0'+i)))
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
			for j, f := range []string{"name", "latency", "usage", "time"} {
				if err := os.WriteFile(filepath.Join(d, f), []byte(st[j]+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

func TestSince(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	tree(t, a, map[string][][4]string{"cpu0": {{"POLL", "0", "5", "10"}, {"haltpoll idle", "1", "100", "1000"}},
		"cpu1": {{"POLL", "0", "0", "0"}, {"haltpoll idle", "1", "50", "500"}}})
	tree(t, b, map[string][][4]string{"cpu0": {{"POLL", "0", "5", "10"}, {"haltpoll idle", "1", "300", "3000"}},
		"cpu1": {{"POLL", "0", "2", "4"}, {"haltpoll idle", "1", "150", "1500"}}})
	d := Read(b).Since(Read(a))
	if d == nil || d.CPUs != 2 || d.Entries != 302 || d.SleepEntries != 300 || d.IdleNs != 3004e3 || len(d.States) != 2 ||
		d.States[1].Name != "haltpoll idle" || d.States[1].Entries != 300 || d.States[1].ExitLatencyNs != 1000 {
		t.Fatalf("%+v", d)
	}
	// No cpuidle (a kernel without a driver): not available, not 0.
	if Read(t.TempDir()).Since(Read(a)) != nil || Read(a).Since(Snapshot{}) != nil {
		t.Error("a delta from an empty snapshot")
	}
	// A counter that went back (a CPU hot-plugged in between) is left
	// out: only cpu0's POLL, unchanged, remains.
	if d := Read(a).Since(Read(b)); d == nil || d.CPUs != 1 || d.Entries != 0 {
		t.Errorf("backwards: %+v", d)
	}
}
