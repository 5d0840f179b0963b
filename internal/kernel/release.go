// Package kernel knows which Linux facilities interlink depends on and the
// kernel release that added each: it parses a release string
// (/proc/sys/kernel/osrelease, uname -r) and lists what a kernel of that
// release lacks and what interlink does instead.
//
// A release gives a lower bound only: enterprise kernels (RHEL and Oracle
// Linux RHCK 3.10 and 4.18, SUSE) backport facilities from newer releases,
// so the code that uses a facility probes it at run time and the probe
// decides; the release only says what to expect of a node not at hand (a
// captured bundle, a node in a cluster report).
package kernel

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is a kernel version: major.minor (3.17, 5.7), the granularity at
// which mainline adds facilities since 3.0, with the third number that
// mattered before (2.6.22).
type Version struct {
	Major, Minor, Patch int
}

// V is shorthand for Version{major, minor, patch...}.
func V(major, minor int, patch ...int) Version {
	v := Version{Major: major, Minor: minor}
	if len(patch) > 0 {
		v.Patch = patch[0]
	}
	return v
}

// String gives "3.17", or "2.6.22" when the third number is set.
func (v Version) String() string {
	if v.Patch > 0 {
		return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch)
	}
	return fmt.Sprintf("%d.%d", v.Major, v.Minor)
}

// Before reports whether v is older than w.
func (v Version) Before(w Version) bool {
	if v.Major != w.Major {
		return v.Major < w.Major
	}
	if v.Minor != w.Minor {
		return v.Minor < w.Minor
	}
	return v.Patch < w.Patch
}

// Release is a parsed kernel release string.
type Release struct {
	Raw     string // as read, trimmed: "3.10.0-1160.el7.x86_64"
	Version        // 3.10.0; Patch 0 when the release has none ("6.8-rc1")
	// Local is what follows the numbers, without its separator:
	// "1160.el7.x86_64", "27-amd64", "122.37-default"; "" for none.
	Local string
}

// ParseRelease parses a kernel release such as "3.10.0-1160.el7.x86_64",
// "4.14.35-2047.518.4.el7uek.x86_64", "6.1.0-27-amd64" or SUSE's
// "4.12.14-122.37-default". It wants at least major.minor, both numbers,
// and refuses anything else (an empty file, a Solaris "5.11" is accepted as
// a version but means nothing here: callers ask only of Linux nodes).
func ParseRelease(s string) (Release, error) {
	raw := strings.TrimSpace(s)
	if raw == "" {
		return Release{}, fmt.Errorf("kernel release is empty")
	}
	// The numbers end at the first character that is neither digit nor dot.
	end := strings.IndexFunc(raw, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	nums, local := raw, ""
	if end == 0 {
		return Release{}, fmt.Errorf("kernel release %q does not start with a version number", raw)
	}
	if end > 0 {
		nums, local = raw[:end], raw[end:]
		if !strings.ContainsRune("-+_~", rune(local[0])) {
			return Release{}, fmt.Errorf("kernel release %q: unexpected %q after the version", raw, local[:1])
		}
		local = local[1:]
	}
	f := strings.Split(nums, ".")
	if len(f) < 2 || len(f) > 3 {
		return Release{}, fmt.Errorf("kernel release %q: want major.minor[.patch] at its start", raw)
	}
	n := make([]int, len(f))
	for i, x := range f {
		v, err := strconv.Atoi(x)
		if err != nil || v < 0 || v > 1000 {
			return Release{}, fmt.Errorf("kernel release %q: %q is not a version number", raw, x)
		}
		n[i] = v
	}
	if n[0] < 2 {
		return Release{}, fmt.Errorf("kernel release %q: major version %d is not a Linux release", raw, n[0])
	}
	r := Release{Raw: raw, Version: Version{Major: n[0], Minor: n[1]}, Local: local}
	if len(n) == 3 {
		r.Patch = n[2]
	}
	return r, nil
}

// Backports reports whether the release is of a distribution kernel known
// to carry facilities from newer mainline releases: Red Hat's and Oracle's
// (".el7", ".el8", ".el9", with or without "uek") and SUSE's ("-default").
// For those, what the version says is missing may well be present.
func (r Release) Backports() bool {
	l := r.Local
	return strings.Contains(l, ".el") || strings.HasSuffix(l, "-default") || strings.Contains(l, "-default.")
}
