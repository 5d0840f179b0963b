// Package service starts and stops the processes a lab node runs: the
// interlink agent with the lab's token, PostgreSQL primaries and streaming
// standbys (package pgserver), Galera members (package mariadb), and an
// NFS server. It knows nothing of labs:
// the caller (package lab, or a test) passes the function that starts a
// command inside a node, the directories under the lab's state directory,
// and the addresses; a lab records every service before starting it, so
// that `lab down` stops it even after `lab up` was killed.
//
// NFS is nfs-ganesha from Debian's packages (nfs-ganesha, nfs-ganesha-vfs)
// with rpcbind, both started in the node's network namespace and in a
// mount namespace whose /run is a private tmpfs, so their sockets
// (/run/rpcbind.sock) never meet the host's; configuration, log, PID file,
// recovery directory and the exported directory live in a directory the
// caller gives, and the servers are stopped by PID.
package service
