package drift

import (
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/traffic"
)

// TestBenchTooFewIntervals: three intervals a side, the later run's 30 %
// slower. Three a side give a 90 % interval at most: the rate is listed as
// not judged, with the samples that 95 % needs, and is no change nor
// among those compared; four a side reach 95 % and it is a change for the
// worse, compared.
func TestBenchTooFewIntervals(t *testing.T) {
	cut := func(n int, k float64) *traffic.Report {
		r := load(t, "lab-bench-blocks.json").(*traffic.Report)
		iv := r.Flows[0].Client.Intervals[:n]
		for i := range iv {
			iv[i].BitsPerSec *= k
		}
		r.Flows[0].Client.Intervals = iv
		return r
	}
	d := compare(t, cut(3, 1), cut(3, 0.7))
	if d.Verdict != NoChange || len(d.NotJudged) == 0 ||
		!strings.Contains(strings.Join(d.NotJudged, "; "), "rate per interval (3 and 3 samples: too few samples for 95 % (need 4 a side))") {
		t.Errorf("three a side: %s, changes %+v, not judged %q", d.Verdict, d.Changes, d.NotJudged)
	}
	d4 := compare(t, cut(4, 1), cut(4, 0.7))
	if d4.Verdict != Worse || len(d4.NotJudged) != 0 {
		t.Errorf("four a side: %s, changes %+v, not judged %q", d4.Verdict, d4.Changes, d4.NotJudged)
	}
	if d.Compared+len(d.NotJudged) != d4.Compared {
		t.Errorf("three a side: %d compared and %d not judged, four a side %d compared: a metric not judged was counted as compared",
			d.Compared, len(d.NotJudged), d4.Compared)
	}
}
