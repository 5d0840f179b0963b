package nfs

import (
	"strings"
	"testing"
	"time"
)

func TestParseOptions(t *testing.T) {
	for _, tc := range []struct {
		in                 string
		attr, dir          time.Duration
		noac, sync, direct bool
		wsize              int
	}{
		{"defaults", 3 * time.Second, 30 * time.Second, false, false, false, 0},
		{"rw,hard,vers=3,noac", 0, 0, true, true, false, 0},
		{"rw,hard,vers=3,actimeo=0", 0, 0, false, false, false, 0},
		{"rw,bg,hard,nointr,rsize=32768,wsize=32768,tcp,actimeo=0,vers=3,timeo=600", 0, 0, false, false, false, 32768},
		{"forcedirectio,noac", 0, 0, true, true, true, 0},
		{"forcedirectio,actimeo=0", 0, 0, false, false, true, 0},
		{"sync", 3 * time.Second, 30 * time.Second, false, true, false, 0},
	} {
		o, err := ParseOptions(tc.in)
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if o.AttrTimeout != tc.attr || o.DirAttrTimeout != tc.dir || o.NoAC != tc.noac || o.SyncWrites != tc.sync || o.Direct != tc.direct || o.Wsize != tc.wsize {
			t.Errorf("%s: %+v", tc.in, o)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"vers=4.1", "NFSv3 only"},
		{"proto=udp", "TCP only"},
		{"noac,fsc", `"fsc"`},
		{"wsize=2097152", "rsize/wsize"},
		{"rsize=abc", "rsize"},
	} {
		if _, err := ParseOptions(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %q", tc.in, err, tc.want)
		}
	}
}
