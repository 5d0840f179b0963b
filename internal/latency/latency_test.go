package latency

import (
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"
)

func TestFromHistogram(t *testing.T) {
	if s := FromHistogram(hdrhistogram.New(1, 1e6, 3), 1000); s != (Summary{}) {
		t.Errorf("empty: %+v", s)
	}
	h := hdrhistogram.New(1, 1e6, 3)
	for v := int64(1); v <= 1000; v++ {
		h.RecordValue(v)
	}
	s := FromHistogram(h, 1000) // recorded in us
	if s.Count != 1000 || s.Min != 1000 || s.Max != 1000*1000 || s.P50 != 500*1000 || s.P90 != 900*1000 ||
		s.P99 != 990*1000 || s.P999 != 999*1000 || s.Mean < 500e3 || s.Mean > 501e3 {
		t.Errorf("%+v", s)
	}
}
