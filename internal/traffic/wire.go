package traffic

// Ethernet framing (IEEE 802.3; docs/sources.md): 14 header + 4 FCS + 8 preamble
// and start delimiter + 12 inter-frame gap = 38 bytes per frame beyond the
// IP packet; frames are at least 64 bytes from header to FCS.
const (
	EthernetOverhead = 38
	ethMinFrame      = 64 // header + payload + FCS
	ethHeaderFCS     = 18
	ipHeader         = 20
	udpHeader        = 8
	tcpHeaderTS      = 32 // TCP header with the timestamp option
)

// FragmentPayload is the IP payload each fragment of a datagram carries at
// an MTU: floor((MTU-20)/8)*8 (1480 at 1500, 8976 at 9000).
func FragmentPayload(mtu int) int { return (mtu - ipHeader) / 8 * 8 }

// PacketsPerDatagram is how many IP packets a UDP datagram with a payload of
// n bytes becomes at an MTU: 1 when it fits, otherwise
// ceil((n+8)/FragmentPayload): 6 for 8 KiB at 1500, 1 at 9000.
func PacketsPerDatagram(n, mtu int) int {
	if mtu <= ipHeader+udpHeader {
		return 0
	}
	if n+udpHeader+ipHeader <= mtu {
		return 1
	}
	f := FragmentPayload(mtu)
	return (n + udpHeader + f - 1) / f
}

// frameBytes is what one IP packet of ipLen bytes occupies on a link that
// adds overhead bytes per packet (38 on Ethernet, with its 64-byte minimum
// frame; 14 for a tbf shaper counting the Ethernet header only).
func frameBytes(ipLen, overhead int) int {
	if overhead == EthernetOverhead && ipLen+ethHeaderFCS < ethMinFrame {
		return ethMinFrame + overhead - ethHeaderFCS
	}
	return ipLen + overhead
}

// UDPWireEfficiency is the share of the link rate that UDP payload of n
// bytes per datagram can use at an MTU: payload / bytes on the wire, all
// fragments' headers and framing included.
func UDPWireEfficiency(n, mtu, overhead int) float64 {
	k := PacketsPerDatagram(n, mtu)
	if k == 0 || n <= 0 {
		return 0
	}
	ipPayload := n + udpHeader
	wire := 0
	for i := 0; i < k; i++ {
		part := FragmentPayload(mtu)
		if i == k-1 {
			part = ipPayload - (k-1)*FragmentPayload(mtu)
		}
		wire += frameBytes(part+ipHeader, overhead)
	}
	return float64(n) / float64(wire)
}

// TCPWireEfficiency is the best-case TCP goodput share of the line rate at
// an MTU with timestamps: (MTU-52)/(MTU+overhead), 94.1 % at 1500 and
// 99.0 % at 9000 on Ethernet.
func TCPWireEfficiency(mtu, overhead int) float64 {
	if mtu <= ipHeader+tcpHeaderTS {
		return 0
	}
	return float64(mtu-ipHeader-tcpHeaderTS) / float64(frameBytes(mtu, overhead))
}
