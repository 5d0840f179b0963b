package traffic

import (
	"slices"
	"time"
)

// Summarize computes a flow's summary from its two sides.
func Summarize(spec Spec, dir Direction, client, server *Side) Flow {
	f := Flow{Direction: dir, Client: client, Server: server}
	s := &f.Summary
	send, recv := client, server
	if dir == Reverse {
		send, recv = server, client
	}
	if spec.Mode == ModeBlocks {
		send, recv = server, client // blocks flow from the responder
	}
	if send == nil || recv == nil {
		return f
	}
	s.Duration = recv.Duration
	if spec.Mode == ModeBlocks {
		s.Duration = client.Duration
	}
	if s.Duration == 0 {
		s.Duration = send.Duration // nothing arrived: the receiver's clock never started
	}
	s.MTU = send.MTU
	if s.MTU == 0 {
		s.MTU = recv.MTU
	}
	s.Bytes = recv.Bytes
	s.Messages = recv.Messages
	if sec := s.Duration.Seconds(); sec > 0 {
		s.BitsPerSec = float64(s.Bytes) * 8 / sec
		s.PerSec = float64(s.Messages) / sec
	}
	rc := recv.Counters
	s.ReasmReqds = rc.ptr("ip_reasm_reqds", rc.ReasmReqds)
	s.ReasmOKs = rc.ptr("ip_reasm_oks", rc.ReasmOKs)
	s.ReasmFails = rc.ptr("ip_reasm_fails", rc.ReasmFails)
	switch spec.Mode {
	case ModeTCP:
		for _, st := range send.Streams {
			s.Retransmits += st.Retransmits
		}
		s.PerSec, s.Messages, s.stream = 0, 0, true
	case ModeUDP:
		summarizeUDP(spec, s, send, recv)
	case ModeBlocks:
		summarizeBlocks(spec, s, client, server)
		s.Split = splitOf(s, client, server)
	}
	if s.Sent > 0 {
		s.LossPercent = 100 * float64(s.Lost) / float64(s.Sent)
	}
	s.SharedNetns = sharedNetns(client, server)
	if s.Messages > 0 && (send.UDP == nil || send.UDP.GSO <= 1) && client.Counters.HasPacketsOut() && server.Counters.HasPacketsOut() {
		out := client.Counters.PacketsOut() + server.Counters.PacketsOut()
		if s.SharedNetns {
			// Each end's delta holds both ends' packets: count them once
			// (over the longer of the two spans).
			out = max(client.Counters.PacketsOut(), server.Counters.PacketsOut())
		}
		s.PacketsPerMessage = float64(out) / float64(s.Messages)
	}
	if s.ForeignUDP = foreignUDP(client, server); s.ForeignUDP > 0 {
		// The counters hold other traffic: what they say per message is
		// not the run's. Fragments from the MTU (UDP_SEGMENT) stay.
		s.PacketsPerMessage = 0
		if send.UDP == nil || send.UDP.GSO <= 1 {
			s.FragmentsPerMessage = 0
		}
	}
	s.LargestPacket = largestPacket(spec, s, recv)
	// Slack for TCP options and fragment alignment (8 bytes).
	s.MTUProven = s.MTU > 0 && s.LargestPacket >= s.MTU-8
	perMsg := spec.Mode != ModeTCP
	s.ClientCost = cost(client, s.Bytes, s.Messages, s.Duration, perMsg)
	s.ServerCost = cost(server, s.Bytes, s.Messages, s.Duration, perMsg)
	wireLimit(spec, s)
	return f
}

// summarizeUDP is a UDP flow's accounting: sent, lost and where, reordered,
// flow control, and the packets each datagram took.
func summarizeUDP(spec Spec, s *Summary, send, recv *Side) {
	if send.UDP != nil && recv.UDP != nil {
		s.Sent = send.UDP.Sent
		s.Truncated, s.Joined = recv.UDP.Truncated, recv.UDP.Joined
		s.Lost = max(s.Sent-recv.UDP.Received-recv.UDP.Joined, 0)
		s.Reordered = recv.UDP.Reordered
		s.Duplicates = recv.UDP.Duplicates
		s.Jitter = recv.UDP.Jitter
		if send.Counters.Has(lossSendFields...) && recv.Counters.Has(lossRecvFields...) {
			s.LossBy = lossPlaces(s.Lost, 0, send.Counters, recv.Counters)
		}
		s.Flow = summarizeFlow(send, recv)
	}
	switch {
	case send.UDP != nil && send.UDP.GSO > 1 && s.MTU > 0:
		// IP counts a segmented buffer once; only datagrams that fit the
		// MTU are segmented, so each is one packet on the wire.
		s.FragmentsPerMessage = float64(PacketsPerDatagram(spec.Len, s.MTU))
	case send.Messages > 0 && send.Counters.HasPacketsOut():
		out := send.Counters.PacketsOut()
		if sharedNetns(send, recv) && recv.UDP != nil {
			out -= recv.UDP.FeedbackSent // the receiver's feedback, one packet each
		}
		s.FragmentsPerMessage = float64(max(out, 0)) / float64(send.Messages)
	}
}

