package pmtu

// ReportSchema is the schema of `interlink pmtu --json`.
const ReportSchema = "interlink.pmtu/v1"

// Report is the result of `interlink pmtu` (schema interlink.pmtu/v1): each
// direction's result with its check against the expected MTU, and the
// status the command judged. It lives here, with the Result it wraps, so
// that the command, the HTML report and the history decode one type.
type Report struct {
	Schema     string      `json:"schema"`
	Peer       string      `json:"peer"`
	Target     string      `json:"target"`
	Method     string      `json:"method"`
	Expect     int         `json:"expect,omitempty"`
	Directions []Direction `json:"directions"`
	Status     string      `json:"status"` // ok, warning, critical, unknown
	Error      string      `json:"error,omitempty"`
}

// Direction is one direction's result with its check against the expected
// MTU (nil when none was given).
type Direction struct {
	Result
	MeetsExpect *bool `json:"meets_expect,omitempty"`
}
