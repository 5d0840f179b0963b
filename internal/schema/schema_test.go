package schema

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSniff: a document's schema, and one clear error for each kind of
// file that has none: truncated, foreign JSON, not JSON at all.
func TestSniff(t *testing.T) {
	full := `{"schema": "interlink.cluster/v1", "nodes": [{"name": "rac1"}]}`
	for _, c := range []struct {
		in, want string
		err      error
		msg      string
	}{
		{full, "interlink.cluster/v1", nil, ""},
		{`{"nodes": [], "schema": "interlink.mesh/v1"}`, "interlink.mesh/v1", nil, ""},
		{full[:40], "", ErrNotJSON, "truncated after 40 bytes"},
		{`{"schema":`, "", ErrNotJSON, "truncated after 10 bytes"},
		{"", "", ErrNotJSON, "truncated after 0 bytes"},
		{`{"nodes": []}`, "", ErrNone, `no "schema" field`},
		{`{"schema": null}`, "", ErrNone, `no "schema" field`},
		{`{"schema": 5}`, "", ErrNone, `"schema" is 5, not a string`},
		{`[1,2]`, "", ErrNotJSON, "the top level is an array, not an object"},
		{`"interlink.cluster/v1"`, "", ErrNotJSON, "the top level is a string, not an object"},
		{"nodes: []\n", "", ErrNotJSON, "invalid character"},
		{"\x1f\x8b\x08\x00", "", ErrNotJSON, "invalid character"}, // a gzip bundle
		{full + "x", "", ErrNotJSON, "after top-level value"},
	} {
		got, err := Sniff([]byte(c.in))
		if got != c.want || !errors.Is(err, c.err) || (err != nil && (!strings.Contains(err.Error(), c.msg) || strings.Contains(err.Error(), "\n"))) {
			t.Errorf("%q: %q, %v; want %q, %v with %q", c.in, got, err, c.want, c.err, c.msg)
		}
	}
}

// TestRead: the file is read once, its content returned with its
// schema; an unreadable file gives the read's own error.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cluster.json")
	doc := `{"schema": "interlink.cluster/v1"}`
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	data, s, err := Read(path)
	if string(data) != doc || s != "interlink.cluster/v1" || err != nil {
		t.Errorf("%q %q %v", data, s, err)
	}
	if err := os.WriteFile(path, []byte(doc[:20]), 0o644); err != nil {
		t.Fatal(err)
	}
	if data, _, err := Read(path); len(data) != 20 || !errors.Is(err, ErrNotJSON) {
		t.Errorf("truncated: %d bytes, %v", len(data), err)
	}
	if _, _, err := Read(filepath.Join(dir, "none.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	if _, _, err := Read(dir); err == nil {
		t.Errorf("a directory read without error")
	}
}
