package traffic

import (
	"fmt"
	"time"

	"github.com/interlink/interlink/internal/units"
)

// A run's verdict: whether it measured the path, was held back by a limit
// (its figures describe the limit), or failed (the path did not carry the
// test: nothing arrived, a stream stalled, blocks were lost).
const (
	VerdictOK      = "ok"
	VerdictLimited = "limited"
	VerdictFailed  = "failed"
)

// MaxBlockLossPercent is the share of blocks a blocks run may lose before
// it fails: a cluster reports every lost block ("gc cr block lost"), and a
// healthy interconnect loses none.
const MaxBlockLossPercent = 1.0

// Problem is a reason a run failed.
type Problem struct {
	// Problem is a stable name: ProblemNoData, ProblemStalled,
	// ProblemBlockLoss.
	Problem   string    `json:"problem"`
	Direction Direction `json:"direction"`
	Detail    string    `json:"detail"` // for a person
}

// The problems a run can fail with.
const (
	ProblemNoData    = "no-data"    // nothing reached the receiver
	ProblemStalled   = "stalled"    // data stopped for whole intervals, or an end was cut at the deadline
	ProblemBlockLoss = "block-loss" // more than MaxBlockLossPercent of the blocks were lost
	ProblemTruncated = "truncated"  // datagrams arrived larger than the run sends and were read short
)

// Judge sets the result's verdict and problems from what it measured.
func (r *Result) Judge() {
	r.Problems = nil
	for _, f := range r.Flows {
		r.Problems = append(r.Problems, judgeFlow(r.Spec, f)...)
	}
	switch {
	case len(r.Problems) > 0:
		r.Verdict = VerdictFailed
	case len(r.LimitedBy) > 0:
		r.Verdict = VerdictLimited
	default:
		r.Verdict = VerdictOK
	}
}

func judgeFlow(spec Spec, f Flow) []Problem {
	var ps []Problem
	add := func(name, format string, a ...any) {
		ps = append(ps, Problem{Problem: name, Direction: f.Direction, Detail: fmt.Sprintf(format, a...)})
	}
	s := f.Summary
	if f.Client == nil || f.Server == nil {
		return nil // an end failed; its error says why
	}
	send, recv := f.Client, f.Server
	if f.Direction == Reverse || spec.Mode == ModeBlocks {
		send, recv = recv, send
	}
	if s.Truncated > 0 {
		add(ProblemTruncated, "%s", truncatedDetail(spec, s, recv))
	}
	if s.Bytes == 0 && s.Messages == 0 && s.Truncated == 0 {
		what := fmt.Sprintf("the %s sent %s", send.Role, units.FormatBytes(float64(send.Bytes)))
		if spec.Mode == ModeBlocks {
			what = fmt.Sprintf("%d requests were sent, %d blocks answered", s.Sent, f.Server.Messages)
		}
		add(ProblemNoData, "nothing reached the %s (%s): the path does not carry this traffic; packets of this size may vanish on the way (run interlink pmtu)", recv.Role, what)
		return ps
	}
	for _, sd := range []*Side{f.Client, f.Server} {
		if sd.Cut {
			add(ProblemStalled, "the %s was still running %v past --time %v and was cut: the stream stalled", sd.Role, RunGrace(spec), spec.Duration)
		}
	}
	if gap := stalledFor(spec, recv); gap > 0 {
		add(ProblemStalled, "the %s received nothing for %v in the middle of the run", recv.Role, gap.Round(time.Millisecond))
	}
	if spec.Mode == ModeBlocks && s.Sent > 0 && s.LossPercent > MaxBlockLossPercent {
		add(ProblemBlockLoss, "%d of %d blocks lost (%.1f %%, more than %.0f %%): the cluster would report them as lost blocks", s.Lost, s.Sent, s.LossPercent, MaxBlockLossPercent)
	}
	return ps
}

// stalledFor is the time a receiver went without data between its first and
// last data (whole intervals with nothing in them), when traffic was
// expected in every interval: TCP, and UDP at a rate of ten or more
// datagrams per interval.
func stalledFor(spec Spec, recv *Side) time.Duration {
	switch spec.Mode {
	case ModeTCP:
	case ModeUDP:
		if spec.Paced() && float64(spec.RateBitsPerSec)/8/float64(spec.Len)*spec.Interval.Seconds() < 10 {
			return 0
		}
	default:
		return 0
	}
	first, last := -1, -1
	for i, in := range recv.Intervals {
		if in.Bytes > 0 {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	var gap time.Duration
	for i := first + 1; first >= 0 && i < last; i++ {
		if in := recv.Intervals[i]; in.Bytes == 0 {
			gap += in.End - in.Start
		}
	}
	return gap
}

// truncatedDetail says what datagrams read short mean: not loss in the
// network, and most likely a sending kernel that ignored UDP_SEGMENT.
func truncatedDetail(spec Spec, s Summary, recv *Side) string {
	d := fmt.Sprintf("the %s read %d datagrams short (larger than any this run sends): counted neither as delivered nor as lost, and not network loss", recv.Role, s.Truncated)
	if s.Joined > 0 {
		d += fmt.Sprintf("; they held %d of the %d datagrams sent, %.0f joined into each: the sending kernel ignored UDP segmentation offload (UDP_SEGMENT needs Linux 4.18; before, it is skipped without an error), so set %s=1 for the sender",
			s.Joined, s.Sent, float64(s.Joined)/float64(s.Truncated), NoGSOEnv)
	} else if spec.Mode == ModeBlocks {
		d += "; a block with such a datagram is lost at the end that read it"
	}
	return d
}
