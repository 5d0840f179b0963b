package storage

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/fixturetest"
)

// tinyFS is a 1 MiB tmpfs of the test's own: a real filesystem that
// fills up.
func tinyFS(t *testing.T) string { return fixturetest.Tmpfs(t, 0, "size=1m") }

// A filesystem that fills up mid-run ends it with an error, but what was
// measured before stays in the result (the files made, the bytes
// written), the JSON says what stopped it, and the text does not claim
// "no I/O made".
func TestFullFilesystemKeepsFigures(t *testing.T) {
	for _, p := range []Profile{Install, Mkfile} {
		dir := tinyFS(t)
		res, err := Run(context.Background(), Spec{Profile: p, Path: dir, SizeBytes: 4 << 20, Time: 10 * time.Second})
		if !errors.Is(err, syscall.ENOSPC) || res == nil {
			t.Fatalf("%s on a full tmpfs: %v (result %v)", p, err, res != nil)
		}
		if res.Error == "" || len(res.Steps) != 1 {
			t.Fatalf("%s: error %q, steps %+v", p, res.Error, res.Steps)
		}
		var wrote int64
		for _, o := range res.Steps[0].Ops {
			if o.Name == "write" {
				wrote = o.Bytes
			}
		}
		if wrote <= 0 || wrote > 1<<20 {
			t.Errorf("%s: %d bytes written on a 1 MiB filesystem", p, wrote)
		}
		js, _ := json.Marshal(res)
		if !strings.Contains(string(js), `"error":"storage `+string(p)) {
			t.Errorf("%s: JSON without the error: %s", p, js)
		}
		var text bytes.Buffer
		if err := WriteText(&text, res); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(text.String(), "no I/O made") || !strings.Contains(text.String(), "FAILED: storage "+string(p)) {
			t.Errorf("%s: text:\n%s", p, text.String())
		}
	}
}

// An operation that moves no data (fsync) has no bytes per second in the
// JSON, as the text shows "-", rather than 0.
func TestNoRateWithoutBytes(t *testing.T) {
	res, err := Run(context.Background(), Spec{Profile: Mkfile, Path: t.TempDir(), SizeBytes: 1 << 20, Time: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var ops []map[string]any
	js, _ := json.Marshal(res.Steps[0].Ops)
	if err := json.Unmarshal(js, &ops); err != nil {
		t.Fatal(err)
	}
	for _, o := range ops {
		_, has := o["bytes_per_sec"]
		if want := o["name"] == "write"; has != want {
			t.Errorf("op %v: bytes_per_sec present %v, want %v", o["name"], has, want)
		}
	}
}
