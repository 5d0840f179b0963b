package topology

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParseLoss parses a link's loss as a topology file and lab set write
// it: a percentage such as 1% or 0.5%, or 0 for none. The % is required
// (is 1 one percent, or all?).
func ParseLoss(s string) (float64, error) {
	if s == "0" {
		return 0, nil
	}
	num, ok := strings.CutSuffix(s, "%")
	v, err := strconv.ParseFloat(num, 64)
	if !ok || err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a loss: want a percentage such as 1%% or 0.5%%, or 0 for none", s)
	}
	if p := lossProblem(v); p != "" {
		return 0, fmt.Errorf("%s", p)
	}
	return v, nil
}

// FormatLoss writes a loss as ParseLoss reads it.
func FormatLoss(v float64) string {
	if v == 0 {
		return "0"
	}
	return strconv.FormatFloat(v, 'g', -1, 64) + "%"
}

// lossProblem says what is wrong with a loss, or "".
func lossProblem(v float64) string {
	if v == 0 {
		return ""
	}
	if math.IsNaN(v) || v < MinLossPercent || v > MaxLossPercent {
		return fmt.Sprintf("loss %s out of range: want %s to %s, or 0 for none", FormatLoss(v), FormatLoss(MinLossPercent), FormatLoss(MaxLossPercent))
	}
	return ""
}
