package pmtu

// Statuses of a judged path or report, from best to worst. A measured path
// below the expected MTU is a definite failure and outranks a path that
// could not be measured at all.
const (
	StatusOK       = "ok"
	StatusWarning  = "warning"
	StatusUnknown  = "unknown"
	StatusCritical = "critical"
)

var statusRank = map[string]int{StatusOK: 0, StatusWarning: 1, StatusUnknown: 2, StatusCritical: 3}

// Worse returns the worse of two statuses ("" counts as ok).
func Worse(a, b string) string {
	if statusRank[b] > statusRank[a] {
		return b
	}
	if a == "" {
		return StatusOK
	}
	return a
}

// Judge is the one judgement of a path result that pmtu, pmtu --storage
// and the reports share: its check against expect (nil without one), and
// its status: critical below expect, unknown when not even the smallest
// probe came back, warning for a problem verdict (local-limit, icmp,
// blackhole), ok otherwise.
func Judge(r Result, expect int) (meets *bool, status string) {
	status = StatusOK
	if r.Verdict != OK && r.Verdict != Unreachable {
		status = StatusWarning
	}
	if r.Verdict == Unreachable {
		status = StatusUnknown
	}
	if expect > 0 && r.Verdict != Unreachable {
		ok := r.PathMTU >= expect
		meets = &ok
		if !ok {
			status = StatusCritical
		}
	}
	return meets, status
}

// Evaluate fills the report's directions from results, each judged
// against its Expect, and its Status, the worst of them.
func (rep *Report) Evaluate(results []Result) {
	rep.Status = StatusOK
	for _, r := range results {
		meets, st := Judge(r, rep.Expect)
		rep.Directions = append(rep.Directions, Direction{Result: r, MeetsExpect: meets})
		rep.Status = Worse(rep.Status, st)
	}
}
