package traffic

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// Figures an end or a mode has no such thing as are absent from the JSON,
// not 0: a TCP flow's messages and loss (its summary read "messages": 0
// beside 4472 writes), a UDP sender's receive counts. A receiver's true
// zeros (nothing lost) stay.
func TestAbsentJSON(t *testing.T) {
	tcp, _ := Spec{Mode: ModeTCP}.Normalize()
	snd := &Side{Role: RoleSender, Duration: time.Second, Bytes: 1 << 30, Messages: 8192, Streams: []Stream{{Bytes: 1 << 30, Retransmits: 3}}}
	rcv := &Side{Role: RoleReceiver, Duration: time.Second, Bytes: 1 << 30}
	js, err := json.Marshal(Summarize(tcp, Forward, snd, rcv).Summary)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"messages"`, `"messages_per_sec"`, `"lost"`, `"loss_percent"`} {
		if strings.Contains(string(js), k) {
			t.Errorf("tcp summary has %s: %s", k, js)
		}
	}
	if !strings.Contains(string(js), `"retransmits":3`) || !strings.Contains(string(js), `"bits_per_sec"`) {
		t.Errorf("tcp summary lost its figures: %s", js)
	}

	// Nothing delivered: no CPU per GiB (it read 0, the cheapest run).
	none, _ := json.Marshal(Summarize(tcp, Forward, snd, &Side{Role: RoleReceiver, Duration: time.Second}).Summary)
	if strings.Contains(string(none), "_per_gib") {
		t.Errorf("nothing delivered, yet a cost per GiB: %s", none)
	}
	var text strings.Builder
	empty := &Report{Peer: "p", Result: &Result{Spec: tcp, Flows: []Flow{Summarize(tcp, Forward, snd, &Side{Role: RoleReceiver, Duration: time.Second})}}}
	if err := empty.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text.String(), "per GiB 0 ms") || !strings.Contains(text.String(), "per GiB n/a cpu") {
		t.Errorf("nothing delivered:\n%s", text.String())
	}

	// A TCP receiver counts no messages, nor does a TCP end per interval.
	rcv.Streams = []Stream{{Bytes: 1 << 30}}
	rcv.Intervals = []Interval{{End: time.Second, Bytes: 1 << 30}}
	snd.Intervals = rcv.Intervals
	ends, _ := json.Marshal(Summarize(tcp, Forward, snd, rcv))
	var sides struct {
		Client, Server struct {
			Messages  *int64
			Intervals []map[string]any
		}
	}
	if err := json.Unmarshal(ends, &sides); err != nil {
		t.Fatal(err)
	}
	if sides.Server.Messages != nil || sides.Client.Messages == nil || *sides.Client.Messages != 8192 {
		t.Errorf("tcp ends: receiver messages %v, sender writes %v", sides.Server.Messages, sides.Client.Messages)
	}
	for _, in := range append(sides.Client.Intervals, sides.Server.Intervals...) {
		if _, ok := in["messages"]; ok || in["bytes"] == nil {
			t.Errorf("tcp interval: %v", in)
		}
	}

	udp, _ := Spec{Mode: ModeUDP, Len: 8192}.Normalize()
	usnd := &Side{Role: RoleSender, Duration: time.Second, Messages: 10, UDP: &UDPStats{Sent: 10}}
	urcv := &Side{Role: RoleReceiver, Duration: time.Second, Messages: 10, Bytes: 81920, UDP: &UDPStats{Received: 10}}
	f := Summarize(udp, Forward, usnd, urcv)
	js, _ = json.Marshal(f)
	var back struct {
		Client  struct{ UDP map[string]any } `json:"client"`
		Server  struct{ UDP map[string]any } `json:"server"`
		Summary map[string]any               `json:"summary"`
	}
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"received", "lost", "reordered", "duplicates", "jitter_ns"} {
		if _, ok := back.Client.UDP[k]; ok {
			t.Errorf("udp sender has %s: %v", k, back.Client.UDP)
		}
	}
	if back.Client.UDP["sent"] != 10.0 || back.Server.UDP["lost"] != 0.0 || back.Summary["lost"] != 0.0 || back.Summary["messages"] != 10.0 {
		t.Errorf("udp figures lost: client %v, server %v, summary lost %v messages %v", back.Client.UDP, back.Server.UDP, back.Summary["lost"], back.Summary["messages"])
	}
}

// A saved result read back (report, diff, drift) encodes as it was saved:
// a TCP summary gains no zero messages or loss, a UDP one keeps its zeros.
func TestAbsentJSONRoundTrip(t *testing.T) {
	tcp, _ := Spec{Mode: ModeTCP}.Normalize()
	udp, _ := Spec{Mode: ModeUDP, Len: 8192}.Normalize()
	for _, f := range []Flow{
		Summarize(tcp, Forward, &Side{Role: RoleSender, Duration: time.Second, Bytes: 1 << 30, Messages: 8192, Streams: []Stream{{Bytes: 1 << 30}}},
			&Side{Role: RoleReceiver, Duration: time.Second, Bytes: 1 << 30, Streams: []Stream{{Bytes: 1 << 30}}}),
		Summarize(udp, Forward, &Side{Role: RoleSender, Duration: time.Second, Messages: 10, UDP: &UDPStats{Sent: 10}},
			&Side{Role: RoleReceiver, Duration: time.Second, UDP: &UDPStats{}}),
	} {
		saved, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		var back Flow
		if err := json.Unmarshal(saved, &back); err != nil {
			t.Fatal(err)
		}
		if again, _ := json.Marshal(back); string(again) != string(saved) {
			t.Errorf("flow (stream %v) re-encoded differs:\nsaved %s\nagain %s", f.Summary.stream, saved, again)
		}
	}
}
