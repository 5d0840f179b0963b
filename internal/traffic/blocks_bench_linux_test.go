package traffic

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"
)

// BenchmarkLoopbackBlocks measures the blocks hot loops (requester and
// responder) on loopback: each iteration is one 200 ms run. A run has no
// fixed block count, so ns/op is a run's wall time and says nothing; the
// figures are the custom metrics: round trip (p50), blocks a second, CPU
// per block at each end and heap allocations per block (the whole
// process's during the run, setup included, over the blocks completed:
// well under 1 when the loops allocate nothing per block).
func BenchmarkLoopbackBlocks(b *testing.B) {
	for _, c := range []struct{ block, outstanding int }{{8 << 10, 1}, {8 << 10, 8}, {1 << 20, 2}} {
		b.Run(fmt.Sprintf("%dKiB-x%d", c.block>>10, c.outstanding), func(b *testing.B) {
			spec := Spec{Mode: ModeBlocks, Duration: 200 * time.Millisecond, Block: c.block, Outstanding: c.outstanding}
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
