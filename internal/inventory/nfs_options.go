package inventory

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Linux attribute-cache defaults (nfs(5)): what applies when neither the
// option nor actimeo nor noac is given.
const (
	defaultACRegMin = 3 * time.Second
	defaultACRegMax = 60 * time.Second
	defaultACDirMin = 30 * time.Second
	defaultACDirMax = 60 * time.Second
)

// MountOptions is one NFS option string as one file showed it, with the
// options that matter for databases normalised. The same struct holds a
// running mount's options (mountinfo, mnttab) and a static table's (fstab,
// vfstab, AIX filesystems); File says which. Spelling variants are folded:
// nfsvers= is vers=, vers=4,minorversion=1 is vers 4.1, bare tcp/udp is
// proto=, softerr counts as soft. When an option appears twice the last one
// wins, as with mount(8).
type MountOptions struct {
	Raw string `json:"raw"` // the option string exactly as read
	// MountFlags are mountinfo's per-mount flags (field 6, "rw,nosuid,
	// relatime"); empty for other tables, whose Raw holds everything.
	MountFlags string `json:"mount_flags,omitempty"`
	File       string `json:"file"` // node path it was read from
	Line       int    `json:"line"` // 1-based line (AIX: the options line of the stanza)
	Device     string `json:"device"`
	FSType     string `json:"fstype"`

	Vers         string         `json:"vers,omitempty"`  // "3", "4", "4.1", "4.2"; empty: negotiated
	Proto        string         `json:"proto,omitempty"` // tcp, udp, rdma, tcp6, udp6; empty: default (tcp)
	Soft         bool           `json:"soft"`            // soft or softerr; false means hard (the default)
	RsizeBytes   int            `json:"rsize_bytes,omitempty"`
	WsizeBytes   int            `json:"wsize_bytes,omitempty"`
	Timeo        time.Duration  `json:"timeo_ns,omitempty"` // timeo= is in tenths of a second
	Retrans      int            `json:"retrans,omitempty"`
	NoAC         bool           `json:"noac"`
	Actimeo      *time.Duration `json:"actimeo_ns,omitempty"` // as written; mountinfo never shows it
	ACRegMin     *time.Duration `json:"acregmin_ns,omitempty"`
	ACRegMax     *time.Duration `json:"acregmax_ns,omitempty"`
	ACDirMin     *time.Duration `json:"acdirmin_ns,omitempty"`
	ACDirMax     *time.Duration `json:"acdirmax_ns,omitempty"`
	NoShareCache bool           `json:"nosharecache"`
	Intr         string         `json:"intr,omitempty"` // "intr", "nointr" or empty (not written)
	Bg           bool           `json:"bg"`
	Sync         bool           `json:"sync"`
	NoSuid       bool           `json:"nosuid"`
	// ForceDirectIO is the Solaris/HP-UX option; Linux mount.nfs rejects it.
	ForceDirectIO bool `json:"forcedirectio"`
	// NoAuto: the static entry is not mounted at boot (noauto in fstab,
	// mount-at-boot "no" in vfstab, mount = false in AIX filesystems).
	NoAuto bool `json:"noauto,omitempty"`

	opts []option
}

type option struct{ name, value string }

// ParseMountOptions parses a comma-separated option string. It fails only
// when a numeric option has a value that is not a number, which mount
// itself would refuse.
func ParseMountOptions(raw string) (*MountOptions, error) {
	o := &MountOptions{Raw: raw}
	minor := ""
	for _, f := range strings.Split(raw, ",") {
		f = strings.TrimSpace(f)
		if f == "" || f == "-" || f == "defaults" {
			continue
		}
		name, value, _ := strings.Cut(f, "=")
		name = strings.ToLower(name)
		o.opts = append(o.opts, option{name, value})
		if name == "minorversion" {
			minor = value
			continue
		}
		if o.setFlag(name) {
			continue
		}
		if err := o.setValue(name, value); err != nil {
			return nil, err
		}
	}
	if o.Vers == "4" && minor != "" {
		o.Vers = "4." + minor
	}
	return o, nil
}

// setFlag sets what an option without a value says (hard, noac, bg...);
// false when name is not one of them.
func (o *MountOptions) setFlag(name string) bool {
	switch name {
	case "tcp", "udp", "rdma":
		o.Proto = name
	case "hard":
		o.Soft = false
	case "soft", "softerr":
		o.Soft = true
	case "noac":
		o.NoAC = true
	case "ac":
		o.NoAC = false
	case "nosharecache":
		o.NoShareCache = true
	case "sharecache":
		o.NoShareCache = false
	case "intr", "nointr":
		o.Intr = name
	case "bg":
		o.Bg = true
	case "fg":
		o.Bg = false
	case "sync":
		o.Sync = true
	case "async":
		o.Sync = false
	case "nosuid":
		o.NoSuid = true
	case "suid":
		o.NoSuid = false
	case "noauto":
		o.NoAuto = true
	case "auto":
		o.NoAuto = false
	case "forcedirectio":
		o.ForceDirectIO = true
	case "noforcedirectio":
		o.ForceDirectIO = false
	default:
		return false
	}
	return true
}

