package stats

import "math"

// OneSampleThreshold is the change (5 %) beyond which a figure with one
// sample per side (one AWR report, one gc run) counts as changed. It is no
// statistic: one sample per side cannot tell a change from noise, and
// every such change says so.
const OneSampleThreshold = 0.05

// OneSampleChanged says whether a figure with one sample per side changed:
// by more than OneSampleThreshold of before, or at all from 0.
func OneSampleChanged(before, after float64) bool {
	diff := math.Abs(after - before)
	base := math.Abs(before)
	return diff > 0 && (base == 0 || diff/base > OneSampleThreshold)
}
