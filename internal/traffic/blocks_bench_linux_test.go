package traffic

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"golang.org/x/net/ipv4"
)

// BenchmarkLoopbackBlocks measures the blocks hot loops (requester and
// responder) on loopback: each iteration is one 200 ms run. A run has no
// fixed block count, so ns/op is a run's wall time and says nothing; the
// figures are the custom metrics: round trip (p50), blocks a second, CPU
// per block at each end and heap allocations per block (the whole
// process's during the run, setup included, over the blocks completed:
// well under 1 when the loops allocate nothing per block). The nosplit
// case is the first without the round trip's split: what the split costs.
func BenchmarkLoopbackBlocks(b *testing.B) {
	for _, c := range []struct {
		block, outstanding int
		nosplit            bool
	}{{8 << 10, 1, false}, {8 << 10, 1, true}, {8 << 10, 8, false}, {1 << 20, 2, false}} {
		name := fmt.Sprintf("%dKiB-x%d", c.block>>10, c.outstanding)
		if c.nosplit {
			name += "-nosplit"
		}
		b.Run(name, func(b *testing.B) {
			spec := Spec{Mode: ModeBlocks, Duration: 200 * time.Millisecond, Block: c.block, Outstanding: c.outstanding, NoSplit: c.nosplit}
			var blocks, mallocs, p50 int64
			var reqCPU, respCPU float64
			var ms runtime.MemStats
			for i := 0; i < b.N; i++ {
				runtime.ReadMemStats(&ms)
				before := ms.Mallocs
				res, err := RunLocal(context.Background(), spec, lo, lo, nil)
				if err != nil {
					b.Fatal(err)
				}
				runtime.ReadMemStats(&ms)
				f := res.Flows[0]
				s := f.Summary
				if f.Client.Error != "" || f.Server.Error != "" || s.Messages == 0 || s.RTT == nil {
					b.Fatalf("run: client %q server %q, %d blocks", f.Client.Error, f.Server.Error, s.Messages)
				}
				blocks += s.Messages
				mallocs += int64(ms.Mallocs - before)
				p50 += s.RTT.P50
				reqCPU += float64(s.ClientCost.CPUNs)
				respCPU += float64(s.ServerCost.CPUNs)
			}
			b.ReportMetric(float64(p50)/float64(b.N), "p50-ns")
			b.ReportMetric(float64(blocks)/(float64(b.N)*spec.Duration.Seconds()), "blocks/s")
			b.ReportMetric(reqCPU/float64(blocks), "req-cpu-ns/block")
			b.ReportMetric(respCPU/float64(blocks), "resp-cpu-ns/block")
			b.ReportMetric(float64(mallocs)/float64(blocks), "allocs/block")
		})
	}
}

// The loop benchmarks run one end's loop against an in-memory conn that
// answers at once, so they measure the loop's own work per block (parsing,
// slots, histograms, batching; no system call) and its allocations per
// block (allocs/op: 0 when the loop allocates nothing per block).
// BenchmarkLoopbackBlocks measures the same loops on real sockets.

// echoConn plays the responder to a requester: each request written is
// answered on the next reads by its block's chunks, in order; after want
// blocks it calls cancel. Requests wait in a ring (at most Outstanding).
type echoConn struct {
	sizes        []int // each chunk's datagram size
	ring         [1024]uint64
	head, tail   int
	chunk        int
	blocks, want int
	cancel       func()
}

func (c *echoConn) WriteBatch(ms []ipv4.Message, _ int) (int, error) {
	var h Header
	for i := range ms {
		if err := h.Parse(ms[i].Buffers[0]); err != nil {
			return i, err
		}
		c.ring[c.tail%len(c.ring)] = h.Seq
		c.tail++
	}
	return len(ms), nil
}

func (c *echoConn) ReadBatch(ms []ipv4.Message, _ int) (int, error) {
	n := 0
	for ; n < len(ms) && c.head < c.tail && c.blocks < c.want; n++ {
		h := Header{Kind: KindResponse, Seq: c.ring[c.head%len(c.ring)], Chunks: uint16(len(c.sizes)), Chunk: uint16(c.chunk)}
		h.Put(ms[n].Buffers[0])
		ms[n].N, ms[n].Flags = c.sizes[c.chunk], 0
		if c.chunk++; c.chunk == len(c.sizes) {
			c.chunk = 0
			c.head++
			if c.blocks++; c.blocks == c.want {
				c.cancel()
			}
		}
	}
	if n == 0 {
		return 0, os.ErrDeadlineExceeded
	}
	return n, nil
}

