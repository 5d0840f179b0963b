// Package units parses and formats the sizes and rates operators type and
// read, following iperf3's habits: sizes are binary (8K = 8192 bytes), rates
// are decimal bits per second (1G = 1e9 bit/s), text shows Gbit/s and KiB.
package units

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ErrSyntax is wrapped by every parse error.
var ErrSyntax = errors.New("invalid value")

// ErrBytes marks a rate given in bytes ("1GB"): rates are in bits.
var ErrBytes = errors.New("a capital B means bytes; a rate is in bits per second")

// ParseSize parses a byte count such as "9000", "8K", "8KiB", "1M", "2G".
// Suffixes are binary multiples (K = 1024). The result must fit in an int64.
func ParseSize(s string) (int64, error) {
	num, suffix := splitNumber(s)
	if num == "" {
		return 0, fmt.Errorf("%w: size %q: want a number like 9000, 8K, 1M", ErrSyntax, s)
	}
	var mult float64
	switch strings.ToLower(strings.TrimSpace(suffix)) {
	case "", "b":
		mult = 1
	case "k", "kb", "kib":
		mult = 1 << 10
	case "m", "mb", "mib":
		mult = 1 << 20
	case "g", "gb", "gib":
		mult = 1 << 30
	case "t", "tb", "tib":
		mult = 1 << 40
	default:
		return 0, fmt.Errorf("%w: size %q: unknown unit %q (use K, M, G)", ErrSyntax, s, suffix)
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, fmt.Errorf("%w: size %q", ErrSyntax, s)
	}
	v := f * mult
	if v > math.MaxInt64/2 || v != math.Trunc(v) {
		return 0, fmt.Errorf("%w: size %q is not a whole number of bytes in range", ErrSyntax, s)
	}
	return int64(v), nil
}

// ParseRate parses a rate in bits per second such as "1gbit", "200M",
// "1G", "10Gbit/s", "500kbit", "100mbps". Multiples are decimal (as tc and
// iperf3 use them); a bare number is bits per second.
func ParseRate(s string) (int64, error) {
	num, suffix := splitNumber(s)
	if num == "" {
		return 0, fmt.Errorf("%w: rate %q: want a number like 1gbit, 200M", ErrSyntax, s)
	}
	// A capital B is bytes ("1GB", "100MB/s", "1GBps"), 8 times the
	// bits this takes: refused, not read as 1 Gbit/s.
	if b := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSpace(suffix), "/s"), "ps"); strings.HasSuffix(b, "B") {
		f, _ := strconv.ParseFloat(num, 64)
		return 0, fmt.Errorf("%w: rate %q: %w (%s%sbit)", ErrSyntax, s, ErrBytes,
			strconv.FormatFloat(8*f, 'g', -1, 64), strings.ToLower(strings.TrimSuffix(b, "B")))
	}
	u := strings.ToLower(strings.TrimSpace(suffix))
	u = strings.TrimSuffix(u, "/s")
	u = strings.TrimSuffix(u, "ps")
	u = strings.TrimSuffix(u, "bit")
	u = strings.TrimSuffix(u, "b")
	var mult float64
	switch u {
	case "":
		mult = 1
	case "k":
		mult = 1e3
	case "m":
		mult = 1e6
	case "g":
		mult = 1e9
	case "t":
		mult = 1e12
	default:
		return 0, fmt.Errorf("%w: rate %q: unknown unit %q (use kbit, mbit, gbit)", ErrSyntax, s, suffix)
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) || f*mult > math.MaxInt64/2 {
		return 0, fmt.Errorf("%w: rate %q", ErrSyntax, s)
	}
	return int64(math.Round(f * mult)), nil
}

func splitNumber(s string) (num, suffix string) {
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++
	}
	return s[:i], s[i:]
}

// FormatRate renders bits per second the way iperf3 does: "9.41 Gbit/s".
func FormatRate(bitsPerSec float64) string {
	switch a := math.Abs(bitsPerSec); {
	case a >= 1e9:
		return fmt.Sprintf("%.2f Gbit/s", bitsPerSec/1e9)
	case a >= 1e6:
		return fmt.Sprintf("%.1f Mbit/s", bitsPerSec/1e6)
	case a >= 1e3:
		return fmt.Sprintf("%.1f Kbit/s", bitsPerSec/1e3)
	default:
		return fmt.Sprintf("%.0f bit/s", bitsPerSec)
	}
}

// FormatBytes renders a byte count with binary units: "8.00 KiB", "1.25 GiB".
func FormatBytes(n float64) string {
	switch a := math.Abs(n); {
	case a >= 1<<30:
		return fmt.Sprintf("%.2f GiB", n/(1<<30))
	case a >= 1<<20:
		return fmt.Sprintf("%.2f MiB", n/(1<<20))
	case a >= 1<<10:
		return fmt.Sprintf("%.2f KiB", n/(1<<10))
	default:
		return fmt.Sprintf("%.0f B", n)
	}
}

// NotAvailable is the text of a figure the kernel does not give (an
// older kernel's shorter structure, a counter it does not keep): never 0.
const NotAvailable = "n/a"

// FormatCount is a count, or NotAvailable when it is nil.
func FormatCount[T int64 | uint64](v *T) string {
	if v == nil {
		return NotAvailable
	}
	return fmt.Sprint(*v)
}

// FormatPercent prints p, a percentage, with the given decimals as %.*f
// does, except that a share under 100 never reads 100: where rounding
// would reach it, the figure is cut at that precision instead (99.6 with
// no decimals is "99", not "100", which would say all of it).
func FormatPercent(p float64, decimals int) string {
	s := strconv.FormatFloat(p, 'f', decimals, 64)
	if v, err := strconv.ParseFloat(s, 64); err == nil && p < 100 && v >= 100 {
		scale := math.Pow(10, float64(decimals))
		s = strconv.FormatFloat(math.Floor(p*scale)/scale, 'f', decimals, 64)
	}
	return s
}
