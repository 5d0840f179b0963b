package goal

import (
	"strings"
	"testing"
)

func TestSpread(t *testing.T) {
	for _, tc := range []struct {
		xs          []float64
		med, lo, hi float64
	}{
		{nil, 0, 0, 0},
		{[]float64{3}, 3, 3, 3},
		{[]float64{4, 1, 3}, 3, 1, 4},
		{[]float64{4, 1, 3, 2}, 2.5, 1, 4},
	} {
		med, lo, hi := Spread(tc.xs)
		if med != tc.med || lo != tc.lo || hi != tc.hi {
			t.Errorf("Spread(%v) = %v %v %v, want %v %v %v", tc.xs, med, lo, hi, tc.med, tc.lo, tc.hi)
		}
	}
}

func TestJudge(t *testing.T) {
	var m Missed
	per := Ratio{Name: "gate per connection", Op: "<=", Bound: 1, Peer: "HAProxy"}
	if got, want := m.Judge(per, []float64{0.9, 1.02, 0.95}), "gate per connection <= 1.0x HAProxy: ratio 0.95 [spread 0.90..1.02]: met"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if m.Err() != nil {
		t.Errorf("a met goal counted as missed: %v", m.Err())
	}
	stream := Ratio{Name: "gate streaming", Op: ">=", Bound: 1, Peer: "HAProxy"}
	if got := m.Judge(stream, []float64{0.8, 0.99, 1.1}); !strings.HasSuffix(got, ": missed") {
		t.Errorf("got %q, want missed", got)
	}
	err := m.Err()
	if err == nil || err.Error() != "1 goal(s) missed: gate streaming: 0.99 (goal >= 1.0x HAProxy)" {
		t.Errorf("Err() = %v", err)
	}
}
