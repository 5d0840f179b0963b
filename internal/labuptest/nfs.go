package labuptest

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/lab"
	"github.com/interlink/interlink/internal/lab/service"
)

// NFS starts nfs-ganesha on node n of a lab the test brought up, serving a
// t.TempDir over NFSv3 at addr, and stops it (by PID) in t.Cleanup. A
// machine without ganesha fails the test with the install command.
func NFS(t testing.TB, n *lab.Node, addr netip.Addr) *service.NFSServer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := service.StartNFS(ctx, n, addr, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Stop(); err != nil {
			t.Error(err)
		}
	})
	return srv
}
