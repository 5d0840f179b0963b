package storm

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/counters"
)

// A kernel that does not keep TcpExt TCPSynRetrans (a counter added after
// some kernels interlink runs on) gives a storm result without it: absent
// in JSON, "n/a" in text, never 0; the counters it keeps are there, 0
// included.
func TestKernelCounterNotAvailable(t *testing.T) {
	old := "TcpExt: ListenOverflows ListenDrops\nTcpExt: 5 5\n"
	before, err := counters.ParseSNMP(strings.NewReader(old), nil)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := counters.ParseSNMP(strings.NewReader("TcpExt: ListenOverflows ListenDrops\nTcpExt: 9 5\n"), nil)
	d := counters.Sub(&counters.Snapshot{SNMP: before}, &counters.Snapshot{SNMP: after})
	r := &Result{Kernel: kernelDelta(d.SNMP)}
	b, err := json.Marshal(r.Kernel)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b); got != `{"listen_overflows":4,"listen_drops":0}` {
		t.Errorf("json %s", got)
	}
	var text bytes.Buffer
	WriteText(&text, r)
	if want := "ListenOverflows 4, ListenDrops 0, SYN retransmits n/a"; !strings.Contains(text.String(), want) {
		t.Errorf("text lacks %q:\n%s", want, text.String())
	}
	full := "TcpExt: ListenOverflows ListenDrops TCPSynRetrans\nTcpExt: 9 5 3\n"
	now, _ := counters.ParseSNMP(strings.NewReader(full), nil)
	k := kernelDelta(counters.Sub(&counters.Snapshot{SNMP: now}, &counters.Snapshot{SNMP: now}).SNMP)
	if k.SYNRetrans == nil || *k.SYNRetrans != 0 {
		t.Errorf("a kept counter that did not move: %v, want 0", k.SYNRetrans)
	}
}