// setValue sets what an option with a value says (vers, rsize, timeo,
// actimeo...); an option it does not know is kept only in the list.
func (o *MountOptions) setValue(name, value string) error {
	var err error
	switch name {
	case "vers", "nfsvers":
		o.Vers = value
	case "proto":
		o.Proto = strings.ToLower(value)
	case "rsize":
		o.RsizeBytes, err = optInt(name, value)
	case "wsize":
		o.WsizeBytes, err = optInt(name, value)
	case "timeo":
		var n int
		n, err = optInt(name, value)
		o.Timeo = time.Duration(n) * 100 * time.Millisecond
	case "retrans":
		o.Retrans, err = optInt(name, value)
	case "actimeo":
		var d time.Duration
		d, err = optSeconds(name, value)
		o.Actimeo = &d
		o.ACRegMin, o.ACRegMax, o.ACDirMin, o.ACDirMax = dup(d), dup(d), dup(d), dup(d)
	case "acregmin":
		o.ACRegMin, err = optSecondsPtr(name, value)
	case "acregmax":
		o.ACRegMax, err = optSecondsPtr(name, value)
	case "acdirmin":
		o.ACDirMin, err = optSecondsPtr(name, value)
	case "acdirmax":
		o.ACDirMax, err = optSecondsPtr(name, value)
	}
	return err
}

func dup(d time.Duration) *time.Duration { return &d }

func optInt(name, value string) (int, error) {
	n, err := strconv.Atoi(value)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("option %s=%q: not a non-negative number", name, value)
	}
	return n, nil
}

func optSeconds(name, value string) (time.Duration, error) {
	n, err := optInt(name, value)
	if int64(n) > 1<<31 {
		return 0, fmt.Errorf("option %s=%q: out of range", name, value)
	}
	return time.Duration(n) * time.Second, err
}

func optSecondsPtr(name, value string) (*time.Duration, error) {
	d, err := optSeconds(name, value)
	return &d, err
}

// Has reports whether the option name (with or without a value) was
// written. Later spellings do not cancel earlier ones here: Has("intr")
// is true for "intr,nointr"; use the normalised fields for the outcome.
func (o *MountOptions) Has(name string) bool {
	_, ok := o.Get(name)
	return ok
}

// Get returns the value of the last occurrence of option name ("" for a
// flag) and whether it was written at all.
func (o *MountOptions) Get(name string) (string, bool) {
	for i := len(o.opts) - 1; i >= 0; i-- {
		if o.opts[i].name == name {
			return o.opts[i].value, true
		}
	}
	return "", false
}

// Names returns the option names in the order written.
func (o *MountOptions) Names() []string {
	out := make([]string, len(o.opts))
	for i, op := range o.opts {
		out[i] = op.name
	}
	return out
}

// AttrCache returns the effective attribute-cache timeouts: noac zeroes
// them all, otherwise each is the value written (directly or through
// actimeo) or the Linux default.
func (o *MountOptions) AttrCache() (regMin, regMax, dirMin, dirMax time.Duration) {
	if o.NoAC {
		return 0, 0, 0, 0
	}
	pick := func(p *time.Duration, def time.Duration) time.Duration {
		if p != nil {
			return *p
		}
		return def
	}
	return pick(o.ACRegMin, defaultACRegMin), pick(o.ACRegMax, defaultACRegMax),
		pick(o.ACDirMin, defaultACDirMin), pick(o.ACDirMax, defaultACDirMax)
}

// AttrCacheOff reports whether attribute caching is disabled, by noac,
// actimeo=0 or all four ac* timeouts at 0 (how mountinfo shows actimeo=0).
func (o *MountOptions) AttrCacheOff() bool {
	a, b, c, d := o.AttrCache()
	return a == 0 && b == 0 && c == 0 && d == 0
}

// AttrCacheText describes the attribute-cache setting the way an admin
// reads it: "noac", "actimeo=0", or the ac* options as written.
func (o *MountOptions) AttrCacheText() string {
	if o.NoAC {
		return "noac"
	}
	var parts []string
	for _, n := range []string{"actimeo", "acregmin", "acregmax", "acdirmin", "acdirmax"} {
		if v, ok := o.Get(n); ok {
			parts = append(parts, n+"="+v)
		}
	}
	if len(parts) == 0 {
		return "attribute caching at defaults (acregmin=3,acregmax=60,acdirmin=30,acdirmax=60)"
	}
	return strings.Join(parts, ",")
}
