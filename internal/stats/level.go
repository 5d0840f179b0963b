package stats

import (
	"fmt"
	"math"
	"strconv"
)

// The rule every verdict follows: a difference is called only where the
// interval really has the confidence asked for. With few runs the order
// statistics of the pairwise differences cannot give it: the widest
// interval, from the smallest to the largest difference, misses the true
// shift with probability 2 / C(m+n, m) (both samples wholly apart by
// chance), so two runs a side give at most 1 - 2/6 = 66.7 %, three 90 %,
// four 97.1 %. Such an interval is labelled with the level it has, and no
// better or worse is read from it.

// Reached says whether the interval has at least the level asked for:
// Achieved >= Level. An interval that has not reached it is labelled with
// Achieved and gives no verdict.
func (s Shift) Reached() bool { return s.Level > 0 && s.Achieved >= s.Level }

// maxRunsPerSide bounds MinRunsPerSide's search: 2/C(2n, n) is below
// 1e-300 long before it, so a level short of 1 is reached well within.
const maxRunsPerSide = 512

// MinRunsPerSide returns the smallest n for which two samples of n values
// each, without ties, can give an exact two-sided Hodges-Lehmann interval
// of level conf: the widest interval has level 1 - 2/C(2n, n), so 2 for up
// to 66.7 %, 3 for 90 %, 4 for 95 % (97.1 %), 5 for 99 % (99.2 %). It is 0
// for a level outside (0, 1).
func MinRunsPerSide(conf float64) int {
	if !(conf > 0 && conf < 1) {
		return 0
	}
	c := 2.0 // C(2n, n) for n = 1
	for n := 2; n <= maxRunsPerSide; n++ {
		// C(2n, n) = C(2n-2, n-1) (2n)(2n-1) / n^2: exact integers while
		// the levels that decide are computed (n < 30).
		c = c * float64(2*n) * float64(2*n-1) / float64(n*n)
		if 1-2/c >= conf {
			return n
		}
	}
	return maxRunsPerSide
}

// TooFew says why an interval gives no verdict, for runs of kind noun
// ("runs", "reports", "samples"): "too few runs for 95 % (need 4 a
// side)".
func TooFew(noun string, conf float64) string {
	return fmt.Sprintf("too few %s for %s (need %d a side)", noun, Pct(conf), MinRunsPerSide(conf))
}

// Pct formats a confidence level asked for (a flag's value) in percent as
// the text prints it: 0.95 as "95 %", 0.995 as "99.5 %", 0.9995 as
// "99.95 %". The digits given are kept, past float noise (the product is
// rounded to 1e-6 of a percent), and a level short of 1 never prints as
// "100 %". A level that was reached rather than asked for is printed by
// PctAchieved.
func Pct(conf float64) string {
	p := conf * 100
	if r := math.Round(p*1e6) / 1e6; r < 100 || conf >= 1 {
		p = r
	}
	return strconv.FormatFloat(p, 'f', -1, 64) + " %"
}

// PctAchieved formats a level an interval reached in percent, rounded
// down so that it never reads as more than was reached, with one decimal
// only when that is not a whole number: 0.6667 as "66.6 %", 0.9 as
// "90 %", 0.9714 as "97.1 %", 0.99998 as "99.9 %". A level within 1e-7 %
// below a tenth is float noise of that tenth (1 - 2/20 is 0.9 computed)
// and prints as it; a level short of 1 still never prints as "100 %".
func PctAchieved(conf float64) string {
	tenths := math.Floor(conf*1000 + 1e-6)
	if conf < 1 && tenths >= 1000 {
		tenths = 999
	}
	if math.Mod(tenths, 10) == 0 {
		return strconv.FormatFloat(tenths/10, 'f', 0, 64) + " %"
	}
	return strconv.FormatFloat(tenths/10, 'f', 1, 64) + " %"
}

// LevelNote is what a printed interval carries after its bounds: "" when
// it reached the level asked for, else the level it has in parentheses
// (" (66.6 %)"), so that a narrower interval is never read as the level the
// heading names.
func (s Shift) LevelNote() string {
	if s.Reached() {
		return ""
	}
	return " (" + PctAchieved(s.Achieved) + ")"
}

// CILabel names an interval by the level it has: "95 % CI" when it
// reached the level asked for, else the level it did reach, rounded down
// ("66.6 % CI").
func (s Shift) CILabel() string {
	if s.Reached() {
		return Pct(s.Level) + " CI"
	}
	return PctAchieved(s.Achieved) + " CI"
}
