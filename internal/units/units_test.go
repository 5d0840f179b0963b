package units

import (
	"errors"
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	good := map[string]int64{"9000": 9000, "8K": 8192, "8k": 8192, "8KiB": 8192, "1M": 1 << 20,
		"2G": 2 << 30, "1.5K": 1536, "0": 0, " 64 ": 64, "256B": 256}
	for in, want := range good {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "K", "8X", "-1", "1.3", "abc", "99999999999T", "1e3"} {
		if _, err := ParseSize(in); !errors.Is(err, ErrSyntax) {
			t.Errorf("ParseSize(%q) err = %v; want ErrSyntax", in, err)
		}
	}
}

func TestParseRate(t *testing.T) {
	good := map[string]int64{"1gbit": 1e9, "200M": 200e6, "1G": 1e9, "10Gbit/s": 10e9,
		"500kbit": 500e3, "100mbps": 100e6, "1Gb": 1e9, "10GBit/s": 10e9, "1Gbps": 1e9, "0": 0, "1.5gbit": 1.5e9, "64000": 64000}
	for in, want := range good {
		got, err := ParseRate(in)
		if err != nil || got != want {
			t.Errorf("ParseRate(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	// Bytes are refused, not taken for bits (1GB was 1 Gbit/s).
	for _, in := range []string{"1GB", "100MB/s", "1GBps", "5KB", "64B"} {
		if _, err := ParseRate(in); !errors.Is(err, ErrSyntax) || !errors.Is(err, ErrBytes) || !strings.Contains(err.Error(), "a capital B means bytes") {
			t.Errorf("ParseRate(%q) err = %v; want a capital B means bytes", in, err)
		}
	}
	for _, in := range []string{"", "fast", "1qbit", "-5M"} {
		if _, err := ParseRate(in); !errors.Is(err, ErrSyntax) {
			t.Errorf("ParseRate(%q) err = %v; want ErrSyntax", in, err)
		}
	}
}

func TestFormat(t *testing.T) {
	cases := []struct{ got, want string }{
		{FormatRate(9.41e9), "9.41 Gbit/s"},
		{FormatRate(774e6), "774.0 Mbit/s"},
		{FormatRate(12), "12 bit/s"},
		{FormatBytes(8192), "8.00 KiB"},
		{FormatBytes(1.25 * (1 << 30)), "1.25 GiB"},
		{FormatBytes(100), "100 B"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestFormatCount(t *testing.T) {
	var none *int64
	zero, big := int64(0), uint64(1<<63+5)
	for _, c := range []struct{ got, want string }{
		{FormatCount(none), "n/a"}, {FormatCount(&zero), "0"}, {FormatCount(&big), "9223372036854775813"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestFormatPercent(t *testing.T) {
	for _, c := range []struct {
		p    float64
		dec  int
		want string
	}{
		{99.64, 0, "99"}, {99.96, 1, "99.9"}, {99.9996, 3, "99.999"}, {100, 0, "100"}, {100.4, 0, "100"},
		{250, 0, "250"}, {33.35, 1, "33.4"}, {0.36, 0, "0"}, {99.4, 0, "99"},
	} {
		if got := FormatPercent(c.p, c.dec); got != c.want {
			t.Errorf("FormatPercent(%v, %d) = %q, want %q", c.p, c.dec, got, c.want)
		}
	}
}
