// Package service runs real servers inside lab nodes. NFS is nfs-ganesha
// from Debian's packages (nfs-ganesha, nfs-ganesha-vfs) with rpcbind, both
// started in the node's network namespace and in a mount namespace whose
// /run is a private tmpfs, so their sockets (/run/rpcbind.sock) never meet
// the host's; configuration, log, PID file, recovery directory and the
// exported directory live in a directory the caller gives, and the
// servers are stopped by PID.
package service
