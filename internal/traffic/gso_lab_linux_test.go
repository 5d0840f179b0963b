package traffic

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/units"
)

// TestLabUDPGSOFallback is issue 32's "86 % fake loss" at MTU 9000:
// unpaced 8 KiB UDP (one packet per datagram) with UDP GSO as this kernel
// has it, with GSO absent (the probe refused, as before Linux 4.18: one
// send per datagram), and with the old kernel's silence (the control
// message ignored, so each 7 x 8 KiB buffer leaves as one 57 KiB datagram
// in 7 fragments). The fallback gives the same packet and fragment figures
// and no loss; the silence is reported as truncated datagrams, not loss.
func TestLabUDPGSOFallback(t *testing.T) {
	l := upPair(t, "t5-gso9000", 9000, "")
	spec := Spec{Mode: ModeUDP, Duration: 500 * time.Millisecond, RateSet: true, Len: 8 << 10}
	run := func(what string) Flow {
		f := runLab(t, context.Background(), spec, place(t, l, "node1"), place(t, l, "node2"))
		s := f.Summary
		t.Logf("%s: %.2f Gbit/s, sent %d, delivered %d, lost %d (%.2f %%), truncated %d holding %d, %.2f fragments/datagram, largest packet %d, reassembled %s, gso %d %q",
			what, s.BitsPerSec/1e9, s.Sent, s.Messages, s.Lost, s.LossPercent, s.Truncated, s.Joined, s.FragmentsPerMessage, s.LargestPacket, units.FormatCount(s.ReasmOKs), f.Client.UDP.GSO, f.Client.UDP.NoGSO)
		return f
	}
	on := run("GSO on")
	if on.Client.UDP.GSO < 2 || on.Client.UDP.NoGSO != "" {
		t.Fatalf("UDP GSO not used (%d segments, %q): the run with GSO on needs a kernel of 4.18 or later", on.Client.UDP.GSO, on.Client.UDP.NoGSO)
	}

	forceGSO(t, absentGSO)
	off := run("GSO absent")
	for _, f := range []Flow{on, off} {
		s := f.Summary
		if s.Messages == 0 || s.LossPercent > 1 || math.Abs(s.FragmentsPerMessage-1) > 0.01 || s.LargestPacket != 8192+28 || s.ReasmReqds == nil || *s.ReasmReqds != 0 || s.Truncated != 0 {
			t.Errorf("gso %d: delivered %d, lost %.2f %%, %.2f fragments per datagram, largest packet %d, reassembly %s, truncated %d",
				f.Client.UDP.GSO, s.Messages, s.LossPercent, s.FragmentsPerMessage, s.LargestPacket, units.FormatCount(s.ReasmReqds), s.Truncated)
		}
	}
	if off.Client.UDP.GSO != 0 || off.Client.UDP.NoGSO == "" {
		t.Errorf("GSO absent: gso %d, reason %q", off.Client.UDP.GSO, off.Client.UDP.NoGSO)
	}

	oldKernelSilence(t)
	res, err := RunLocal(context.Background(), spec, place(t, l, "node1"), place(t, l, "node2"), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := res.Flows[0].Summary
	t.Logf("old kernel's silence: sent %d, delivered %d, truncated %d holding %d, lost %d (%.2f %%), reassembled %s, verdict %s",
		s.Sent, s.Messages, s.Truncated, s.Joined, s.Lost, s.LossPercent, units.FormatCount(s.ReasmOKs), res.Verdict)
	// Every buffer of several datagrams left as one datagram (a buffer
	// the flow window cut to one datagram is just that datagram): what
	// arrived is truncated, reassembled from fragments, and none of it is
	// counted as loss; delivered, joined and lost add up to what was sent.
	if s.Truncated == 0 || s.Joined < 6*s.Truncated || s.Messages > s.Sent/100 || s.LossPercent > 1 || s.ReasmOKs == nil || 100**s.ReasmOKs < 99*s.Truncated ||
		s.Messages+s.Joined+s.Lost != s.Sent {
		t.Errorf("old kernel's silence: truncated %d holding %d, delivered %d, lost %.2f %%, reassembled %s",
			s.Truncated, s.Joined, s.Messages, s.LossPercent, units.FormatCount(s.ReasmOKs))
	}
	var text strings.Builder
	Report{Result: res}.WriteText(&text)
	t.Logf("the report:\n%s", text.String())
	if res.Verdict != VerdictFailed || len(res.Problems) != 1 || res.Problems[0].Problem != ProblemTruncated ||
		!strings.Contains(text.String(), "not network loss") {
		t.Errorf("verdict %s, problems %+v", res.Verdict, res.Problems)
	}
}