// summarizeBlocks is a blocks flow's accounting: requests, lost blocks and
// where (a lost block is a lost request or a lost response, so the drops
// of both ends count), round trips, and the packets each block took.
func summarizeBlocks(spec Spec, s *Summary, client, server *Side) {
	if b := client.Blocks; b != nil {
		s.Sent = b.Requests
		s.Lost = b.Lost
		s.RTT = b.RTT
		for _, l := range server.LimitedBy {
			s.RTTPaced = s.RTTPaced || l.Limit == LimitAgentRate
		}
		s.Chunks = b.Chunks
		// A lost block is a lost request or a lost response: count the
		// drops at both ends.
		both := Counters{
			UDPSndbufErrors: client.Counters.UDPSndbufErrors + server.Counters.UDPSndbufErrors,
			UDPRcvbufErrors: client.Counters.UDPRcvbufErrors + server.Counters.UDPRcvbufErrors,
			ReasmFails:      client.Counters.ReasmFails + server.Counters.ReasmFails,
		}
		if sharedNetns(client, server) { // one namespace's drops, counted once
			both = Counters{
				UDPSndbufErrors: max(client.Counters.UDPSndbufErrors, server.Counters.UDPSndbufErrors),
				UDPRcvbufErrors: max(client.Counters.UDPRcvbufErrors, server.Counters.UDPRcvbufErrors),
				ReasmFails:      max(client.Counters.ReasmFails, server.Counters.ReasmFails),
			}
		}
		s.Truncated = b.Truncated
		if server.Blocks != nil {
			s.Truncated += server.Blocks.Truncated
		}
		if all := slices.Concat(lossSendFields, lossRecvFields); client.Counters.Has(all...) && server.Counters.Has(all...) {
			s.LossBy = lossPlaces(s.Lost, s.Truncated, both, both)
		}
	}
	if server.Messages > 0 && server.Counters.HasPacketsOut() {
		out := server.Counters.PacketsOut()
		if sharedNetns(client, server) {
			// The requester's requests are in the responder's counters.
			req := PacketsPerDatagram(spec.Request, s.MTU)
			if req == 0 || client.Blocks == nil {
				return // the requests' packets are unknown
			}
			out -= client.Blocks.Requests * int64(req)
		}
		s.FragmentsPerMessage = float64(max(out, 0)) / float64(server.Messages)
	}
}

// sharedNetns says the two ends ran in one network namespace, so each
// one's counters hold the other's packets too (the requests beside the
// blocks, the feedback beside the datagrams).
func sharedNetns(a, b *Side) bool { return a.Netns != "" && a.Netns == b.Netns }

// wireLimit is what the link can carry of this traffic at its rate, and
// the share of it the flow reached; absent without a link rate or an MTU.
func wireLimit(spec Spec, s *Summary) {
	if spec.LinkRateBitsPerSec <= 0 || s.MTU <= 0 {
		return
	}
	var eff float64
	switch spec.Mode {
	case ModeTCP:
		eff = TCPWireEfficiency(s.MTU, spec.LinkOverheadBytes)
	case ModeUDP:
		eff = UDPWireEfficiency(spec.Len, s.MTU, spec.LinkOverheadBytes)
	case ModeBlocks:
		eff = UDPWireEfficiency(min(spec.Block, MaxDatagram), s.MTU, spec.LinkOverheadBytes)
	}
	s.WireLimitBitsPerSec = eff * float64(spec.LinkRateBitsPerSec)
	if s.WireLimitBitsPerSec > 0 {
		s.PercentOfWireLimit = 100 * s.BitsPerSec / s.WireLimitBitsPerSec
	}
}

// The counters lossPlaces reads at the sending and the receiving end:
// without them the loss cannot be placed (LossBy is absent).
var (
	lossSendFields = []string{"udp_sndbuf_errors"}
	lossRecvFields = []string{"udp_rcvbuf_errors", "ip_reasm_fails"}
)

// lossPlaces attributes lost messages: first to datagrams read short
// (truncated, each the loss of at most one message), then to counters that
// name a place (the sender's queue, the receiver's socket buffer,
// reassembly), each at most what is still unexplained, then the rest to the
// network. ReasmFails can count fragments rather than datagrams (a
// fragment dropped because reassembly memory is full counts once per
// fragment), hence the cap.
func lossPlaces(lost, truncated int64, send, recv Counters) *LossPlaces {
	p := &LossPlaces{}
	rest := lost
	take := func(n int64) int64 {
		n = max(min(n, rest), 0)
		rest -= n
		return n
	}
	p.Truncated = take(truncated)
	p.SenderQueue = take(send.UDPSndbufErrors)
	p.SocketBuffer = take(recv.UDPRcvbufErrors)
	p.Reassembly = take(recv.ReasmFails)
	p.Network = rest
	return p
}

func cost(sd *Side, bytes, msgs int64, d time.Duration, perMsg bool) Cost {
	c := Cost{CPUNs: sd.CPU.UserNs + sd.CPU.SystemNs, SoftIRQNs: sd.CPU.SoftIRQNs}
	if gib := float64(bytes) / (1 << 30); gib > 0 {
		c.CPUNsPerGiB = float64(c.CPUNs) / gib
		soft := float64(c.SoftIRQNs) / gib
		c.SoftIRQNsPerGiB = &soft
	}
	if perMsg && msgs > 0 {
		c.CPUNsPerMsg = float64(c.CPUNs) / float64(msgs)
		c.SoftIRQNsPerMsg = float64(c.SoftIRQNs) / float64(msgs)
	}
	if d > 0 {
		c.Utilisation = float64(c.CPUNs) / float64(d)
	}
	return c
}
