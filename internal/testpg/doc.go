// Package testpg runs throwaway PostgreSQL servers from Debian's packages:
// initdb into a directory owned by the postgres user (never as root), a
// listen address and port, a socket directory of its own, pg_ctl start,
// and a stop by the postmaster's PID. Tests use New (a server in
// t.TempDir, stopped in t.Cleanup); lab services use InitDB, Start and
// StopPID with their own directories and addresses.
//
// A test that needs PostgreSQL and cannot find it fails with the install
// command (ErrMissing); it does not skip.
package testpg
