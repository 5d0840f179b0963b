//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// The peer tools, run as their users run them: iperf3 -s / -c, sockperf
// server / ping-pong.

// iperf3 runs one iperf3 test from node1 to node2 and returns the parsed
// end of its JSON report.
func iperf3(p *pair, args ...string) (*iperfEnd, error) {
	var out bytes.Buffer
	srv, err := start(p.n2, &out, "iperf3", "-s", "-1", "-p", "5201", "-B", p.a2.String())
	if err != nil {
		return nil, err
	}
	defer stop(srv)
	time.Sleep(200 * time.Millisecond)
	secs := strconv.FormatFloat(duration.Seconds(), 'f', -1, 64)
	b, err := runIn(p.n1, *duration+10*time.Second, "iperf3", append([]string{"-c", p.a2.String(), "-p", "5201", "-t", secs, "-J"}, args...)...)
	if err != nil {
		return nil, err
	}
	var r struct {
		End   iperfEnd `json:"end"`
		Error string   `json:"error"`
	}
	// iperf3 prints warnings (fragmentation ahead) before its JSON.
	if i := bytes.IndexByte(b, '{'); i > 0 {
		b = b[i:]
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("iperf3 output: %w", err)
	}
	if r.Error != "" {
		return nil, fmt.Errorf("iperf3: %s", r.Error)
	}
	return &r.End, nil
}

type iperfSum struct {
	Seconds     float64 `json:"seconds"`
	BitsPerSec  float64 `json:"bits_per_second"`
	Packets     int64   `json:"packets"`
	LostPackets int64   `json:"lost_packets"`
	LostPercent float64 `json:"lost_percent"`
}

type iperfCPU struct {
	HostTotal   float64 `json:"host_total"`
	RemoteTotal float64 `json:"remote_total"`
}

type iperfEnd struct {
	CPU         iperfCPU `json:"cpu_utilization_percent"`
	Sum         iperfSum `json:"sum"`
	SumReceived iperfSum `json:"sum_received"`
}

// sockperfRTT runs sockperf ping-pong with msg-byte messages, mps of them
// a second ("max": back to back), and returns the median round trip:
// sockperf reports half round trips.
func sockperfRTT(p *pair, msg int, mps string) (float64, error) {
	var out bytes.Buffer
	srv, err := start(p.n2, &out, "sockperf", "sr", "-i", p.a2.String(), "-p", "11111")
	if err != nil {
		return 0, err
	}
	defer stop(srv)
	time.Sleep(200 * time.Millisecond)
	secs := strconv.Itoa(max(1, int(duration.Seconds())))
	b, err := runIn(p.n1, *duration+10*time.Second, "sockperf", "pp", "-i", p.a2.String(), "-p", "11111", "-m", strconv.Itoa(msg), "-t", secs, "--mps="+mps)
	if err != nil {
		return 0, err
	}
	m := regexp.MustCompile(`percentile 50\.000 =\s*([0-9.]+)`).FindSubmatch(b)
	if m == nil {
		return 0, fmt.Errorf("sockperf: no median in output: %s", lastLine(string(b)))
	}
	half, _ := strconv.ParseFloat(string(m[1]), 64)
	return 2 * half * 1e3, nil // ns
}

func (e *iperfEnd) cpu() string {
	return fmt.Sprintf("(cpu: sender %.0f%%, receiver %.0f%% of a core)", e.CPU.HostTotal, e.CPU.RemoteTotal)
}
