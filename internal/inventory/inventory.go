package inventory

import "time"

// Inventory is everything check knows about one node. Sections that could
// not be read are listed in Sections with their reason; the rest is still
// filled in (partial results survive a failing section).
type Inventory struct {
	Node       Node              `json:"node"`
	Interfaces []Interface       `json:"interfaces"`
	Persisted  []PersistedConfig `json:"persisted"`
	Sysctls    map[string]string `json:"sysctls"`
	Counters   *Counters         `json:"counters,omitempty"`
	Mounts     []Mount           `json:"mounts"`
	Sections   []Section         `json:"sections"`
}

// Node identifies the audited system.
type Node struct {
	Hostname string    `json:"hostname"`
	Kernel   string    `json:"kernel,omitempty"`
	OS       string    `json:"os,omitempty"`
	Root     string    `json:"root"`
	Time     time.Time `json:"time"`
}

// Section reports whether one part of the inventory could be gathered.
type Section struct {
	Name   string `json:"name"`   // "interfaces", "persisted", "sysctls", "counters", "mounts", ...
	Status string `json:"status"` // "ok", "partial", "unreadable", "absent"
	Detail string `json:"detail,omitempty"`
}

// Options steer gathering.
type Options struct {
	// CounterInterval, when positive, makes Gather sample the kernel
	// counters twice this far apart so rules can judge rates. Zero means one
	// sample: totals are reported and nothing is judged on them.
	CounterInterval time.Duration
}
