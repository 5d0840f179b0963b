// Package pgserver runs PostgreSQL servers from Debian's packages for
// interlink's tests and lab services: initdb into a directory owned by the
// postgres user (never as root), a listen address and port, a socket
// directory of its own, pg_ctl start, streaming standbys made with
// pg_basebackup, and a stop by the postmaster's PID that leaves a reused
// PID alone. Config.StartCmd lets a lab run every command inside a node.
//
// A missing installation is ErrMissing, whose text says how to install it.
package pgserver
