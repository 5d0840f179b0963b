package cli

import (
	"strings"
	"testing"
)

func TestStormBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"storm"}, "expected the target ADDR"},
		{[]string{"storm", "127.0.0.1:1", "--clients", "0"}, "--clients 0"},
		{[]string{"storm", "127.0.0.1:1", "--clients", "1000000"}, "--clients 1000000"},
		{[]string{"storm", "127.0.0.1:1", "--protocol", "http"}, `--protocol "http"`},
		{[]string{"storm", "127.0.0.1:1", "--protocol", "postgres"}, "needs --user"},
		{[]string{"storm", "127.0.0.1:1", "--protocol", "mysql"}, "--protocol mysql needs --user"},
		{[]string{"storm", "127.0.0.1:1", "--sources", "0"}, "--sources 0"},
		{[]string{"storm", "127.0.0.1:1", "--sources", "2", "--source-base", "x"}, `--source-base "x"`},
		{[]string{"storm", "127.0.0.1:1", "--timeout", "0s"}, "--timeout must be positive"},
		// A target that can never be dialled is refused, not stormed
		// (every client failed with "other", exit 1); so are flags of
		// another protocol.
		{[]string{"storm", "127.0.0.1"}, `target "127.0.0.1": want HOST:PORT`},
		{[]string{"storm", "127.0.0.1:1:x"}, `target "127.0.0.1:1:x": want HOST:PORT`},
		{[]string{"storm", "[::1"}, `target "[::1": want HOST:PORT`},
		{[]string{"storm", ":1521"}, `target ":1521": want HOST:PORT`},
		{[]string{"storm", "127.0.0.1:0"}, `port "0": want 1 to 65535`},
		{[]string{"storm", "127.0.0.1:65536"}, `port "65536": want 1 to 65535`},
		// An empty label: the resolver refuses the name itself, with no
		// DNS query leaving the machine.
		{[]string{"storm", "no..host.invalid:1521"}, "target no..host.invalid:1521: cannot resolve no..host.invalid"},
		{[]string{"storm", "127.0.0.1:1", "--sources", "2", "--source-base", "::1"}, "different IP versions"},
		{[]string{"storm", "127.0.0.1:1", "--user", "scott"}, "--user and --database go with --protocol postgres or mysql"},
		{[]string{"storm", "127.0.0.1:1", "--database", "db"}, "--user and --database go with"},
	} {
		o, e, code := run(t, tc.args...)
		if code != ExitUnknown || !strings.Contains(e, tc.want) || strings.Count(e, "\n") != 1 || o != "" {
			t.Errorf("%v: exit %d, stderr %q; want one line with %q", tc.args, code, e, tc.want)
		}
	}
}
