package inventory

import (
	"context"
	"time"
)

// Inventory is everything check knows about one node. Sections that could
// not be read are listed in Sections with their reason; the rest is still
// filled in (partial results survive a failing section).
type Inventory struct {
	Node       Node              `json:"node"`
	Interfaces []Interface       `json:"interfaces"`
	Routes     []Route           `json:"routes"` // IPv4 main table, /proc/net/route
	Persisted  []PersistedConfig `json:"persisted"`
	Sysctls    map[string]string `json:"sysctls"`
	Counters   *Counters         `json:"counters,omitempty"`
	Cluster    *Cluster          `json:"cluster,omitempty"`
	Mounts     []Mount           `json:"mounts"`
	DNFS       *DNFS             `json:"dnfs,omitempty"` // Oracle Direct NFS: homes and oranfstab files
	// Host is how the CPUs idle and wake and how NICs interrupt; nil when
	// the tree has none of its files.
	Host     *Host     `json:"host,omitempty"`
	Sections []Section `json:"sections"`
	// Unreadable lists what exists in the tree but was not read (at most
	// 1000, by path; the "files" section gives the count).
	Unreadable []Unreadable `json:"unreadable"`
}

// Unreadable is a file or directory that exists under the root but could
// not be read: a named pipe, device or socket (never opened), a file larger
// than MaxFileBytes, a link escaping a captured tree, no permission.
type Unreadable struct {
	Path   string `json:"path"`   // node path, /proc/net/snmp
	Reason string `json:"reason"` // "a named pipe (FIFO), not a regular file (not opened)"
}

// Node identifies the audited system.
type Node struct {
	Hostname string `json:"hostname"`
	Kernel   string `json:"kernel,omitempty"`
	// Facilities are kernel facilities probed on a live node (ids of
	// kernel.Facilities, present or not); nil for a captured tree, where
	// the release alone tells.
	Facilities map[string]bool `json:"facilities,omitempty"`
	OS         string          `json:"os,omitempty"`
	Root       string          `json:"root"`
	Time       time.Time       `json:"time"`
}

// Section reports whether one part of the inventory could be gathered.
type Section struct {
	Name   string `json:"name"`   // "interfaces", "persisted", "sysctls", "counters", "mounts", ...
	Status string `json:"status"` // "ok", "partial", "unreadable", "absent"
	Detail string `json:"detail,omitempty"`
}

// Options steer gathering. The zero value reads one sample of the counters
// at the current time.
type Options struct {
	// CounterInterval, when positive, makes Gather sample the kernel
	// counters twice this far apart so rules can judge rates. Zero means one
	// sample: totals are reported and nothing is judged on them.
	CounterInterval time.Duration
	// Now returns the current time; nil means time.Now. Tests inject a
	// fixed clock so golden output does not depend on when it ran.
	Now func() time.Time
	// Wait sleeps d or until ctx ends; nil means a timer. Tests inject one
	// that changes the counter files between the two samples.
	Wait func(ctx context.Context, d time.Duration) error
	// OracleHomes are Oracle homes to audit for Direct NFS besides those
	// oratab lists (check --oracle-home).
	OracleHomes []string
}

func (o Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

func (o Options) wait(ctx context.Context, d time.Duration) error {
	if o.Wait != nil {
		return o.Wait(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
