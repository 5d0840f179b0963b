// Package lab builds network-namespace labs from a topology: nodes are
// network namespaces, switches are bridges in a namespace of the lab's own,
// and every link is a veth pair created directly between the two
// namespaces, so the host's interfaces, addresses, routes and sysctls never
// change. A link's switch side can have a smaller MTU than the node side
// (port_mtu: frames above it are dropped without ICMP, a real L2
// blackhole), a link can lose a share of its frames at random (loss: both
// enforced by the port's eBPF classifier, package ebpf, which counts what
// it drops), a node can forward (a router answering "fragmentation needed"
// and "packet too big"), and a node's egress can be shaped with tbf.
//
// Use: Load (a built-in name or a file) or Parse (package topology, whose
// names lab re-exports) gives a validated
// Topology; Up builds it (replacing a lab of the same name) and returns a
// Lab; Open finds a lab that is up; Lab.Node gives a Node, whose Exec runs
// a command in it (a namespace node or a VM node alike), whose Do runs Go
// code in a namespace node and whose Start runs a process there; Inspect
// reads a lab back from the kernel; Down removes it. Labs lists what is
// recorded. Each kind of node (kind_linux.go: a namespace, a VM) is built,
// inspected, asked about its services, run in and stopped by a backend of
// its own.
//
// Namespaces are named il-LAB (the switches) and il-LAB.NODE, and appear in
// `ip netns list`. Up records the lab in StateDir (/run/interlink/labs, or
// $INTERLINK_LAB_DIR) before each namespace it creates, so Down removes
// everything (processes in the nodes included) even after Up was killed.
// All links live inside the lab's namespaces, so removing the namespaces
// removes every veth and bridge; the host never holds any of them.
//
// Built-in topologies (Load by name; addresses are from the benchmarking
// range 198.18.0.0/15 and ULA fd00::/8; every node link is eth1 unless
// noted; IPv6 DAD is off so addresses work at once):
//
//	jumbo      switch ic (9000)
//	           node1 198.18.10.1/24 fd00:10::1/64, node2 .2 ::2, node3 .3 ::3, all MTU 9000
//	blackhole  as jumbo, but node2's switch port has MTU 1500 (node2's eth1 says 9000)
//	routed     switch lan (9000): node1 198.18.10.1 fd00:10::1, node2 198.18.10.2 fd00:10::2,
//	           r1 eth1 198.18.10.254 fd00:10::fe
//	           switch wan (1400): r1 eth2 198.18.20.254 fd00:20::fe, node3 198.18.20.3 fd00:20::3
//	           (all /24 and /64); node1, node2 route 198.18.20.0/24 and fd00:20::/64 via r1,
//	           node3 routes 198.18.10.0/24 and fd00:10::/64 via r1; r1 forwards
//	mixed      switch ic (9000): node1 198.18.10.1 fd00:10::1 MTU 9000,
//	           node2 198.18.10.2 fd00:10::2 MTU 1500
//	shaped     switch ic (9000): node1 198.18.10.1 fd00:10::1, node2 198.18.10.2 fd00:10::2,
//	           node2's egress shaped to 100 Mbit/s
//	rac        switch priv (9000): node1 eth1 198.18.10.1 fd00:10::1, node2 eth1 198.18.10.2 fd00:10::2
//	           switch pub (1500): node1 eth0 198.18.99.1 fd00:99::1, node2 eth0 198.18.99.2 fd00:99::2
//	pg         switch pub (1500): primary eth0 198.18.99.1 fd00:99::1, standby eth0 .2 ::2,
//	           client eth0 .9 ::9; switch ic (9000): primary eth1 198.18.10.1 fd00:10::1,
//	           standby eth1 .2 ::2; services: PostgreSQL primary on primary, its
//	           synchronous standby on standby (replicating over ic), an agent on each node
//	galera     switch pub (1500): db1 eth0 198.18.99.1 fd00:99::1, db2 .2 ::2, db3 .3 ::3,
//	           client eth0 .9 ::9; switch ic (9000): db1..db3 eth1 198.18.10.1..3 fd00:10::1..3;
//	           services: a Galera member on db1..db3 replicating over ic (db1 bootstraps),
//	           an agent on each node
//
//	vmjumbo    switch ic (9000), switch pub (1500): node1..node3 are VM nodes (below),
//	           eth1 198.18.10.N fd00:10::N (ic; node2's port, its tap, at 1500),
//	           eth0 198.18.99.N fd00:99::N (pub), each with an agent and sshd;
//	           ops, a namespace node, eth0 198.18.99.9 fd00:99::9 (pub)
//
// VM nodes (a node's vm: mapping; package topology, vmnode_linux.go, package
// vm) are virtual machines with a kernel of their own instead of
// namespaces: Up boots each with qemu in the lab's switch namespace, every
// link a tap there (the switch port, named and filtered as a veth port
// would be) and a virtio NIC in the guest, found by its MAC and given the
// link's name, MTU and addresses. The guest runs the same interlink
// binary (its agent service, Node.Exec / lab exec through a serial
// command channel, and status's questions about its services through a
// serial status channel of their own) and can run OpenSSH's sshd (kind sshd, from a Debian
// image mmdebstrap builds once into the VM cache: root with the lab's key,
// SSHIdentityFile, host keys in SSHKnownHostsFile). Down stops qemu by its recorded PID; the taps go with
// the switch namespace and the initramfs, console and sockets with the
// lab's directory. Namespace and VM nodes mix in one lab.
//
// Services (a node's services list; package topology): kind agent (interlink
// agent on port 7471 with the lab's token, StateDir/NAME.d/agent.token) and
// kind postgres with role primary or standby (PostgreSQL from Debian's
// package, run as the postgres user, data in StateDir/NAME.d/nodes/NODE/postgres,
// listening on all the node's addresses on port 5432; a standby is a
// pg_basebackup of its primary over the switch named by via, synchronous
// unless sync: false), and kind galera (MariaDB with the Galera provider,
// Debian's mariadb-server and galera-4, run as the mysql user, listening on
// every address on port 3306; every galera node of a lab, at least three,
// is a member of one cluster replicating over the switch named by via; the
// first in topology order bootstraps it, the others join by rsync state
// transfer; the account interlink with the password in
// StateDir/NAME.d/galera.password, and database sbtest). A galera member's
// data is in StateDir/NAME.d/nodes/NODE/galera when the mysql user can pass every
// directory above the state directory, else in UserDataRoot/NAME-HASH.
// Up starts them after the network, recording each before it starts; Down
// stops them (PostgreSQL with a fast shutdown, Galera members together by
// SIGTERM) and removes their files, also after Up was killed.
//
// A built-in's lab is named after it; set Topology.Name before Up to run
// one under another name (tests do, to keep their labs apart).
//
// Go and namespaces: Node.Do runs a function on a locked OS thread inside
// the node; sockets created there belong to the node for their whole life,
// but goroutines started inside do not inherit the namespace, and
// /proc/self/net shows the main thread's namespace (use counters.Take, which
// reads /proc/thread-self/net, or /proc/self/task/TID/net before Linux 3.17).
// Node.Start runs a process in the node with its own view of /sys and
// /proc/net, as `ip netns exec` does.
package lab
