package shellq_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/shellq"
	"github.com/interlink/interlink/internal/shellq/shellqtest"
	"github.com/interlink/interlink/internal/termtext"
)

func TestQuote(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"eth1", "eth1"},
		{"bond0.100", "bond0.100"},
		{"/u02/oradata", "/u02/oradata"},
		{"nas01:/vol/oradata", "nas01:/vol/oradata"},
		{"net.ipv4.conf.eth1.rp_filter=2", "net.ipv4.conf.eth1.rp_filter=2"},
		{"-rf", "-rf"},
		{"user@host,a+b%c", "user@host,a+b%c"},
		{"", "''"},
		{"$(id)", "'$(id)'"},
		{"`id`", "'`id`'"},
		{"a;b", "'a;b'"},
		{"a b", "'a b'"},
		{"it's", `'it'\''s'`},
		{"*", "'*'"},
		{"~root", "'~root'"},
		{"#x", "'#x'"},
		{"a{b,c}", "'a{b,c}'"},
		{"ïface", "'ïface'"},
		{`back\slash`, `'back\slash'`},
		{"a\nb", `$'a\nb'`},
		{"a\tb\rc", `$'a\tb\rc'`},
		{"x\x1b]0;t\x07", `$'x\033]0;t\007'`},
		{"it's\n!", `$'it\'s\n\041'`},
		{"\\\n", `$'\\\n'`},
		{"caf\xe9", `$'caf\351'`},
		{"\u202eevil", `$'\342\200\256evil'`},
		{"\x01" + "7", `$'\0017'`},
	} {
		if got := shellq.Quote(c.in); got != c.want {
			t.Errorf("Quote(%q) = %s, want %s", c.in, got, c.want)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"ip", "link", "set", "dev", "$(id)", "mtu", "9000"}, "ip link set dev '$(id)' mtu 9000"},
		{[]string{"/opt/x=y/interlink", "a=b"}, "/opt/x=y/interlink a=b"},
		{[]string{"A_1=b/interlink", "c"}, "'A_1=b/interlink' c"},
		{[]string{"1=b", "c"}, "1=b c"},
		{nil, ""},
	} {
		if got := shellq.Join(c.args...); got != c.want {
			t.Errorf("Join(%q) = %s, want %s", c.args, got, c.want)
		}
	}
}

// hostile are names a bundle, an inventory or a topology can carry.
var hostile = []string{"$(id)", "`id`", "a;b", "a b", "it's", "-rf", "*", "?", "[ab]", "~", "~root", "#c", "a|b", "a&b",
	"a>b", "a<b", "(x)", "{a,b}", "$HOME", "${x}", "\"q\"", `back\slash`, "!!", "a!b", "ïface", "日本",
	"a\nb", "a\tb", "\r", "\x1b[2J", "caf\xe9", "\u202eevil", "\u200b", "'", "''", "\\'", " ", ""}

// TestQuoteRealShells runs each quoted name through bash and sh and compares
// the words they pass to printf with the names. The shells run in a
// directory holding files the glob characters would match.
func TestQuoteRealShells(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"a", "b", "ab", "a b"} {
		os.WriteFile(filepath.Join(dir, f), nil, 0o644)
	}
	for _, sh := range []string{"bash", "sh"} {
		if _, err := exec.LookPath(sh); err != nil {
			t.Fatalf("%s not found: the test checks the quoting with a real shell (apt-get install -y %s)", sh, map[string]string{"sh": "dash"}[sh])
		}
		for _, name := range hostile {
			line := shellq.Join("printf", `%s\0`, "x", name, "y")
			out, err := shellqtest.Run(sh, dir, line)
			if err != nil {
				t.Errorf("%s -c %s: %v", sh, line, err)
				continue
			}
			words := strings.Split(strings.TrimSuffix(out, "\x00"), "\x00")
			switch {
			case len(words) != 3 || words[0] != "x" || words[2] != "y":
				t.Errorf("%s: %s gave words %q, want x, one word, y", sh, line, words)
			case words[1] != name && (sh == "bash" || termtext.IsClean(name)):
				t.Errorf("%s: %s gave %q, want %q", sh, line, words[1], name)
			}
		}
	}
}

// TestQuoteParses: the syntax parser sees each quoted name as one word of
// nothing but quoted or literal text, whose value is the name.
func TestQuoteParses(t *testing.T) {
	for _, name := range hostile {
		checkParse(t, name)
	}
}

func checkParse(t *testing.T, name string) {
	t.Helper()
	q := shellq.Quote(name)
	ws, err := shellqtest.Words(q+" next", 1)
	if err != nil {
		t.Errorf("Quote(%q) = %s: %v", name, q, err)
		return
	}
	if ws[0].Value != name || ws[0].End != len(q) {
		t.Errorf("Quote(%q) = %s reads back as %q (ends at byte %d of %d)", name, q, ws[0].Value, ws[0].End, len(q))
	}
	if !termtext.IsClean(q) {
		t.Errorf("Quote(%q) = %q: a terminal would not show it as it is", name, q)
	}
}

// FuzzQuote holds the invariants for any string without a NUL: one word,
// its value the string, printable as it is.
func FuzzQuote(f *testing.F) {
	for _, s := range hostile {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.IndexByte(s, 0) >= 0 {
			return
		}
		checkParse(t, s)
	})
}

func TestRunReportsFailure(t *testing.T) {
	if _, err := shellqtest.Run("sh", t.TempDir(), "exit 3"); err == nil || !bytes.Contains([]byte(err.Error()), []byte("exit status 3")) {
		t.Errorf("Run of a failing line: %v", err)
	}
}
