package traffic

import "encoding/json"

// MarshalJSON leaves out of a sender's stats what only a receiver counts
// (received, lost, reordered, duplicates, jitter): a sender has no such
// figure, and 0 would read as one. A sender is the end that sent (Sent is
// never set by a receiver).
func (u UDPStats) MarshalJSON() ([]byte, error) {
	type plain UDPStats // without this method
	if u.Sent == 0 {
		return json.Marshal(plain(u))
	}
	return json.Marshal(struct {
		plain
		Received   *int64 `json:"received,omitempty"`
		Lost       *int64 `json:"lost,omitempty"`
		Reordered  *int64 `json:"reordered,omitempty"`
		Duplicates *int64 `json:"duplicates,omitempty"`
		Jitter     *int64 `json:"jitter_ns,omitempty"`
	}{plain: plain(u)})
}

// MarshalJSON leaves out of a TCP flow's summary the figures a stream has
// no such thing as: messages delivered (and per second) and messages lost
// (the text and HTML show retransmits instead). Summarize marks a TCP
// flow's summary.
func (s Summary) MarshalJSON() ([]byte, error) {
	type plain Summary // without this method
	if !s.stream {
		return json.Marshal(plain(s))
	}
	return json.Marshal(struct {
		plain
		Messages    *int64   `json:"messages,omitempty"`
		PerSec      *float64 `json:"messages_per_sec,omitempty"`
		Lost        *int64   `json:"lost,omitempty"`
		LossPercent *float64 `json:"loss_percent,omitempty"`
	}{plain: plain(s)})
}

// streamInterval is an interval of a TCP end: a stream has no messages.
type streamInterval struct {
	Interval
	Messages *int64 `json:"messages,omitempty"`
}

// MarshalJSON leaves out of a TCP end (one with streams) the message counts
// it does not keep: its intervals' and, at the receiver, its own (a
// sender's count of writes stays).
func (s Side) MarshalJSON() ([]byte, error) {
	type plain Side // without this method
	if len(s.Streams) == 0 {
		return json.Marshal(plain(s))
	}
	ivs := make([]streamInterval, len(s.Intervals))
	for i, in := range s.Intervals {
		ivs[i].Interval = in
	}
	var writes *int64
	if s.Messages > 0 {
		writes = &s.Messages
	}
	return json.Marshal(struct {
		plain
		Messages  *int64           `json:"messages,omitempty"`
		Intervals []streamInterval `json:"intervals"`
	}{plain(s), writes, ivs})
}

// UnmarshalJSON marks a summary whose JSON has no messages as a TCP
// flow's (MarshalJSON leaves them out of one), so a saved result read back
// (report, diff, drift) encodes as it was saved, not with zeros.
func (s *Summary) UnmarshalJSON(b []byte) error {
	type plain Summary // without this method
	var v struct {
		plain
		Messages *int64 `json:"messages"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = Summary(v.plain)
	if v.Messages != nil {
		s.Messages = *v.Messages
	}
	s.stream = v.Messages == nil
	return nil
}
