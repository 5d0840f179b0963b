package mesh

import "encoding/json"

// MarshalJSON writes a path that was not tried (Skipped) without the
// probe result it never had: no verdict, MTU, header bytes, probe count or
// time, which as zeros would read as a measurement.
func (p Path) MarshalJSON() ([]byte, error) {
	type plain Path // without this method
	if p.Skipped == "" {
		return json.Marshal(plain(p))
	}
	return json.Marshal(struct {
		From        string `json:"from"`
		To          string `json:"to"`
		Network     int    `json:"network"`
		FromAddr    string `json:"from_addr"`
		ToAddr      string `json:"to_addr"`
		MeetsExpect *bool  `json:"meets_expect,omitempty"`
		Error       string `json:"error,omitempty"`
		Skipped     string `json:"skipped"`
	}{p.From, p.To, p.Network, p.FromAddr, p.ToAddr, p.MeetsExpect, p.Error, p.Skipped})
}
