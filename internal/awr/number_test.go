package awr

import "testing"

func TestNum(t *testing.T) {
	for _, c := range []struct {
		in       string
		decComma bool
		want     float64
		ok       bool
	}{
		{"1,234,567.8", false, 1234567.8, true},
		{".16", false, 0.16, true},
		{"219.", false, 219, true},
		{"27.9K", false, 27900, true},
		{"4.5M", false, 4.5e6, true},
		{"1.234,56", false, 1234.56, true},
		{"1.234,56", true, 1234.56, true},
		{"0,8", false, 0.8, true},
		{"1,234", false, 1234, true},
		{"1,234", true, 1.234, true},
		{"1.234.567", true, 1234567, true},
		{"-3.5", false, -3.5, true},
		{"N/A", false, 0, false},
		{"192.168.10.1", false, 0, false},
		{"2-way", false, 0, false},
		{"-", false, 0, false},
		{"12,34", false, 12.34, true},
		{"1,23,456", false, 0, false},
		{"", false, 0, false},
		{"K", false, 0, false},
		{"20-Jan-25", false, 0, false},
	} {
		got, ok := num(c.in, c.decComma)
		if ok != c.ok || ok && got != c.want {
			t.Errorf("num(%q, %v) = %v, %v; want %v, %v", c.in, c.decComma, got, ok, c.want, c.ok)
		}
	}
}

func TestMillis(t *testing.T) {
	for _, c := range []struct {
		in   string
		want float64
	}{{"534.00us", 0.534}, {"3.23ms", 3.23}, {"52.86 s", 52860}, {".00ns", 0}, {"12", 12}, {"0,50ms", 0.5}} {
		got, ok := millis(c.in, false)
		if !ok || got != c.want {
			t.Errorf("millis(%q) = %v, %v; want %v", c.in, got, ok, c.want)
		}
	}
}
