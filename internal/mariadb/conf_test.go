//go:build linux

package mariadb

import (
	"net/netip"
	"strings"
	"testing"
)

// TestMyCnf checks the option file of a Galera member: what DESIGN.md
// section 5 lists as known to work, and the member's own addresses.
func TestMyCnf(t *testing.T) {
	c := Config{Dir: "/run/x/db1/galera", Listen: "*", Port: 3306, Galera: &Galera{Cluster: "lab", Node: "db1",
		Address: netip.MustParseAddr("198.18.10.1"), Bootstrap: true,
		Members: []netip.Addr{netip.MustParseAddr("198.18.10.1"), netip.MustParseAddr("198.18.10.2"), netip.MustParseAddr("fd00:10::3")}}}
	got := c.myCnf(Binaries{Provider: "/usr/lib/galera/libgalera_smm.so"})
	for _, want := range []string{
		"[mariadbd]\n", "datadir = /run/x/db1/galera/data\n", "socket = /run/x/db1/galera/run/mysqld.sock\n",
		"bind-address = *\n", "port = 3306\n", "wsrep_on = ON\n", "wsrep_provider = /usr/lib/galera/libgalera_smm.so\n",
		"wsrep_cluster_address = gcomm://198.18.10.1,198.18.10.2,[fd00:10::3]\n", "wsrep_node_address = 198.18.10.1\n",
		"wsrep_node_name = db1\n", "wsrep_cluster_name = lab\n", "binlog_format = ROW\n", "innodb_autoinc_lock_mode = 2\n",
		"wsrep_sst_method = rsync\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("my.cnf lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains((&Config{Dir: "/d"}).myCnf(Binaries{}), "wsrep") {
		t.Error("a standalone server's my.cnf mentions wsrep")
	}
}

// TestInitSQL: the init file holds the password's hash, never the password.
func TestInitSQL(t *testing.T) {
	// MySQL's PASSWORD('password').
	if got := nativeHash("password"); got != "*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19" {
		t.Errorf("nativeHash = %s", got)
	}
	c := Config{SQLUser: "o'neil", Password: "s3cret", Database: "db`x"}
	sql := c.initSQL()
	if strings.Contains(sql, "s3cret") || !strings.Contains(sql, `'o\'neil'@'%'`) || !strings.Contains(sql, "`db``x`") {
		t.Errorf("init SQL:\n%s", sql)
	}
}
