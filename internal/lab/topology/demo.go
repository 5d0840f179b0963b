package topology

// The built-in topology of `interlink lab demo` (builtin/demo.yaml): three
// nodes on a 9000 interconnect switch with node3's switch port left at
// 1500, and a public network at 1500 for the comparison.
//
//	demo  switch ic (9000): node1 eth1 198.18.10.1 fd00:10::1, node2 .2 ::2,
//	      node3 .3 ::3 (node3's switch port at 1500: the blackhole)
//	      switch pub (1500): node1 eth0 198.18.99.1 fd00:99::1, node2 .2 ::2, node3 .3 ::3
func init() {
	builtins = append(builtins, Builtin{"demo", "the lab demo: node1..node3 at 9000, node3's switch port left at 1500, public network at 1500"})
}
