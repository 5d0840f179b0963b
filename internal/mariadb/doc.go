// Package mariadb runs MariaDB servers from Debian's packages
// (mariadb-server; galera-4 and rsync for a cluster): alone, or as members
// of a Galera cluster, the first bootstrapping it (--wsrep-new-cluster) and
// the others joining by an rsync state transfer (SST) from a member.
//
// A server lives in one directory the caller gives (Config.Dir): my.cnf
// there, the data in Dir/data and the socket, PID file and error log in
// Dir/run, both owned by the server's user (mysql when run as root: the
// rsync state transfer drops to it, so every directory on the way to Dir
// must let that user through; /root does not). Start creates the SQL
// account and database clients use (from an init file holding only the
// password's hash), starts the server in its own session so it outlives
// the caller (a lab's service), and waits until it accepts logins and, in
// a cluster, is Synced in a primary component. Stop ends servers by PID
// (SIGTERM, then SIGKILL), checking first that the PID is still the server
// of its directory.
package mariadb
