package kernel

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestTCPInfoLengths holds tcpInfoHas against the sizes of struct tcp_info
// the supported kernels return: 104 bytes up to tcpi_total_retrans (3.10),
// 120 with the pacing rates (3.15), 136 with bytes_acked and
// bytes_received (4.1), 144 with segs_out and segs_in (4.2), 152 with
// notsent_bytes and min_rtt (4.6), and larger since.
func TestTCPInfoLengths(t *testing.T) {
	for _, c := range []struct {
		length               int
		acked, minRTT, known bool
	}{
		{0, false, false, false}, {56, false, false, false},
		{104, false, false, true}, {120, false, false, true}, {136, true, false, true},
		{144, true, false, true}, {152, true, true, true}, {232, true, true, true},
	} {
		acked, minRTT, known := tcpInfoHas(c.length)
		if acked != c.acked || minRTT != c.minRTT || known != c.known {
			t.Errorf("length %d: acked %v min_rtt %v known %v, want %v %v %v", c.length, acked, minRTT, known, c.acked, c.minRTT, c.known)
		}
	}
}

// TestProbeHere: Probe tells each facility it tests, and finds every one
// that the running kernel's release has by the mainline table (an older
// release may have one backported, so there either answer holds).
func TestProbeHere(t *testing.T) {
	var uts unix.Utsname
	if err := unix.Uname(&uts); err != nil {
		t.Fatal(err)
	}
	rel, err := ParseRelease(unix.ByteSliceToString(uts.Release[:]))
	if err != nil {
		t.Fatal(err)
	}
	got := Probe()
	for _, id := range []string{"thread-self", "tcpinfo-bytes-acked", "tcpinfo-min-rtt", "udp-gso", "pidfd-open"} {
		f, ok := Lookup(id)
		if !ok {
			t.Errorf("Probe returns %s, which the table does not list", id)
			continue
		}
		present, known := got[id]
		if !known {
			t.Errorf("%s: not probed", id)
		}
		if !present && !rel.Version.Before(f.Since) {
			t.Errorf("%s: probed absent, but this kernel (%s) is at or after %s, which added it", id, rel.Raw, f.Since)
		}
	}
	if len(got) != 5 {
		t.Errorf("Probe returned %v", got)
	}
}

// BenchmarkProbe compares the probes with Probe's cached answer.
func BenchmarkProbe(b *testing.B) {
	b.Run("kernel", func(b *testing.B) {
		for b.Loop() {
			probeKernel()
		}
	})
	b.Run("cached", func(b *testing.B) {
		Probe()
		for b.Loop() {
			Probe()
		}
	})
}
