package db

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/pgtest"
)

var pgbenchTPS = regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)

// BenchmarkVsPgbench runs pgbench -M prepared and interlink db bench
// against the same throwaway server, alternating (the order flips every
// round), at the same settings: each b.N round is one pair of 2 s runs
// with 4 clients. It reports both medians and the median of the per-round
// ratios (interlink / pgbench; >= 1 means interlink is at least as fast).
// fsync is off so the comparison measures the client and the server's CPU
// path, not the disk.
func BenchmarkVsPgbench(b *testing.B) {
	pg := pgtest.New(b, pgtest.Config{Settings: fast})
	dsn := pg.DSN("postgres")
	if _, err := Run(context.Background(), Spec{DSN: dsn, Init: true, Clients: 1, Duration: 100 * time.Millisecond}, Observer{}); err != nil {
		b.Fatal(err)
	}
	const clients, secs = 4, 2
	for _, w := range []struct {
		work Workload
		flag string
	}{{TPCB, ""}, {SelectOnly, "-S"}} {
		b.Run(string(w.work), func(b *testing.B) {
			var ours, theirs, ratios []float64
			for i := 0; i < b.N; i++ {
				var o, p float64
				for k := 0; k < 2; k++ {
					if (i+k)%2 == 0 {
						r, err := Run(context.Background(), Spec{DSN: dsn, Workload: w.work, Clients: clients, Duration: secs * time.Second}, Observer{})
						if err != nil || r.Failed.Total > 0 {
							b.Fatalf("interlink: %v %+v", err, r.Failed)
						}
						o = r.TPS
					} else {
						p = pgbench(b, pg, w.flag, clients, secs)
					}
				}
				ours, theirs, ratios = append(ours, o), append(theirs, p), append(ratios, o/p)
			}
			b.ReportMetric(median(ours), "interlink-tps")
			b.ReportMetric(median(theirs), "pgbench-tps")
			b.ReportMetric(median(ratios), "ratio")
		})
	}
}

func pgbench(b *testing.B, pg *pgtest.Server, flag string, clients, secs int) float64 {
	args := []string{"-M", "prepared", "-c", strconv.Itoa(clients), "-j", "1", "-T", strconv.Itoa(secs), "-n"}
	if flag != "" {
		args = append(args, flag)
	}
	cmd := exec.Command(filepath.Join(pg.BinDir, "pgbench"), append(args, "postgres")...)
	cmd.Env = append(os.Environ(), pg.Env()...)
	out, err := cmd.CombinedOutput()
	m := pgbenchTPS.FindSubmatch(out)
	if err != nil || m == nil {
		b.Fatalf("pgbench: %v: %s", err, out)
	}
	v, _ := strconv.ParseFloat(string(m[1]), 64)
	return v
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
