//go:build linux

package labtest

import (
	"context"
	"testing"
	"time"

	agentpkg "github.com/interlink/interlink/internal/agent"
	"github.com/interlink/interlink/internal/pmtu"
)

// benchPMTU measures a two-way test from node1 to node2's agent in a lab,
// in-process inside node1, and reports the time per direction.
func benchPMTU(b *testing.B, builtin, suffix string, wantVerdict pmtu.Verdict) {
	l := up(b, builtin, "", suffix)
	n1, n2 := node(b, l, "node1"), node(b, l, "node2")
	agent(b, n2, "198.18.10.2", tokenFile(b, "token", token))
	var perDir []time.Duration
	b.ResetTimer()
	for range b.N {
		err := n1.Do(func() error {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			c, err := agentpkg.Dial(ctx, "198.18.10.2", []byte(token), agentpkg.DialOptions{})
			if err != nil {
				return err
			}
			defer c.Close()
			rs, err := c.PMTU(ctx, agentpkg.PMTUOptions{})
			for _, r := range rs {
				if r.Verdict != wantVerdict {
					b.Errorf("%s: %s %d, want %s", r.Direction, r.Verdict, r.PathMTU, wantVerdict)
				}
				perDir = append(perDir, r.Elapsed)
			}
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	var worst, sum time.Duration
	for _, d := range perDir {
		sum += d
		worst = max(worst, d)
	}
	b.ReportMetric(sum.Seconds()/float64(len(perDir)), "s/direction")
	b.ReportMetric(worst.Seconds(), "worst-s/direction")
}

// Healthy 9000 path: the exact answer, target under 2 s per direction.
func BenchmarkPMTUHealthy(b *testing.B) { benchPMTU(b, "jumbo", "bjumbo", pmtu.OK) }

// Switch port at 1500: the blackhole verdict, target under 5 s.
func BenchmarkPMTUBlackhole(b *testing.B) { benchPMTU(b, "blackhole", "bbh", pmtu.Blackhole) }
