package topology

import "fmt"

// Pair returns the smallest useful lab: two nodes on one switch, node1
// (198.18.50.1/24, fd00:50::1/64) and node2 (198.18.50.2/24,
// fd00:50::2/64) on eth1, switch and links at mtu. rate, when not empty
// (tc syntax: "1gbit", "100mbit"), shapes node1's egress. Benchmarks and
// traffic tests that need one clean link use it.
func Pair(name string, mtu int, rate string) (*Topology, error) {
	shaped := ""
	if rate != "" {
		shaped = ", rate: " + rate
	}
	yaml := fmt.Sprintf(`name: %s
switches:
  ic: {mtu: %d}
nodes:
  node1:
    links:
      - {name: eth1, switch: ic, addresses: [198.18.50.1/24, fd00:50::1/64]%s}
  node2:
    links:
      - {name: eth1, switch: ic, addresses: [198.18.50.2/24, fd00:50::2/64]}
`, name, mtu, shaped)
	return Parse("pair "+name, []byte(yaml))
}
