package kernel

import (
	"strings"
	"testing"
)

func TestParseRelease(t *testing.T) {
	for _, c := range []struct {
		in        string
		v         Version
		local     string
		backports bool
	}{
		{"3.10.0-1160.el7.x86_64\n", V(3, 10, 0), "1160.el7.x86_64", true},             // OL7 / RHEL 7 RHCK
		{"4.1.12-124.48.6.el7uek.x86_64", V(4, 1, 12), "124.48.6.el7uek.x86_64", true}, // UEK4
		{"4.14.35-2047.518.4.el7uek.x86_64", V(4, 14, 35), "2047.518.4.el7uek.x86_64", true},
		{"4.18.0-553.el8_10.x86_64", V(4, 18, 0), "553.el8_10.x86_64", true},
		{"5.4.17-2136.330.7.1.el8uek.x86_64", V(5, 4, 17), "2136.330.7.1.el8uek.x86_64", true}, // UEK6
		{"5.14.0-427.13.1.el9_4.x86_64", V(5, 14, 0), "427.13.1.el9_4.x86_64", true},
		{"5.15.0-200.131.27.el9uek.x86_64", V(5, 15, 0), "200.131.27.el9uek.x86_64", true},
		{"4.12.14-122.37-default", V(4, 12, 14), "122.37-default", true}, // SLES 12 SP5
		{"5.14.21-150500.55.39-default", V(5, 14, 21), "150500.55.39-default", true},
		{"6.1.0-27-amd64", V(6, 1, 0), "27-amd64", false},
		{"6.8-rc1", V(6, 8), "rc1", false},
		{"6.12.1+", V(6, 12, 1), "", false},
		{"5.10.0", V(5, 10, 0), "", false},
	} {
		r, err := ParseRelease(c.in)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if r.Version != c.v || r.Local != c.local || r.Raw != strings.TrimSpace(c.in) || r.Backports() != c.backports {
			t.Errorf("%q: got %+v backports %v, want %v local %q backports %v", c.in, r, r.Backports(), c.v, c.local, c.backports)
		}
	}
}

func TestParseReleaseRefusesGarbage(t *testing.T) {
	for _, in := range []string{"", "  \n", "linux", "3", "3.", ".10", "3.x.0", "3.10.0.1", "3.10 el7",
		"1.2.3", "99999999999999999999.1", "4.14abc", "-1.2", "SunOS 5.11"} {
		if r, err := ParseRelease(in); err == nil {
			t.Errorf("%q: parsed as %+v, want an error", in, r)
		} else if strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error has more than one line: %q", in, err)
		}
	}
}

func TestVersionOrder(t *testing.T) {
	order := []Version{V(2, 6, 22), V(2, 6, 33), V(3, 0), V(3, 10), V(3, 17), V(4, 1), V(4, 14, 35), V(4, 18), V(5, 3), V(5, 15)}
	for i := range order {
		for j := range order {
			if got, want := order[i].Before(order[j]), i < j; got != want {
				t.Errorf("%v.Before(%v) = %v, want %v", order[i], order[j], got, want)
			}
		}
	}
	if s := V(2, 6, 22).String(); s != "2.6.22" {
		t.Errorf("String %q", s)
	}
	if s := V(5, 7).String(); s != "5.7" {
		t.Errorf("String %q", s)
	}
}
