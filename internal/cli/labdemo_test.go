package cli

import (
	"strings"
	"testing"
)

func TestLabDemoUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"lab", "demo", "--time", "0s"}, "--time"},
		{[]string{"lab", "demo", "--time", "1h"}, "--time"},
		{[]string{"lab", "demo", "--block", "nine"}, "--block"},
		{[]string{"lab", "demo", "--block", "1M"}, "--block"},
		{[]string{"lab", "demo", "extra"}, "extra"},
		{[]string{"lab", "demo", "--name", "Bad!"}, "--name"},
		{[]string{"lab", "demo", "--name", ""}, "--name is empty"},
	} {
		stdout, stderr, code := run(t, c.args...)
		if code != ExitUnknown || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want one line about %s, exit 3", c.args, code, stdout, stderr, c.want)
		}
	}
}
