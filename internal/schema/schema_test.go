package schema

import (
	"errors"
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
