package storage

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

// TestProfiles runs every profile small and short on the local filesystem
// and holds each to measured, non-zero figures and to leaving nothing
// behind; redo's steps each write blocks of their size. One after the
// other, as the package's other tests: run at once, they shared the disk
// so that datafile's 1-outstanding step made no write in its share.
func TestProfiles(t *testing.T) {
	for _, p := range Profiles {
		t.Run(string(p.Name), func(t *testing.T) {
			dir := t.TempDir()
			res, err := Run(context.Background(), Spec{Profile: p.Name, Path: dir, SizeBytes: 4 << 20, Time: 600 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Steps) == 0 || res.IOs() == 0 || res.Duration <= 0 {
				t.Fatalf("no figures: %+v", res)
			}
			if res.CPUUserNs+res.CPUSysNs <= 0 || res.CPUNsPerIO != float64(res.CPUUserNs+res.CPUSysNs)/float64(res.IOs()) {
				t.Errorf("cpu %d+%d ns, %g ns per I/O of %d", res.CPUUserNs, res.CPUSysNs, res.CPUNsPerIO, res.IOs())
			}
			for _, s := range res.Steps {
				for _, o := range s.Ops {
					if o.Count == 0 && o.Name != "mkdir" && o.Name != "fsync" {
						t.Errorf("step %q op %s: no operations", s.Name, o.Name)
					}
					if o.Count > 0 && (o.Latency == nil || o.Latency.P50 <= 0 || o.Latency.P50 > o.Latency.P99 || o.Latency.P99 > o.Latency.Max) {
						t.Errorf("step %q op %s: latency %+v", s.Name, o.Name, o.Latency)
					}
					if (o.Name == "write" || o.Name == "read") && o.Count > 0 && o.Bytes <= 0 {
						t.Errorf("step %q op %s: %d ops, %d bytes", s.Name, o.Name, o.Count, o.Bytes)
					}
				}
			}
			if res.Filesystem.MountPoint == "" || res.Filesystem.Type == "" {
				t.Errorf("filesystem %+v", res.Filesystem)
			}
			left, _ := os.ReadDir(dir)
			if len(left) != 0 {
				t.Errorf("left behind: %v", left)
			}
			if _, err := json.Marshal(res); err != nil {
				t.Error(err)
			}
			if p.Name == Redo {
				redoStepsBySize(t, res)
			}
		})
	}
}

// redoStepsBySize checks that each step of a redo run wrote blocks of its
// size, and only those.
func redoStepsBySize(t *testing.T, res *Result) {
	t.Helper()
	if len(res.Steps) != len(redoSizes) {
		t.Fatalf("%d steps", len(res.Steps))
	}
	for i, s := range res.Steps {
		o := s.Ops[0]
		if o.Bytes != o.Count*int64(redoSizes[i]) {
			t.Errorf("step %s: %d writes of %d bytes moved %d bytes", s.Name, o.Count, redoSizes[i], o.Bytes)
		}
	}
}

func TestInstallLimitedByTime(t *testing.T) {
	res, err := Run(context.Background(), Spec{Profile: Install, Path: t.TempDir(), SizeBytes: 8 << 30, Time: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.LimitedBy) != 1 || !strings.HasPrefix(res.LimitedBy[0], "time: wrote") {
		t.Errorf("8 GiB in 200ms: limited by %v", res.LimitedBy)
	}
	// The first line does not say "8.00 GiB in 0.2 s" of a run cut short.
	var b strings.Builder
	if err := WriteText(&b, res); err != nil {
		t.Fatal(err)
	}
	if head, _, _ := strings.Cut(b.String(), "\n"); !strings.HasSuffix(head, "stopped before the 8.00 GiB asked (see below)") {
		t.Errorf("first line %q", head)
	}
}

func TestRefusals(t *testing.T) {
	f := t.TempDir() + "/file"
	os.WriteFile(f, nil, 0o600)
	for _, tc := range []struct {
		spec Spec
		want string
	}{
		{Spec{Profile: "oltp", Path: t.TempDir()}, `unknown profile "oltp"`},
		{Spec{Profile: Redo, Path: t.TempDir(), SizeBytes: 10}, "--size 10"},
		{Spec{Profile: Redo, Path: t.TempDir(), Time: time.Millisecond}, "--time 1ms"},
		{Spec{Profile: Redo, Path: f}, "is not a directory"},
		{Spec{Profile: Redo, Path: t.TempDir() + "/missing"}, "no such file"},
		{Spec{Profile: Redo, Path: "/proc/self"}, "cannot create a working directory in /proc/self"},
	} {
		_, err := Run(context.Background(), tc.spec)
		if !errors.Is(err, ErrSpec) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.spec, err, tc.want)
		}
	}
}

func TestCancelKeepsFigures(t *testing.T) {
	// A second: datafile first writes its working file, which on a busy
	// disk took more than the 300 ms this test once gave it (no I/O
	// measured yet at the cancel).
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	res, err := Run(ctx, Spec{Profile: Datafile, Path: t.TempDir(), SizeBytes: 4 << 20, Time: time.Hour})
	if err != nil || !res.Interrupted || res.IOs() == 0 {
		t.Errorf("err %v, interrupted %v, %d I/Os", err, res != nil && res.Interrupted, res.IOs())
	}
}
