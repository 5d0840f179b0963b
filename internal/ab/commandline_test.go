package ab

import (
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/shellq/shellqtest"
)

// TestCommandLine: an argv arm is shown as a command line whose words are
// its argv (a saved result can hold any argv); a shell arm as its line.
func TestCommandLine(t *testing.T) {
	argv := []string{"interlink", "bench", "node 2", "--mode", "blocks", "--token-file", "/etc/it's/token"}
	a := Arm{Name: "A", Command: argv}
	shellqtest.Check(t, a.CommandLine(), 0, "", argv...)
	sh := Arm{Name: "B", Command: []string{"interlink lab set demo ic mtu=1500 && interlink bench x"}, Shell: true}
	if got := sh.CommandLine(); got != sh.Command[0] {
		t.Errorf("shell arm shown as %s", got)
	}
	var b strings.Builder
	WriteText(&b, &Result{A: a, B: sh})
	if want := "  A: interlink bench 'node 2' --mode blocks --token-file '/etc/it'\\''s/token'\n"; !strings.Contains(b.String(), want) {
		t.Errorf("text lacks %q:\n%s", want, b.String())
	}
}
