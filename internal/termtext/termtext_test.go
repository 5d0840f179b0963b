package termtext

import (
	"strings"
	"testing"
)

func TestClean(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Oracle Linux Server 8.9", "Oracle Linux Server 8.9"},
		{"\x1b]0;PWNED\x07\x1b[2J", `\e]0;PWNED\x07\e[2J`},
		{"a\nb\tc\rd", `a\nb\tc\rd`},
		{"caf\xe9", `caf\xe9`},
		{"naïve", "naïve"},
		{"\u202eevil", `\u202eevil`},
		{"\u009b2J", `\u009b2J`},
		{"x\x7fy", `x\x7fy`},
		{`back\slash`, `back\slash`},
		{"", ""},
	} {
		if got := Clean(tc.in); got != tc.want {
			t.Errorf("Clean(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestLines(t *testing.T) {
	if got, want := Lines("ok\n\x1b[2Jbad\n"), "ok\n\\e[2Jbad\n"; got != want {
		t.Errorf("Lines = %q, want %q", got, want)
	}
}

// FuzzClean holds the invariant: nothing a terminal interprets survives,
// and clean text passes unchanged.
func FuzzClean(f *testing.F) {
	f.Add("\x1b[31mred\x1b[0m")
	f.Add("plain text")
	f.Add("\u202e\xff\n")
	f.Fuzz(func(t *testing.T, s string) {
		c := Clean(s)
		if !IsClean(c) {
			t.Fatalf("Clean(%q) = %q still holds unsafe characters", s, c)
		}
		if IsClean(s) && c != s {
			t.Fatalf("Clean changed clean text %q to %q", s, c)
		}
		if strings.ContainsRune(c, 0x1b) {
			t.Fatalf("ESC survived in %q", c)
		}
	})
}

func TestShort(t *testing.T) {
	for in, want := range map[string]string{
		"abc": `"abc"`, "a\x1bb": `"a\x1bb"`, strings.Repeat("é", 12): `"éééééééééé"... (24 bytes)`,
	} {
		if got := Short(in, 10); got != want {
			t.Errorf("Short(%q) = %s, want %s", in, got, want)
		}
	}
}
