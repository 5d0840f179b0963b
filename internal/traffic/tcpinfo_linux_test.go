package traffic

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/tcpinfo"
)

// A TCP run on a kernel whose TCP_INFO ends at 3.10's 104 bytes (the
// length cut at the syscall) has no minimum round trip: absent in JSON,
// "min n/a" in text, never "min 0.0 us"; the base figures (rtt, mss) are
// there. The same run with the full length has the minimum.
func TestLoopbackTCPInfoByKernelLength(t *testing.T) {
	spec := Spec{Mode: ModeTCP, Duration: 150 * time.Millisecond}
	for _, c := range []struct {
		length int
		minRTT bool
	}{{tcpinfo.BaseLen, false}, {0, true}} {
		restore := func() {}
		if c.length > 0 {
			restore = tcpinfo.LimitLength(c.length)
		}
		res := runLo(t, context.Background(), spec)
		restore()
		st := res.Flows[0].Client.Streams
		if len(st) != 1 || st[0].RTT <= 0 || st[0].MSS <= 0 || (st[0].MinRTT != nil) != c.minRTT {
			t.Fatalf("length %d: streams %+v", c.length, st)
		}
		if c.minRTT && *st[0].MinRTT <= 0 {
			t.Errorf("full length: min rtt %d", *st[0].MinRTT)
		}
		b, _ := json.Marshal(st[0])
		if strings.Contains(string(b), "min_rtt_ns") != c.minRTT {
			t.Errorf("length %d: json %s", c.length, b)
		}
		var text bytes.Buffer
		Report{Result: res}.WriteText(&text)
		if strings.Contains(text.String(), "(min n/a)") == c.minRTT || strings.Contains(text.String(), "(min 0.0 us)") {
			t.Errorf("length %d: text\n%s", c.length, text.String())
		}
	}
}