func (c *echoConn) ReadNow(ms []ipv4.Message) (int, error) { return c.ReadBatch(ms, 0) }
func (c *echoConn) SetReadDeadline(time.Time) error        { return nil }

// askConn plays the requester to a responder: its reads return want
// requests (as many a read as fit), then the end marker; its writes take
// every response.
type askConn struct {
	spec    Spec
	nchunks int
	seq     uint64
	want    int
	ended   bool
	written int
}

func (c *askConn) ReadBatch(ms []ipv4.Message, _ int) (int, error) {
	n := 0
	for ; n < len(ms) && int(c.seq) < c.want; n++ {
		c.seq++
		(&Header{Kind: KindRequest, Seq: c.seq, Size: uint32(c.spec.Block), Chunks: uint16(c.nchunks)}).Put(ms[n].Buffers[0])
		ms[n].N, ms[n].Flags = c.spec.Request, 0
	}
	if n == 0 && !c.ended {
		c.ended = true
		(&Header{Kind: KindEnd, Seq: c.seq}).Put(ms[0].Buffers[0])
		ms[0].N, ms[0].Flags = HeaderLen, 0
		n = 1
	}
	if n == 0 {
		return 0, os.ErrDeadlineExceeded
	}
	return n, nil
}

func (c *askConn) WriteBatch(ms []ipv4.Message, _ int) (int, error) {
	c.written += len(ms)
	return len(ms), nil
}

func (c *askConn) ReadNow(ms []ipv4.Message) (int, error) { return c.ReadBatch(ms, 0) }
func (c *askConn) SetReadDeadline(time.Time) error        { return nil }

func loopSpecs(b *testing.B) []Spec {
	var specs []Spec
	for _, c := range []struct{ block, outstanding int }{{8 << 10, 1}, {8 << 10, 8}, {1 << 20, 2}} {
		spec, err := Spec{Mode: ModeBlocks, Duration: time.Minute, Block: c.block, Outstanding: c.outstanding}.Normalize()
		if err != nil {
			b.Fatal(err)
		}
		specs = append(specs, spec)
	}
	return specs
}

func BenchmarkRequestLoop(b *testing.B) {
	for _, spec := range loopSpecs(b) {
		b.Run(fmt.Sprintf("%dKiB-x%d", spec.Block>>10, spec.Outstanding), func(b *testing.B) {
			_, sizes := chunking(spec.Block, 0)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			c := &echoConn{sizes: sizes, want: b.N, cancel: cancel}
			side := &Side{Blocks: &BlockStats{}}
			b.ReportAllocs()
			b.ResetTimer()
			if _, err := requestOn(ctx, spec, c, side, Options{}, nil); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if side.Blocks.Completed != int64(b.N) || side.Blocks.Lost != 0 || side.Blocks.Foreign != 0 {
				b.Fatalf("%d blocks asked, %+v", b.N, *side.Blocks)
			}
		})
	}
}

func BenchmarkRespondLoop(b *testing.B) {
	for _, spec := range loopSpecs(b) {
		b.Run(fmt.Sprintf("%dKiB-x%d", spec.Block>>10, spec.Outstanding), func(b *testing.B) {
			nchunks, _ := chunking(spec.Block, 0)
			c := &askConn{spec: spec, nchunks: nchunks, want: b.N}
			side := &Side{Blocks: &BlockStats{}}
			b.ReportAllocs()
			b.ResetTimer()
			if _, err := respondOn(context.Background(), spec, c, side, Options{}, nil); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if side.Blocks.Completed != int64(b.N) || c.written != b.N*nchunks || side.Blocks.Foreign != 0 {
				b.Fatalf("%d blocks asked, %d datagrams written, %+v", b.N, c.written, *side.Blocks)
			}
		})
	}
}
