package runas

import (
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"strings"
	"testing"
)

// TestAccountErrors: a missing account's error names the server and the
// account, with the hint in parentheses only when there is one.
func TestAccountErrors(t *testing.T) {
	const missing = "interlink-no-such-user"
	for _, c := range []struct {
		a    Account
		want string
	}{
		{Account{Name: missing, Server: "pgserver"}, "pgserver: user " + missing + ": "},
		{Account{Name: missing, Server: "mariadb", Hint: "install the server"}, "mariadb: user " + missing + ": "},
	} {
		_, _, err := c.a.IDs()
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%+v: %v, want it to start %q", c.a, err, c.want)
			continue
		}
		if hinted := strings.HasSuffix(err.Error(), " (install the server)"); hinted != (c.a.Hint != "") {
			t.Errorf("%+v: %v: hint shown %v", c.a, err, hinted)
		}
		cmd := exec.Command("true")
		if err := c.a.Apply(cmd); err == nil || cmd.SysProcAttr != nil {
			t.Errorf("%+v: Apply = %v, SysProcAttr %+v; want the lookup's error and cmd untouched", c.a, err, cmd.SysProcAttr)
		}
	}
}

// TestAccountApply: the process's own account changes nothing; another
// (root's, or nobody's when the tests run as root) is set as the
// command's credential without supplementary groups.
func TestAccountApply(t *testing.T) {
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("true")
	if err := (Account{Name: me.Username, Server: "test"}).Apply(cmd); err != nil || cmd.SysProcAttr != nil {
		t.Errorf("own account: %v, SysProcAttr %+v; want nothing set", err, cmd.SysProcAttr)
	}
	other := "root"
	if os.Geteuid() == 0 {
		other = "nobody"
	}
	u, err := user.Lookup(other)
	if err != nil {
		t.Fatalf("this test needs the %s account: %v", other, err)
	}
	uid, gid, err := (Account{Name: other, Server: "test"}).IDs()
	if err != nil || strconv.Itoa(uid) != u.Uid || strconv.Itoa(gid) != u.Gid {
		t.Fatalf("IDs of %s = %d, %d, %v; want %s, %s", other, uid, gid, err, u.Uid, u.Gid)
	}
	cmd = exec.Command("true")
	if err := (Account{Name: other, Server: "test"}).Apply(cmd); err != nil {
		t.Fatal(err)
	}
	cr := cmd.SysProcAttr.Credential
	if cr == nil || int(cr.Uid) != uid || int(cr.Gid) != gid || cr.Groups == nil || len(cr.Groups) != 0 {
		t.Errorf("credential %+v, want uid %d gid %d and no groups", cr, uid, gid)
	}
}
