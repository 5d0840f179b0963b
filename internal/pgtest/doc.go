// Package pgtest gives tests throwaway PostgreSQL servers (package
// pgserver): New makes a server in t.TempDir on a free port of 127.0.0.1
// and NewStandby a streaming standby of one, both stopped by PID in
// t.Cleanup. A test that needs PostgreSQL and cannot find it fails with
// the install command; it does not skip.
package pgtest
