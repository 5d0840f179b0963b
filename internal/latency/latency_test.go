package latency

import (
	"testing"
	"time"

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

func TestFromDurations(t *testing.T) {
	if s := FromDurations(nil); s != (Summary{}) {
		t.Errorf("empty: %+v", s)
	}
	var ds []time.Duration
	for v := 10; v >= 1; v-- { // unsorted on purpose
		ds = append(ds, time.Duration(v)*time.Millisecond)
	}
	s := FromDurations(ds)
	ms := int64(time.Millisecond)
	if s.Count != 10 || s.Min != ms || s.Max != 10*ms || s.P50 != 5*ms || s.P90 != 9*ms || s.P99 != 10*ms ||
		s.P999 != 10*ms || s.Mean != 5.5*float64(ms) {
		t.Errorf("%+v", s)
	}
	if ds[0] != 10*time.Millisecond {
		t.Error("the samples were reordered")
	}
	one := FromDurations([]time.Duration{42})
	if one.Min != 42 || one.P50 != 42 || one.P99 != 42 || one.Max != 42 || one.Count != 1 {
		t.Errorf("one sample: %+v", one)
	}
}
