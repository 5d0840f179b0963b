package awr

import (
	"math"
	"strconv"
	"strings"
)

// num reads a number as AWR prints it: grouped thousands ("1,234,567.8"),
// no leading zero (".16"), a trailing point ("219."), SI suffixes that
// AWR uses for counts and seconds ("27.9K", "4.5M": multiples of 1000),
// and, where the report's language writes them so, a decimal comma
// ("1.234,56", "0,8"). decComma says which the report uses when a number
// alone cannot tell ("1,234" is a thousand and more in English, one and
// a bit in German). Anything else (words, "N/A", dates, addresses) is not
// a number.
func num(s string, decComma bool) (float64, bool) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 40 {
		return 0, false
	}
	mult := 1.0
	switch s[len(s)-1] {
	case 'K':
		mult = 1e3
	case 'M':
		mult = 1e6
	case 'G':
		mult = 1e9
	case 'T':
		mult = 1e12
	}
	if mult != 1 {
		s = s[:len(s)-1]
	}
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	if s == "" {
		return 0, false
	}
	dec, group := byte('.'), byte(',')
	lastDot, lastComma := strings.LastIndexByte(s, '.'), strings.LastIndexByte(s, ',')
	switch {
	case lastDot >= 0 && lastComma >= 0:
		// Both: the later one is the decimal separator.
		if lastComma > lastDot {
			dec, group = ',', '.'
		}
	case lastComma >= 0 && (decComma || len(s)-lastComma-1 != 3 || strings.Count(s, ",") == 1 && lastComma == 0):
		dec, group = ',', '.'
	case lastDot >= 0 && decComma:
		// A report with decimal commas groups thousands with points:
		// 318.406 is a number of waits, unless it cannot be a grouping.
		if _, ok := ungroup(s, '.'); ok {
			dec, group = ',', '.'
		}
	}
	intPart, frac, hasDec := s, "", false
	if i := strings.LastIndexByte(s, dec); i >= 0 {
		intPart, frac, hasDec = s[:i], s[i+1:], true
	}
	digits, ok := ungroup(intPart, group)
	if !ok || !allDigits(frac) || (digits == "" && frac == "") {
		return 0, false
	}
	if digits == "" {
		digits = "0"
	}
	text := digits
	if hasDec && frac != "" {
		text += "." + frac
	}
	v, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsInf(v, 0) {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v * mult, true
}

// ungroup removes group separators from an integer part, checking that
// every group after the first has three digits.
func ungroup(s string, group byte) (string, bool) {
	if s == "" {
		return "", true
	}
	parts := strings.Split(s, string(group))
	for i, p := range parts {
		if !allDigits(p) || p == "" || i > 0 && len(p) != 3 || i == 0 && len(parts) > 1 && len(p) > 3 {
			return "", false
		}
	}
	return strings.Join(parts, ""), true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// timeUnits are the suffixes 12c and later print on average wait times:
// a value in the unit times ms, or over perMs, is milliseconds (dividing
// keeps 935.36us at 0.93536, where multiplying by 1e-3 gives
// 0.9353600000000001).
var timeUnits = []struct {
	suffix    string
	ms, perMs float64
}{{"ns", 0, 1e6}, {"us", 0, 1e3}, {"ms", 1, 0}, {"s", 1000, 0}}

// millis reads an average wait: "534.00us", "3.23ms", "52.86 s",
// ".00ns" (12c and later), or a plain number of milliseconds (11.2).
func millis(s string, decComma bool) (float64, bool) {
	s = strings.TrimSpace(s)
	for _, u := range timeUnits {
		if v, ok := strings.CutSuffix(s, u.suffix); ok && v != "" {
			f, ok := num(strings.TrimSpace(v), decComma)
			if u.perMs != 0 {
				return f / u.perMs, ok
			}
			return f * u.ms, ok
		}
	}
	return num(s, decComma)
}

// isUnit reports whether tok is a time unit printed apart from its number
// ("52.86 s").
func isUnit(tok string) bool {
	for _, u := range timeUnits {
		if tok == u.suffix {
			return true
		}
	}
	return false
}

// numeric reports whether tok reads as a value: a number, a time, or a
// value AWR leaves unknown ("N/A").
func numeric(tok string, decComma bool) bool {
	if tok == "N/A" {
		return true
	}
	_, ok := millis(tok, decComma)
	return ok
}

// ptr returns a pointer to the value of s, or nil when s is not a number.
func ptr(s string, decComma bool) *float64 {
	v, ok := num(s, decComma)
	if !ok {
		return nil
	}
	return &v
}

// msPtr is ptr for average waits (millis).
func msPtr(s string, decComma bool) *float64 {
	v, ok := millis(s, decComma)
	if !ok {
		return nil
	}
	return &v
}

// f returns a pointer to v.
func f(v float64) *float64 { return &v }
