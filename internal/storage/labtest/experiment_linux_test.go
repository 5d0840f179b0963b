package labtest

import (
	"strconv"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/storage"
)

// The articles' experiments on one machine (run with
// `flock /work/.labtest.lock go test -run X -bench . -benchtime 1x ./internal/storage/labtest/`):
// the install profile under the five option sets, and a 200 MB write at
// MTU 1500 and 9000, the link shaped to 1 Gbit/s both ways.

func report(b *testing.B, label string, r *storage.Result) {
	s := r.Steps[0]
	var bytes int64
	for _, o := range s.Ops {
		bytes += o.Bytes
	}
	var total uint64
	for _, p := range r.Emulation.RPC {
		total += p.Calls
	}
	b.Logf("%-28s %7.2f s  %6.1f MB/s  %-36s GETATTR %6d  WRITE %6d  COMMIT %5d  all RPCs %6d",
		label, time.Duration(s.Duration).Seconds(), float64(bytes)/time.Duration(s.Duration).Seconds()/1e6, s.Name,
		calls(r, "GETATTR"), calls(r, "WRITE"), calls(r, "COMMIT"), total)
}

func BenchmarkInstallOptionSets(b *testing.B) {
	n, srv := up(b, 1500, "1gbit")
	url := "nfs://" + srv.Addr.String() + srv.Path
	for _, opts := range []string{"defaults", "actimeo=0", "forcedirectio,actimeo=0", "forcedirectio,noac", "noac"} {
		r := run(b, n, storage.Spec{Profile: storage.Install, Path: url, Emulate: "rw,hard,vers=3,tcp,rsize=65536,wsize=65536," + opts,
			SizeBytes: 64 << 20, Time: 5 * time.Minute})
		report(b, opts, r)
	}
}

func BenchmarkWrite200MBMTU(b *testing.B) {
	for _, mtu := range []int{1500, 9000} {
		b.Run("mtu"+strconv.Itoa(mtu), func(b *testing.B) {
			n, srv := up(b, mtu, "1gbit")
			url := "nfs://" + srv.Addr.String() + srv.Path
			for _, profile := range []storage.Profile{storage.Mkfile, storage.Backup} {
				r := run(b, n, storage.Spec{Profile: profile, Path: url, Emulate: "rw,hard,vers=3,tcp,rsize=1048576,wsize=1048576",
					SizeBytes: 200 << 20, Time: 5 * time.Minute})
				report(b, "MTU "+strconv.Itoa(mtu)+" "+string(profile), r)
			}
		})
	}
}
