package db

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

// TestMySQLGaleraEndUnread: a member whose wsrep status cannot be read
// when the run ends (its server gone: a loopback port nothing listens
// on) has no Galera figures (not the start's states with zero counts),
// an error naming the end, and is left out of the sums; a member read at
// both ends is summed.
func TestMySQLGaleraEndUnread(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := ln.Addr().String()
	ln.Close()
	targets, err := parseMySQL([]string{"mysql://root@" + gone + "/test"}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	m, err := newMember(targets[0])
	if err != nil {
		t.Fatal(err)
	}
	defer m.db.Close()
	st := map[string]string{"wsrep_local_state_comment": "Synced", "wsrep_cluster_size": "2", "wsrep_replicated": "100"}
	e := &myEngine{members: []*member{m}, galera: true, before: []map[string]string{st}}
	start := galeraDelta(st, st)
	res := &Result{Duration: time.Second, Members: []Member{{Name: "g2", Galera: &start}}}
	e.end(context.Background(), res)
	r := res.Members[0]
	if r.Galera != nil || !strings.HasPrefix(r.Error, "status not read at the end, counters left out: ") {
		t.Errorf("member: galera %+v, error %q", r.Galera, r.Error)
	}
	if len(res.Errors) != 1 || !strings.HasPrefix(res.Errors[0], "server g2 at the end: ") || !strings.Contains(res.Errors[0], gone) {
		t.Errorf("errors %q", res.Errors)
	}
	if res.Galera == nil || res.Galera.Members != 0 || res.Galera.WriteSets != 0 {
		t.Errorf("sums %+v: want no member summed", res.Galera)
	}
}
