package pmqos

import (
	"fmt"
	"io"
	"strings"

	"github.com/interlink/interlink/internal/termtext"
)

// Report says which ends of a run held a CPU-latency request, at what
// value, and why an end did not (JSON "cpu_latency" of a bench result).
type Report struct {
	RequestedUS int32 `json:"requested_us"`
	Ends        []End `json:"ends"`
}

// End is one end's hold.
type End struct {
	End  string `json:"end"` // "local" or "peer ADDR"
	Held bool   `json:"held"`
	// AggregateUS is the kernel's aggregate request on that host just
	// after the hold was taken (another process may hold a lower one);
	// absent when not held.
	AggregateUS *int32 `json:"aggregate_us,omitempty"`
	// Reason says why the end did not hold (for a person).
	Reason string `json:"reason,omitempty"`
}

// HeldAll reports whether every end held its request.
func (r *Report) HeldAll() bool {
	for _, e := range r.Ends {
		if !e.Held {
			return false
		}
	}
	return len(r.Ends) > 0
}

// Lines are the report for a person, one line per end after a first.
func (r *Report) Lines() []string {
	out := []string{fmt.Sprintf("CPU latency request (PM QoS, %s) of %d us for the run, released at its end:", Path, r.RequestedUS)}
	for _, e := range r.Ends {
		s := "  " + termtext.Clean(e.End) + ": "
		switch {
		case e.Held && e.AggregateUS != nil:
			s += fmt.Sprintf("held (the host's aggregate request: %d us)", *e.AggregateUS)
		case e.Held:
			s += "held"
		default:
			s += "NOT held: " + termtext.Clean(e.Reason)
		}
		out = append(out, s)
	}
	if r.RequestedUS != 0 {
		out = append(out, "  note: a KVM guest's haltpoll governor still halts idle vCPUs for any request but 0")
	}
	return out
}

// WriteText writes Lines.
func (r *Report) WriteText(w io.Writer) error {
	_, err := io.WriteString(w, strings.Join(r.Lines(), "\n")+"\n")
	return err
}

// LocalEnd holds us on this host: the End to report, and the hold to
// close at the run's end (nil when it failed).
func LocalEnd(us int32) (*Hold, End) {
	h, err := Open(us)
	if err != nil {
		return nil, End{End: "local", Reason: oneLine(err)}
	}
	e := End{End: "local", Held: true}
	if v, err := Current(); err == nil {
		e.AggregateUS = &v
	}
	return h, e
}

func oneLine(err error) string {
	return strings.ReplaceAll(strings.TrimPrefix(err.Error(), "pmqos: "), "\n", " ")
}
