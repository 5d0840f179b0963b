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
	} {
		o, e, code := run(t, tc.args...)
		if code != ExitUnknown || !strings.Contains(e, tc.want) || strings.Count(e, "\n") != 1 || o != "" {
			t.Errorf("%v: exit %d, stderr %q; want one line with %q", tc.args, code, e, tc.want)
		}
	}
}
