package traffic

import (
	"testing"
	"time"
)

// Two ends in one network namespace each count both ends' packets: the
// responder's UDP counters hold the requester's requests too, and adding
// the two ends' counters counts every packet twice. The summary takes the
// known requests (or feedback) out of the sender's fragments and counts
// the namespace once (a blocks run against an agent on loopback read 2.00
// fragments per unfragmented 8 KiB block and 4.00 packets per block).
func TestSummarizeSharedNetns(t *testing.T) {
	spec, _ := Spec{Mode: ModeBlocks, Request: 256, Block: 8192}.Normalize()
	mk := func(clientNS, serverNS string) Summary {
		both := Counters{UDPOutDatagrams: 2000} // 1000 blocks + 1000 requests
		client := &Side{Role: RoleRequester, Duration: time.Second, Messages: 1000, Bytes: 1000 * 8192, MTU: 1500, Netns: clientNS,
			Blocks: &BlockStats{Requests: 1000, Completed: 1000, Chunks: 1}, Counters: Counters{UDPOutDatagrams: 1000}}
		server := &Side{Role: RoleResponder, Duration: time.Second, Messages: 1000, Netns: serverNS,
			Blocks: &BlockStats{Requests: 1000, Completed: 1000, Chunks: 1}, Counters: Counters{UDPOutDatagrams: 1000, FragOKs: 1000, FragCreates: 6000}}
		if clientNS != "" && clientNS == serverNS {
			both.UDPOutDatagrams, both.FragOKs, both.FragCreates = 2000, 1000, 6000 // 6 fragments a block, 1 packet a request
			client.Counters, server.Counters = both, both
		}
		return Summarize(spec, Forward, client, server).Summary
	}
	apart := mk("boot net:[1]", "boot net:[2]")
	if apart.SharedNetns || apart.FragmentsPerMessage != 6 || apart.PacketsPerMessage != 7 {
		t.Errorf("two namespaces: shared %v, %.2f fragments, %.2f packets per block; want 6 and 7", apart.SharedNetns, apart.FragmentsPerMessage, apart.PacketsPerMessage)
	}
	one := mk("boot net:[1]", "boot net:[1]")
	if !one.SharedNetns || one.FragmentsPerMessage != 6 || one.PacketsPerMessage != 7 {
		t.Errorf("one namespace: shared %v, %.2f fragments, %.2f packets per block; want 6 and 7", one.SharedNetns, one.FragmentsPerMessage, one.PacketsPerMessage)
	}
	if old := mk("", ""); old.SharedNetns {
		t.Error("ends that do not name their namespace (an older agent) taken as sharing one")
	}
}

// Datagrams the ends did not send (another program, another test on the
// same loopback) in a namespace's counters make its packet figures the
// other traffic's too: they are absent and the count is said (a blocks
// run of 161 blocks beside other tests read 264 fragments per 8 KiB block
// at MTU 65535). A few beyond the run's own (hellos) do not.
func TestSummarizeForeignUDP(t *testing.T) {
	spec, _ := Spec{Mode: ModeBlocks, Request: 256, Block: 8192}.Normalize()
	mk := func(other int64) Summary {
		client := &Side{Role: RoleRequester, Duration: time.Second, Messages: 1000, Bytes: 1000 * 8192, MTU: 9000, Netns: "b net:[1]",
			Blocks: &BlockStats{Requests: 1000, Completed: 1000, Chunks: 1}, Counters: Counters{UDPOutDatagrams: 1000}}
		server := &Side{Role: RoleResponder, Duration: time.Second, Messages: 1000, Netns: "b net:[2]",
			Blocks: &BlockStats{Requests: 1000, Completed: 1000, Chunks: 1}, Counters: Counters{UDPOutDatagrams: 1000 + other}}
		return Summarize(spec, Forward, client, server).Summary
	}
	if s := mk(5); s.ForeignUDP != 0 || s.FragmentsPerMessage < 1 || s.PacketsPerMessage < 2 {
		t.Errorf("5 datagrams beyond the run's: foreign %d, %.3f fragments, %.3f packets", s.ForeignUDP, s.FragmentsPerMessage, s.PacketsPerMessage)
	}
	if s := mk(42000); s.ForeignUDP != 42000 || s.FragmentsPerMessage != 0 || s.PacketsPerMessage != 0 {
		t.Errorf("42000 foreign datagrams: foreign %d, %.3f fragments, %.3f packets; want both absent", s.ForeignUDP, s.FragmentsPerMessage, s.PacketsPerMessage)
	}
}
