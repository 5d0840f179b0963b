//go:build linux

package mariadb_test

import (
	"os/user"
	"strconv"
	"testing"
)

func itoa(i int) string { return strconv.Itoa(i) }

func uidOf(t *testing.T, name string) string {
	t.Helper()
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return u.Uid
}
