package kernel

import (
	"reflect"
	"testing"
)

func ids(fs []Facility) []string {
	out := []string{}
	for _, f := range fs {
		out = append(out, f.ID)
	}
	return out
}

// TestMissing holds the supported kernels (docs/kernels.md) against the
// table: what each lacks by its version.
func TestMissing(t *testing.T) {
	for _, c := range []struct {
		release string
		want    []string
	}{
		{"3.10.0-1160.el7.x86_64", []string{"thread-self", "tcpinfo-bytes-acked", "tcpinfo-min-rtt", "udp-gso", "pidfd-open", "mountstats-errors", "bpf-port-mtu"}},
		{"4.1.12-124.48.6.el7uek.x86_64", []string{"tcpinfo-min-rtt", "udp-gso", "pidfd-open", "mountstats-errors", "bpf-port-mtu"}},
		{"4.4.180-94.100-default", []string{"tcpinfo-min-rtt", "udp-gso", "pidfd-open", "mountstats-errors", "bpf-port-mtu"}},
		{"4.14.35-2047.518.4.el7uek.x86_64", []string{"udp-gso", "pidfd-open", "mountstats-errors", "bpf-port-mtu"}},
		{"4.18.0-553.el8_10.x86_64", []string{"pidfd-open", "mountstats-errors", "bpf-port-mtu"}},
		{"5.3.18-150300.59.63-default", []string{"bpf-port-mtu"}},
		{"5.4.17-2136.330.7.1.el8uek.x86_64", []string{"bpf-port-mtu"}},
		{"5.7.0", []string{}},
		{"5.14.0-427.13.1.el9_4.x86_64", []string{}},
		{"5.15.0-200.131.27.el9uek.x86_64", []string{}},
		{"6.1.0-27-amd64", []string{}},
	} {
		r, err := ParseRelease(c.release)
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(Missing(r)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s lacks %v, want %v", c.release, got, c.want)
		}
	}
}

// TestFacilityTable keeps the table usable: unique ids, oldest first, and a
// stated fallback for everything newer than the oldest supported kernel.
func TestFacilityTable(t *testing.T) {
	seen := map[string]bool{}
	for i, f := range Facilities {
		if f.ID == "" || f.Name == "" || f.UsedBy == "" || seen[f.ID] {
			t.Errorf("facility %d %+v: empty or repeated id, name or use", i, f)
		}
		seen[f.ID] = true
		if i > 0 && f.Since.Before(Facilities[i-1].Since) {
			t.Errorf("%s (%v) is listed after %s (%v)", f.ID, f.Since, Facilities[i-1].ID, Facilities[i-1].Since)
		}
		newer := Oldest.Before(f.Since)
		if newer != (f.Without != "") {
			t.Errorf("%s (since %v, oldest supported %v): Without %q", f.ID, f.Since, Oldest, f.Without)
		}
		if got, ok := Lookup(f.ID); !ok || got.ID != f.ID {
			t.Errorf("Lookup(%s) = %+v, %v", f.ID, got, ok)
		}
	}
	if _, ok := Lookup("no-such"); ok {
		t.Error("Lookup of an unknown id succeeded")
	}
}
