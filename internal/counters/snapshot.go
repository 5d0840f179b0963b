package counters

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Snapshot is the state of the counters at one instant.
type Snapshot struct {
	Time time.Time
	SNMP Table          // /proc/net/snmp merged with /proc/net/netstat
	Dev  map[string]Dev // /proc/net/dev
	CPU  CPU            // /proc/stat (system-wide; not per namespace)
	NCPU int
}

// Take reads a snapshot of the network namespace of the calling thread, so
// a goroutine locked to a lab node's namespace sees that node's counters
// (threadNetDir: /proc/thread-self/net, or /proc/self/task/TID/net on
// kernels before 3.17). CPU time is system-wide.
func Take() (*Snapshot, error) { return live.take() }

// TakeFrom reads a snapshot from a net directory (holding snmp, netstat and
// dev) and a stat file.
func TakeFrom(netDir, statPath string) (*Snapshot, error) {
	s := &Snapshot{Time: time.Now()}
	var err error
	for _, name := range []string{"snmp", "netstat"} {
		if err = parseFile(filepath.Join(netDir, name), func(f *os.File) error {
			s.SNMP, err = ParseSNMP(f, s.SNMP)
			return err
		}); err != nil {
			return nil, err
		}
	}
	if err = parseFile(filepath.Join(netDir, "dev"), func(f *os.File) error {
		s.Dev, err = ParseNetDev(f)
		return err
	}); err != nil {
		return nil, err
	}
	if err = parseFile(statPath, func(f *os.File) error {
		s.CPU, s.NCPU, err = ParseStat(f)
		return err
	}); err != nil {
		return nil, err
	}
	return s, nil
}

func parseFile(path string, parse func(*os.File) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("counters: %w", err)
	}
	defer f.Close()
	if err := parse(f); err != nil {
		return fmt.Errorf("counters: %s: %w", path, err)
	}
	return nil
}

// Delta is the change between two snapshots.
type Delta struct {
	Interval time.Duration
	// SNMP holds a counter only when both snapshots have it: a counter
	// this kernel does not keep (one added after it) is absent, never 0.
	SNMP Table
	Dev  map[string]Dev
	CPU  CPU
	NCPU int
}

// Sub returns after minus before. Counters that went backwards (a wrap or a
// reset) yield zero rather than a huge number; counters missing from
// either snapshot are missing from the delta.
func Sub(before, after *Snapshot) Delta {
	d := Delta{Interval: after.Time.Sub(before.Time), SNMP: Table{}, Dev: map[string]Dev{}, NCPU: after.NCPU}
	for g, fields := range after.SNMP {
		m := map[string]int64{}
		for k, v := range fields {
			old, ok := before.SNMP[g][k]
			if !ok {
				continue
			}
			m[k] = max(v-old, 0)
		}
		d.SNMP[g] = m
	}
	for name, a := range after.Dev {
		b := before.Dev[name]
		d.Dev[name] = Dev{
			sub(a.RxBytes, b.RxBytes), sub(a.RxPackets, b.RxPackets), sub(a.RxErrors, b.RxErrors),
			sub(a.RxDropped, b.RxDropped), sub(a.RxFIFO, b.RxFIFO), sub(a.RxFrame, b.RxFrame),
			sub(a.RxCompressed, b.RxCompressed), sub(a.RxMulticast, b.RxMulticast),
			sub(a.TxBytes, b.TxBytes), sub(a.TxPackets, b.TxPackets), sub(a.TxErrors, b.TxErrors),
			sub(a.TxDropped, b.TxDropped), sub(a.TxFIFO, b.TxFIFO), sub(a.TxColls, b.TxColls),
			sub(a.TxCarrier, b.TxCarrier), sub(a.TxCompressed, b.TxCompressed),
		}
	}
	a, b := after.CPU, before.CPU
	d.CPU = CPU{sub(a.User, b.User), sub(a.Nice, b.Nice), sub(a.System, b.System), sub(a.Idle, b.Idle),
		sub(a.IOWait, b.IOWait), sub(a.IRQ, b.IRQ), sub(a.SoftIRQ, b.SoftIRQ), sub(a.Steal, b.Steal)}
	return d
}

func sub(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}
