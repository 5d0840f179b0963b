package traffic

import (
	"testing"
	"time"
)

// A short tail after full intervals is dropped, as iperf3 does; a run
// shorter than a tenth of an interval keeps its one interval (the agent's
// end of a --time 100ms run had none, so its line and JSON were missing).
func TestIntervalsShortRun(t *testing.T) {
	t0 := time.Unix(1000, 0)
	iv := newIntervals(t0, time.Second, RoleReceiver, nil)
	iv.finish(t0.Add(99*time.Millisecond), Interval{Bytes: 1000, Messages: 1})
	if len(iv.list) != 1 || iv.list[0].End != 99*time.Millisecond || iv.list[0].BitsPerSec == 0 {
		t.Errorf("a 99 ms run: intervals %+v, want its one", iv.list)
	}
	iv = newIntervals(t0, time.Second, RoleReceiver, nil)
	iv.close(t0.Add(time.Second), Interval{Bytes: 1000, Messages: 1})
	iv.finish(t0.Add(1050*time.Millisecond), Interval{Bytes: 10, Messages: 1})
	if len(iv.list) != 1 {
		t.Errorf("a 50 ms tail after a full interval: %d intervals, want it dropped", len(iv.list))
	}
	iv = newIntervals(t0, time.Second, RoleReceiver, nil)
	iv.finish(t0.Add(50*time.Millisecond), Interval{})
	if len(iv.list) != 0 {
		t.Errorf("an empty run: %+v", iv.list)
	}
}
