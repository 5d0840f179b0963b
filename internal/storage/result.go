package storage

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/interlink/interlink/internal/latency"
)

// Schema is the JSON schema name of a Result.
const Schema = "interlink.storage/v1"

// Result is a storage benchmark: what ran, where, and each step's figures.
type Result struct {
	Schema     string     `json:"schema"`
	Spec       Spec       `json:"spec"`
	Filesystem Filesystem `json:"filesystem"`
	Start      time.Time  `json:"start"`
	Duration   int64      `json:"duration_ns"`
	Steps      []Step     `json:"steps"`
	// NFS is set when the path is on an NFS mount.
	NFS *NFS `json:"nfs,omitempty"`
	// Emulation is set for an nfs:// target (userspace client).
	Emulation *Emulation `json:"emulation,omitempty"`
	// CPU is this process's user and system time over the run.
	CPUUserNs int64 `json:"cpu_user_ns"`
	CPUSysNs  int64 `json:"cpu_system_ns"`
	// CPUNsPerIO is CPU time over every I/O of every step; absent (0) in
	// a run that made none, such as one Ctrl-C ended before its first.
	CPUNsPerIO float64 `json:"cpu_ns_per_io,omitempty"`
	// LimitedBy names limits that cut the run: "time" when the time ran
	// out before the profile's size was written, "size".
	LimitedBy   []string `json:"limited_by,omitempty"`
	Interrupted bool     `json:"interrupted,omitempty"`
	// Error is what stopped the run early (a full filesystem, a failed
	// write); the steps keep what was measured before it.
	Error string `json:"error,omitempty"`
}

// Filesystem is what the path lives on, from the mount table.
type Filesystem struct {
	MountPoint string `json:"mount_point,omitempty"`
	Type       string `json:"type,omitempty"`
	Source     string `json:"source,omitempty"`
	Options    string `json:"options,omitempty"`
}

// Step is one part of a profile (a write size, an I/O depth, a phase).
type Step struct {
	Name     string `json:"name"`
	Depth    int    `json:"depth"` // outstanding I/Os
	Duration int64  `json:"duration_ns"`
	Ops      []Op   `json:"ops"`
}

// Op is one kind of operation in a step.
type Op struct {
	Name        string   `json:"name"` // write, read, create, close, stat, fsync
	Count       int64    `json:"count"`
	Bytes       int64    `json:"bytes"`
	PerSec      float64  `json:"per_sec"`
	BytesPerSec float64  `json:"bytes_per_sec,omitempty"` // absent for operations that move no data (fsync, stat)
	Latency     *Latency `json:"latency,omitempty"`
	Errors      int64    `json:"errors,omitempty"`
}

// Latency is a distribution of operation times in ns.
type Latency = latency.Summary

// rec records operations of one kind; one per worker, merged after.
type rec struct {
	name  string
	count int64
	bytes int64
	errs  int64
	h     *hdrhistogram.Histogram
}

func newRec(name string) *rec {
	return &rec{name: name, h: hdrhistogram.New(1, int64(10*time.Minute), 3)}
}

func (r *rec) add(d time.Duration, n int) {
	r.count++
	r.bytes += int64(n)
	r.h.RecordValue(max(d.Nanoseconds(), 1))
}

func (r *rec) merge(o *rec) {
	r.count += o.count
	r.bytes += o.bytes
	r.errs += o.errs
	r.h.Merge(o.h)
}

func (r *rec) op(d time.Duration) Op {
	o := Op{Name: r.name, Count: r.count, Bytes: r.bytes, Errors: r.errs}
	if s := d.Seconds(); s > 0 {
		o.PerSec, o.BytesPerSec = float64(r.count)/s, float64(r.bytes)/s
	}
	if r.count > 0 {
		l := latency.FromHistogram(r.h, 1)
		o.Latency = &l
	}
	return o
}

// addStep adds a step that made at least one operation: one a failure
// ended before its first holds no figure.
func (r *Result) addStep(s Step) {
	for _, o := range s.Ops {
		if o.Count > 0 {
			r.Steps = append(r.Steps, s)
			return
		}
	}
}

// IOs is the number of operations over every step.
func (r *Result) IOs() int64 {
	var n int64
	for _, s := range r.Steps {
		for _, o := range s.Ops {
			n += o.Count
		}
	}
	return n
}
