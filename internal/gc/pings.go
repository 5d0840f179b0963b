package gc

import (
	"encoding/json"
	"fmt"

	"github.com/interlink/interlink/internal/units"
)

// Times is the mean and standard deviation in ms as AWR prints them, or
// n/a for both when no ping came back.
func (p Pings) Times() (avg, stddev string) {
	if p.Count == 0 {
		return units.NotAvailable, units.NotAvailable
	}
	return fmt.Sprintf("%.3f", p.AvgNs/1e6), fmt.Sprintf("%.3f", p.StddevNs/1e6)
}

// MarshalJSON leaves the times out when no ping came back: a mean of no
// round trips is not 0.
func (p Pings) MarshalJSON() ([]byte, error) {
	type plain Pings // without this method
	if p.Count > 0 {
		return json.Marshal(plain(p))
	}
	return json.Marshal(struct {
		Count int64 `json:"count"`
		Lost  int64 `json:"lost"`
	}{p.Count, p.Lost})
}
