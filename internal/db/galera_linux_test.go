package db

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/mariadb"
	"github.com/interlink/interlink/internal/mariatest"
)

// galeraAlone starts a one-member Galera cluster on loopback, its group
// communication on a port of its own so that tests and labs beside it
// never meet it.
func galeraAlone(t *testing.T, name string) *mariadb.Server {
	t.Helper()
	port, err := mariadb.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	lo := netip.MustParseAddr("127.0.0.1")
	return mariatest.New(t, mariadb.Config{
		Galera: &mariadb.Galera{Cluster: name, Node: name, Address: lo, Members: []netip.Addr{lo}, Bootstrap: true},
		Settings: map[string]string{
			"wsrep_provider_options": fmt.Sprintf(`"gcache.size=32M;gmcast.listen_addr=tcp://127.0.0.1:%d"`, port),
			"wsrep_cluster_address":  fmt.Sprintf("gcomm://127.0.0.1:%d", port),
		},
	})
}

// TestMySQLGaleraStartUnread: a member whose wsrep status cannot be read
// when the run starts (here: its server stalled by SIGSTOP until the load
// begins) is reported by name with the error, and its counters are left
// out of the member's figures and of the sums; read at the end alone they
// would be its counts since the server started (the tables' creation
// included). Its clients' work still counts.
func TestMySQLGaleraStartUnread(t *testing.T) {
	a, b := galeraAlone(t, "g1"), galeraAlone(t, "g2")
	for _, s := range []*mariadb.Server{a, b} {
		run(t, Spec{DSN: s.DSN(), Init: true, TableSize: 1000, Clients: 1, Duration: 100 * time.Millisecond})
	}
	testHookBegin = func() { syscall.Kill(b.PID, syscall.SIGSTOP) }
	t.Cleanup(func() {
		testHookBegin = nil
		syscall.Kill(b.PID, syscall.SIGCONT) // before the server is stopped
	})
	obs := Observer{Start: func(*Result) { syscall.Kill(b.PID, syscall.SIGCONT) }}
	r, err := Run(context.Background(), Spec{DSNs: myDSNs(a, b), Clients: 4, Duration: 2 * time.Second, Interval: 500 * time.Millisecond}, obs)
	if err != nil {
		t.Fatal(err)
	}
	ma, mb := r.Members[0], r.Members[1]
	if ma.Galera == nil || ma.Error != "" || ma.Galera.Replicated <= 0 || ma.Galera.Replicated > ma.Transactions {
		t.Fatalf("the member read at both ends: %+v (galera %+v)", ma, ma.Galera)
	}
	if mb.Galera != nil || !strings.Contains(mb.Error, "at the start") || mb.Transactions <= 0 {
		t.Errorf("the member not read at the start: galera %+v, error %q, %d transactions", mb.Galera, mb.Error, mb.Transactions)
	}
	errs := strings.Join(r.Errors, "\n")
	if !strings.Contains(errs, "server g2 at the start: ") || strings.Contains(errs, "server g1") {
		t.Errorf("errors %q: want g2 at the start, and only it", errs)
	}
	g := r.Galera
	if g == nil || g.Members != 1 || g.WriteSets != ma.Galera.Replicated || g.ReplicatedBytes != ma.Galera.ReplicatedBytes {
		t.Errorf("sums %+v, want member g1's alone (%+v)", g, ma.Galera)
	}
	var text strings.Builder
	WriteHeader(&text, r)
	WriteSummary(&text, r)
	if out := text.String(); !strings.Contains(out, "galera (1 of 2 servers measured)") || !strings.Contains(out, "g2 at the start") {
		t.Errorf("text:\n%s", out)
	}
	t.Logf("g1 %d tx, %d write sets; g2 %d tx; %s", ma.Transactions, ma.Galera.Replicated, mb.Transactions, mb.Error)
}
