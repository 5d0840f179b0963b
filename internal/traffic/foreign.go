package traffic

// A namespace's UDP counters count every datagram that left it during the
// run, the run's and anything else's (other programs on the host, other
// tests on its loopback). The ends know how many they sent themselves: a
// namespace that sent clearly more carried other traffic, and packet
// figures read from its counters would be that traffic's too.

// ForeignDatagrams is how many datagrams beyond own, what the run's ends
// in a namespace sent themselves, the namespace's counters counted (out):
// 0 unless clearly more than a slack for the session's hellos, late
// feedback and probes.
func ForeignDatagrams(out, own int64) int64 {
	if out-own > 16+own/100 {
		return out - own
	}
	return 0
}

// ownUDP is the datagrams an end sent itself, from its own counts, and
// whether that is known (not with UDP_SEGMENT, where the kernel may count
// a buffer once; not in tcp mode, which sends none).
func ownUDP(sd *Side) (int64, bool) {
	switch {
	case sd == nil:
		return 0, false
	case sd.UDP != nil && sd.UDP.GSO > 1:
		return 0, false
	case sd.UDP != nil:
		return sd.UDP.Sent + sd.UDP.FeedbackSent, true // a sender's, or a receiver's feedback
	case sd.Blocks != nil && sd.Role == RoleRequester:
		return sd.Blocks.Requests, true
	case sd.Blocks != nil:
		return sd.Blocks.Completed * int64(max(sd.Blocks.Chunks, 1)), true
	}
	return 0, false
}

// foreignUDP is how many datagrams the ends' namespaces sent beyond the
// run's own (0 when that cannot be told), counting a namespace both share
// once.
func foreignUDP(client, server *Side) int64 {
	c, cok := ownUDP(client)
	s, sok := ownUDP(server)
	if !cok || !sok || !client.Counters.Has("udp_out_datagrams") || !server.Counters.Has("udp_out_datagrams") {
		return 0
	}
	if sharedNetns(client, server) {
		return ForeignDatagrams(max(client.Counters.UDPOutDatagrams, server.Counters.UDPOutDatagrams), c+s)
	}
	return ForeignDatagrams(client.Counters.UDPOutDatagrams, c) + ForeignDatagrams(server.Counters.UDPOutDatagrams, s)
}
