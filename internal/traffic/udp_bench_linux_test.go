package traffic

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"golang.org/x/net/ipv4"
)

// sinkConn takes every batch whole and cancels the run once it holds want
// datagrams of segs each (a UDP sender's loop with no kernel under it).
type sinkConn struct {
	segs, want, got int
	cancel          func()
}

func (c *sinkConn) WriteBatch(ms []ipv4.Message, _ int) (int, error) {
	if c.got += len(ms) * c.segs; c.got >= c.want {
		c.cancel()
	}
	return len(ms), nil
}
func (c *sinkConn) ReadBatch([]ipv4.Message, int) (int, error) { return 0, os.ErrDeadlineExceeded }
func (c *sinkConn) ReadNow([]ipv4.Message) (int, error)        { return 0, os.ErrDeadlineExceeded }
func (c *sinkConn) SetReadDeadline(time.Time) error            { return nil }

// BenchmarkUDPSendLoop is the unpaced UDP sender's loop per datagram
// (udpSender.run: its header, its share of a batch and of a sendmmsg),
// with segmentation offload at MTU 1500 and without: 0 allocs/op.
func BenchmarkUDPSendLoop(b *testing.B) {
	for _, mtu := range []int{1500, 0} {
		b.Run(fmt.Sprintf("1400B-mtu%d", mtu), func(b *testing.B) {
			spec, err := Spec{Mode: ModeUDP, Duration: time.Minute, RateSet: true, NoFlow: true, Len: 1400}.Normalize()
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			c := &sinkConn{want: b.N, cancel: cancel}
			var s udpSender
			start := time.Now()
			s.init(spec, mtu, c, Options{}, start)
			c.segs = s.lay.segs
			b.ReportAllocs()
			b.ResetTimer()
			if _, err := s.run(ctx, start, start.Add(spec.Duration)); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if int(s.seq) < b.N {
				b.Fatalf("sent %d of %d", s.seq, b.N)
			}
		})
	}
}
