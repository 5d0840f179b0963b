package traffic

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestLabUDPFlow: unpaced 8 KiB datagrams at MTU 9000, where the sender
// (with segmentation offload) outruns the receiver. With flow control the
// receiver's socket buffer drops nothing, the window is never exceeded
// (counted by the sender against the receiver's reports) and the result
// names the bottleneck; without it (NoFlow) the loss shows how far the
// sender outran the receiver, which is logged, not held: on a quiet
// machine the receiver may keep up.
func TestLabUDPFlow(t *testing.T) {
	l := upPair(t, "t5-flow", 9000, "")
	c, s := place(t, l, "node1"), place(t, l, "node2")
	for _, noFlow := range []bool{false, true} {
		// Without flow control the run only shows the loss (logged): half
		// as long.
		d := map[bool]time.Duration{false: 1500 * time.Millisecond, true: 750 * time.Millisecond}[noFlow]
		f := runLab(t, context.Background(), Spec{Mode: ModeUDP, Duration: d, RateSet: true, Len: 8 << 10, NoFlow: noFlow}, c, s)
		sm := f.Summary
		t.Logf("flow %v: %.2f Gbit/s, sent %d, lost %d (%.3f %%) %+v, flow %+v, cpu sender %.0f%% receiver %.0f%%",
			!noFlow, sm.BitsPerSec/1e9, sm.Sent, sm.Lost, sm.LossPercent, *sm.LossBy, sm.Flow, 100*sm.ClientCost.Utilisation, 100*sm.ServerCost.Utilisation)
		if noFlow {
			if sm.Flow != nil || f.Client.UDP.Flow != nil || f.Server.UDP.FeedbackSent != 0 {
				t.Errorf("no flow control asked, yet %+v, %d feedback", sm.Flow, f.Server.UDP.FeedbackSent)
			}
			continue
		}
		fl := sm.Flow
		if fl == nil || fl.Feedback == 0 || fl.Abandoned != "" || fl.Bottleneck == "" || sm.Sent < 10000 {
			t.Fatalf("flow control: %+v, sent %d", fl, sm.Sent)
		}
		// The receiver's grant: half its 8 MiB buffer at 16640 bytes a
		// datagram (what one unsegmented 8 KiB datagram costs it).
		if want := flowWindow(2*udpBuffer, 8<<10, 9000); fl.Window != want || fl.ReceiveBufferBytes != 2*udpBuffer {
			t.Errorf("window %d of a %d-byte buffer, want %d", fl.Window, fl.ReceiveBufferBytes, want)
		}
		if budget := int64(max(1, fl.Window/8)); fl.MaxInFlight > int64(fl.Window)+budget {
			t.Errorf("%d datagrams in flight, window %d + %d probes", fl.MaxInFlight, fl.Window, budget)
		}
		if sm.LossBy.SocketBuffer > sm.Sent/10000 || f.Server.UDP.FeedbackSent < fl.Feedback {
			t.Errorf("flow control on: %d lost at the receiver's socket buffer of %d sent; feedback sent %d, taken %d",
				sm.LossBy.SocketBuffer, sm.Sent, f.Server.UDP.FeedbackSent, fl.Feedback)
		}
	}
}

// lossyGuard loses feedback at the sender: every every-th datagram it
// opens (every 1: all of them).
type lossyGuard struct{ every, n int }

func (g *lossyGuard) Overhead() int                   { return 0 }
func (g *lossyGuard) Seal([]byte) error               { return nil }
func (g *lossyGuard) Wait(context.Context, int) error { return nil }
func (g *lossyGuard) Hello([]byte) bool               { return false }
func (g *lossyGuard) Open([]byte) error {
	if g.n++; g.n%g.every == 0 {
		return errors.New("lost")
	}
	return nil
}

// TestFlowFeedbackLostLoopback: a sender whose feedback is lost goes on.
// A third lost: the window holds and the probes bring the feedback back.
// All lost (a receiver that never answers): the sender waits no longer
// than flowGiveUp in all, probes at most its budget, then sends unpaced and
// says so.
func TestFlowFeedbackLostLoopback(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: flow feedback lost and timed, 1.2 s")
	}
	// 400 ms: twice flowGiveUp, so that the sender whose feedback is all
	// lost sends unpaced for the second half.
	spec, _ := Spec{Mode: ModeUDP, Duration: 2 * flowGiveUp, RateSet: true, Len: 8 << 10}.Normalize()
	for _, every := range []int{3, 1} {
		cc, sc, err := udpPair(lo, lo)
		if err != nil {
			t.Fatal(err)
		}
		var rs *Side
		done := make(chan struct{})
		go func() {
			defer close(done)
			runtime.LockOSThread()
			rs = ReceiveUDP(context.Background(), spec, sc, Options{})
		}()
		g := &lossyGuard{every: every}
		t0 := time.Now()
		ss := SendUDP(context.Background(), spec, cc, Options{Guard: g})
		<-done
		took := time.Since(t0)
		cc.Close()
		sc.Close()
		f := Summarize(spec, Forward, ss, rs)
		st := ss.UDP.Flow
		t.Logf("every %d feedback lost: %v, %.2f Gbit/s, sent %d, lost %d %+v, %+v, dropped %d, receiver sent %d", every, took.Round(time.Millisecond),
			f.Summary.BitsPerSec/1e9, f.Summary.Sent, f.Summary.Lost, *f.Summary.LossBy, *st, ss.UDP.Foreign, rs.UDP.FeedbackSent)
		if ss.Error != "" || rs.Error != "" || f.Summary.Messages == 0 {
			t.Fatalf("errors %q %q, %d delivered in %v", ss.Error, rs.Error, f.Summary.Messages, took)
		}
		switch every {
		case 1:
			budget := int64(max(1, flowWindow(defaultReceiveBuffer, spec.Len, ss.MTU)/8))
			if !strings.Contains(st.Abandoned, "no feedback") || st.Feedback != 0 || st.Probes > budget ||
				time.Duration(st.WaitNs) > flowGiveUp+100*time.Millisecond {
				t.Errorf("no feedback at all: %+v, probe budget %d", *st, budget)
			}
		default:
			if st.Abandoned != "" || st.Feedback == 0 || ss.UDP.Foreign == 0 {
				t.Errorf("a third of the feedback lost: %+v, %d dropped", *st, ss.UDP.Foreign)
			}
		}
	}
}
