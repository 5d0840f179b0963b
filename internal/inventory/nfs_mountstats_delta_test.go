package inventory

import (
	"errors"
	"os"
	"testing"
	"time"
)

func readStats(t *testing.T, path string) map[string]*MountStats {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := ParseMountstats(f, MountstatsFile)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// The fixtures under testdata/mountstats are readings of one mount before
// and after a run; the differences below are the run (see the README there).
func TestMountStatsSub(t *testing.T) {
	for _, tc := range []struct {
		dir, mp, proto                     string
		getattr, write, commit, trans, tmo uint64
		writeBytes, serverWrite, conns     uint64
		errs                               int64 // -1: the kernel does not count errors
		age                                time.Duration
		avgWriteRTT                        time.Duration
		ops                                int
	}{
		// NFSv3, actimeo=0, 2000 files: 4 GETATTRs per file, a COMMIT per file.
		// Kernel 4.18: 8 numbers per operation, no errors column.
		{"el8-nfs3-actimeo0", "/u01/app/oracle", "tcp", 8020, 3177, 2000, 3, 1, 131072000, 131072000, 0, -1, 32 * time.Second, 2 * time.Millisecond, 8},
		// NFSv4.1, noac: 8192 FILE_SYNC WRITEs, no COMMIT, a GETATTR after each.
		{"el9-nfs41-noac", "/u02/oradata", "tcp", 8195, 8192, 0, 12, 2, 67108864, 67108864, 1, 1, 21 * time.Second, 5 * time.Millisecond, 7},
		// UEK5 (4.14), 8 numbers per operation: 8192 direct 8 KiB WRITEs
		// (2 retransmitted, one major timeout), a GETATTR after each.
		{"ol7-uek5-nfs3-oradata", "/u02/oradata", "tcp", 8195, 8192, 0, 2, 1, 0, 67108864, 0, -1, 9 * time.Second, 4 * time.Millisecond, 2},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			before := readStats(t, "../../testdata/mountstats/"+tc.dir+"/before/proc/self/mountstats")[tc.mp]
			after := readStats(t, "../../testdata/mountstats/"+tc.dir+"/after/proc/self/mountstats")[tc.mp]
			if before == nil || after == nil || after.MountPoint() != tc.mp {
				t.Fatalf("no %s in the fixtures", tc.mp)
			}
			d, err := after.Sub(before)
			if err != nil {
				t.Fatal(err)
			}
			if g := d.Op("GETATTR").Requests; g != tc.getattr {
				t.Errorf("GETATTR = %d, want %d", g, tc.getattr)
			}
			w := d.Op("WRITE")
			if w.Requests != tc.write || d.Op("COMMIT").Requests != tc.commit {
				t.Errorf("WRITE %d COMMIT %d, want %d %d", w.Requests, d.Op("COMMIT").Requests, tc.write, tc.commit)
			}
			if d.Retransmissions() != tc.trans || d.MajorTimeouts() != tc.tmo {
				t.Errorf("retransmissions %d timeouts %d, want %d %d", d.Retransmissions(), d.MajorTimeouts(), tc.trans, tc.tmo)
			}
			if d.WriteBytes != tc.writeBytes || d.ServerWriteBytes != tc.serverWrite || d.Age != tc.age {
				t.Errorf("bytes %d/%d age %s", d.WriteBytes, d.ServerWriteBytes, d.Age)
			}
			// LOOKUP's count is exact; every operation, NULL included
			// (no request in the run), has the column or not as the kernel.
			for _, name := range []string{"LOOKUP", "WRITE", "NULL"} {
				errs := int64(-1)
				if e := d.Op(name).Errors; e != nil {
					errs = int64(*e)
				}
				if name == "LOOKUP" && errs != tc.errs || (errs < 0) != (tc.errs < 0) {
					t.Errorf("%s errors = %d, want %d (-1: not counted)", name, errs, tc.errs)
				}
			}
			if d.Transport.Connects != tc.conns || d.Transport.Sends == 0 || d.Transport.MaxSlots == 0 {
				t.Errorf("transport delta %+v", d.Transport)
			}
			if w.AvgRTT() != tc.avgWriteRTT || w.AvgExecute() < w.AvgRTT() {
				t.Errorf("WRITE avg RTT %s execute %s, want RTT %s", w.AvgRTT(), w.AvgExecute(), tc.avgWriteRTT)
			}
			if len(d.Ops) != tc.ops {
				t.Errorf("%d operations with requests, want %d: %+v", len(d.Ops), tc.ops, d.Ops)
			}
			// The reading itself is untouched, and nothing is lost going back.
			if after.Op("WRITE").Requests != before.Op("WRITE").Requests+tc.write {
				t.Errorf("Sub changed its receiver")
			}
			// Reversed readings are a remount, never a huge wrapped number.
			if _, err := before.Sub(after); !errors.Is(err, ErrCountersReset) {
				t.Errorf("before - after: err = %v, want ErrCountersReset", err)
			}
		})
	}
	// Without an earlier reading the delta is everything since the mount.
	st := readStats(t, "../../testdata/mountstats/el9-nfs41-noac/after/proc/self/mountstats")["/u02/oradata"]
	if d, err := st.Sub(nil); err != nil || d.Op("WRITE").Requests != st.Op("WRITE").Requests {
		t.Errorf("Sub(nil) = %v, %v", d, err)
	}
}

func TestNFSMountsFixture(t *testing.T) {
	src, err := OpenDir("../../testdata/mountstats/el8-nfs3-actimeo0/after")
	if err != nil {
		t.Fatal(err)
	}
	ms, sec := NFSMounts(src)
	if len(ms) != 2 || sec.Status != "ok" || ms[1].MountPoint != "/u01/app/oracle" || ms[1].Stats == nil ||
		!ms[1].Runtime.AttrCacheOff() || ms[1].Stats.Op("COMMIT").Requests != 42139 {
		t.Fatalf("mounts %+v, section %+v", ms, sec)
	}
}
