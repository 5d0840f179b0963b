package cli

import (
	"os"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/roottest"
)

// TestAnswersToMistakes: the common mistakes get one line that names the
// problem and the next command to run, exit 3. (With a lab up:
// internal/labfence/fencetest.)
func TestAnswersToMistakes(t *testing.T) {
	t.Setenv("INTERLINK_LAB_DIR", t.TempDir())
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"lab", "exec", "blackhole", "node1", "--", "true"}, "interlink: lab blackhole: no such lab is up; bring it up: interlink lab up blackhole (labs up, built-ins: interlink lab list)\n"},
		{[]string{"lab", "set", "blackhole", "ic", "mtu=1500"}, "interlink: lab blackhole: no such lab is up; bring it up: interlink lab up blackhole (labs up, built-ins: interlink lab list)\n"},
		{[]string{"lab", "status", "mylab"}, "interlink: lab mylab: no such lab is up; bring it up: interlink lab up TOPOLOGY.yaml --name mylab (labs up, built-ins: interlink lab list)\n"},
		{[]string{"lab", "set", "x", "ic", "mtu"}, "interlink: lab set: \"mtu\": want KEY=VALUE, e.g. mtu=1500 (see 'interlink lab set --help')\n"},
		// The command's typo first, not the flag the root does not know.
		{[]string{"mseh", "--nodes", "x"}, "interlink: unknown command \"mseh\" (did you mean mesh?); run 'interlink --help'\n"},
		{[]string{"--json", "mseh"}, "interlink: unknown command \"mseh\" (did you mean mesh?); run 'interlink --help'\n"},
	} {
		if strings.Contains(tc.want, "no such lab") && os.Geteuid() != 0 {
			// Looking for the lab needs root (CAP_NET_ADMIN) first.
			roottest.Require(t, "lab exec, set and status look for the lab as root")
		}
		out, errOut, code := mainOutput(tc.args...)
		if code != ExitUnknown || out != "" || errOut != tc.want {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 3 and %q", tc.args, code, out, errOut, tc.want)
		}
	}
	// A flag mistyped after a real command is still the flag's mistake.
	if _, errOut, _ := mainOutput("mesh", "--nodez", "x"); !strings.Contains(errOut, "unknown flag: --nodez; did you mean --nodes?") {
		t.Errorf("mesh --nodez: %q", errOut)
	}
}
