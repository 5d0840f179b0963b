package sysctl

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// Write sets each entry of kv: keys are paths below /proc/sys
// (net/ipv4/ip_forward), values what is written. Entries are written in
// key order, so a failure is the same on every run; Write stops at the
// first that fails and names it (net.ipv4.ip_forward=1), leaving the ones
// before it written. Entries under net/ go to the calling thread's network
// namespace: lock the thread (or use osthread) when that matters.
func Write(kv map[string]string) error {
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := os.WriteFile(filepath.Join(Root, k), []byte(kv[k]), 0o644); err != nil {
			return fmt.Errorf("sysctl %s=%s: %w", Name(k), kv[k], err)
		}
	}
	return nil
}
