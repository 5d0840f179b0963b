package ab

import "encoding/json"

// MarshalJSON writes a metric that has no statistics (Error: too few runs
// gave a value) without the figures it does not have: no shift, ratio,
// p-value or detectable shift, and null as the median, min and max of an
// arm with no value. As zeros they read as measured (a p-value of 0 as a
// certain difference).
func (m MetricStats) MarshalJSON() ([]byte, error) {
	type plain MetricStats // without this method
	if m.Error == "" {
		return json.Marshal(plain(m))
	}
	arms := func(v [2]float64) [2]*float64 {
		var out [2]*float64
		for i := range v {
			if m.N[i] > 0 {
				out[i] = &v[i]
			}
		}
		return out
	}
	return json.Marshal(struct {
		Metric      string      `json:"metric"`
		Unit        Unit        `json:"unit,omitempty"`
		LowerBetter bool        `json:"lower_is_better"`
		Confidence  float64     `json:"confidence"`
		N           [2]int      `json:"n"`
		Median      [2]*float64 `json:"median"`
		Min         [2]*float64 `json:"min"`
		Max         [2]*float64 `json:"max"`
		Primary     bool        `json:"primary"`
		Significant bool        `json:"significant"`
		Drift       [2]*float64 `json:"drift_rho"`
		Outliers    []int       `json:"outliers,omitempty"`
		Summary     string      `json:"summary"`
		Error       string      `json:"error"`
	}{m.Metric, m.Unit, m.LowerBetter, m.Confidence, m.N, arms(m.Median), arms(m.Min), arms(m.Max), m.Primary, m.Significant,
		m.Drift, m.Outliers, m.Summary, m.Error})
}
