// Package mariatest gives tests throwaway MariaDB servers (package
// mariadb): New makes a standalone server in t.TempDir on a free port of
// 127.0.0.1, stopped by PID in t.Cleanup. A test that needs MariaDB and
// cannot find it fails with the install command; it does not skip (except
// under -short, as package pgtest).
package mariatest
