package traffic

import (
	"strings"
	"testing"
	"time"
)

// A share under 100 % never reads "100 %" (a real run: the agent's
// --max-rate 10M held a udp --reverse for 99.64 % of it, printed 100 %).
func TestSharesUnder100(t *testing.T) {
	if l := lateLimit(996*time.Millisecond, time.Second); l == nil || !strings.Contains(l.Detail, "(99 % of the run)") {
		t.Errorf("late 99.6 %% of the run: %+v", l)
	}
	spec, _ := Spec{Mode: ModeUDP, Len: 8192}.Normalize()
	snd := &Side{Role: RoleSender, Duration: time.Second, Messages: 10, UDP: &UDPStats{Sent: 10}, CPU: CPU{SystemNs: 996e6}}
	rcv := &Side{Role: RoleReceiver, Duration: time.Second, Messages: 10, Bytes: 81920, UDP: &UDPStats{Received: 10}}
	rep := &Report{Peer: "p", Result: &Result{Spec: spec, Flows: []Flow{Summarize(spec, Forward, snd, rcv)}}}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "(99 % of a core)") || strings.Contains(b.String(), "100 %") {
		t.Errorf("a sender busy 99.6 %% of a core:\n%s", b.String())
	}
}
