package storm

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/gate"
	"github.com/interlink/interlink/internal/mariadb"
	"github.com/interlink/interlink/internal/mariatest"
)

// TestStormMySQL storms a MariaDB whose max_connections is 20 with 40
// clients that hold their connection: about half are refused with "Too
// many connections" (its account may use one more, as a SUPER user); a
// wrong password fails as authentication; through a gate admitting 20 a
// second after a burst of 5 (at most 15 hold a connection at once), every
// client logs on.
func TestStormMySQL(t *testing.T) {
	s := mariatest.New(t, mariadb.Config{Settings: map[string]string{"max_connections": "20"}})
	target := "127.0.0.1:" + itoa(s.Port)
	spec := Spec{Target: target, Clients: 40, Protocol: MySQL, User: s.SQLUser, Password: s.Password, Hold: 500 * time.Millisecond, Timeout: 20 * time.Second}
	r, err := Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if r.LoggedOn < 15 || r.LoggedOn > 21 || r.Errors[KindTooMany] != r.Failed || r.Failed+r.LoggedOn != 40 {
		t.Errorf("direct: %d logged on, %d failed: %v", r.LoggedOn, r.Failed, r.Errors)
	}
	// MySQL's server speaks first: the first byte precedes the logon.
	for _, c := range r.Clients {
		if c.Error == "" && !(c.ConnectNs <= c.FirstNs && c.FirstNs < c.LogonNs) {
			t.Errorf("client %+v: connect, first byte and logon out of order", c)
			break
		}
	}
	bad := spec
	bad.Password, bad.Clients, bad.Hold = "wrong", 3, 0
	if r, _ := Run(context.Background(), bad); r.Errors[KindAuth] != 3 || strings.Contains(strings.Join(details(r), " "), s.Password) {
		t.Errorf("wrong password: %v", r.Errors)
	}

	g, err := gate.New([]gate.Route{{Name: "db", Listen: "127.0.0.1:0", Upstream: target,
		Limits: gate.Limits{RatePerSec: 20, Burst: 5, Queue: 100, PerSource: 100}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { g.Serve(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	spec.Target = g.Addr("db").String()
	r, err = Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if r.LoggedOn != 40 || r.Failed != 0 {
		t.Errorf("through the gate: %d logged on, %d failed: %v", r.LoggedOn, r.Failed, r.Errors)
	}
}

func details(r *Result) []string {
	var out []string
	for _, c := range r.Clients {
		out = append(out, c.Detail)
	}
	return out
}

func itoa(i int) string { return strconv.Itoa(i) }
