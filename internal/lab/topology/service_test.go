package topology

import (
	"errors"
	"strings"
	"testing"
)

func TestServicesBuiltinPG(t *testing.T) {
	top, err := Load("pg")
	if err != nil {
		t.Fatal(err)
	}
	if err := top.Validate(); err != nil {
		t.Fatal(err)
	}
	by := map[string]*NodeSpec{}
	for i := range top.Nodes {
		by[top.Nodes[i].Name] = &top.Nodes[i]
	}
	p, s, c := by["primary"].Service(KindPostgres), by["standby"].Service(KindPostgres), by["client"]
	if p == nil || p.Role != RolePrimary || p.Port != PostgresPort {
		t.Fatalf("primary: %+v", p)
	}
	if s == nil || s.Role != RoleStandby || s.Primary != "primary" || s.Via != "ic" || !s.Sync || s.Port != PostgresPort {
		t.Fatalf("standby: %+v", s)
	}
	if c == nil || c.Service(KindPostgres) != nil || c.Service(KindAgent) == nil || c.Service(KindAgent).Port != AgentPort {
		t.Fatalf("client: %+v", c)
	}
	if got := top.SyncStandbys("primary"); len(got) != 1 || got[0] != "standby" {
		t.Fatalf("synchronous standbys of primary: %v", got)
	}
}

func TestServicesDefaults(t *testing.T) {
	top, err := Parse("t.yaml", []byte(`name: t
switches: {a: {}, b: {}}
nodes:
  p:
    links: [{switch: a, address: 10.0.0.1/24}, {switch: b, address: 10.1.0.1/24}]
    services: [{kind: primary}]
  s:
    links: [{switch: b, address: 10.1.0.2/24}, {switch: a, address: 10.0.0.2/24}]
    services: [{kind: standby, primary: p, sync: false, port: 6000}]
`))
	if err != nil {
		t.Fatal(err)
	}
	s := top.Nodes[1].Services[0]
	// "kind: standby" is PostgreSQL; via defaults to the standby's first
	// switch the primary is on too.
	if s.Kind != KindPostgres || s.Role != RoleStandby || s.Via != "b" || s.Sync || s.Port != 6000 {
		t.Fatalf("standby: %+v", s)
	}
	if names := top.SyncStandbys("p"); len(names) != 0 {
		t.Fatalf("asynchronous standby counted as synchronous: %v", names)
	}
}

func TestServicesBad(t *testing.T) {
	head := "name: t\nswitches: {a: {}, b: {}}\nnodes:\n  p:\n    links: [{switch: a, address: 10.0.0.1/24}]\n    services: [{kind: primary}]\n  q:\n    links: [{switch: a, address: 10.0.0.2/24}]\n"
	for _, tc := range []struct{ services, want string }{
		{`[{kind: smb}]`, `:9: nodes.q.services[0]: unknown kind "smb"`},
		{`[{kind: nfs, port: 2050}]`, `:9: nodes.q.services[0]: an nfs service listens on 2049`},
		{`[{kind: nfs, role: primary}]`, `:9: nodes.q.services[0]: an nfs service takes only kind`},
		{`[{role: primary}]`, "missing kind"},
		{`[{kind: postgres}]`, "missing role"},
		{`[{kind: postgres, role: leader}]`, `role "leader"`},
		{`[{kind: standby}]`, "a standby needs primary"},
		{`[{kind: standby, primary: x}]`, `primary "x" is not another node`},
		{`[{kind: standby, primary: q}]`, `primary "q" is not another node`},
		{`[{kind: primary, via: a}]`, "a primary takes no primary, via or sync"},
		{`[{kind: agent, role: primary}]`, "an agent service takes only kind and port"},
		{`[{kind: agent}, {kind: agent}]`, "services[1]: a node runs one agent service"},
		{`[{kind: agent, port: 0}]`, `"0" is not a port`},
		{`[{kind: agent, port: http}]`, `"http" is not a port`},
		{`[{kind: standby, primary: p, sync: maybe}]`, "want true or false"},
		{`[{kind: standby, primary: p, via: b}]`, `via "b": q and p need addresses on that switch`},
		{`[{kind: agent, extra: 1}]`, "unknown field"},
		{`{kind: agent}`, "want a list"},
	} {
		_, err := Parse("t.yaml", []byte(head+"    services: "+tc.services+"\n"))
		if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("services %s: got %v, want one line with %q", tc.services, err, tc.want)
		}
	}
	// A standby whose primary node runs no PostgreSQL primary.
	_, err := Parse("t.yaml", []byte("name: t\nswitches: {a: {}}\nnodes:\n  p:\n    links: [{switch: a, address: 10.0.0.1/24}]\n  q:\n    links: [{switch: a, address: 10.0.0.2/24}]\n    services: [{kind: standby, primary: p}]\n"))
	if err == nil || !strings.Contains(err.Error(), "node p runs no PostgreSQL primary") {
		t.Errorf("primary without PostgreSQL: %v", err)
	}
	// PostgreSQL on a node without an address.
	_, err = Parse("t.yaml", []byte("name: t\nswitches: {a: {}}\nnodes:\n  p:\n    links: [{switch: a}]\n    services: [{kind: primary}]\n"))
	if err == nil || !strings.Contains(err.Error(), "needs an address") {
		t.Errorf("PostgreSQL without address: %v", err)
	}
	// Validate checks a topology changed in Go.
	top, err := Load("pg")
	if err != nil {
		t.Fatal(err)
	}
	top.Nodes[1].Services[0].Primary = "client"
	if err := top.Validate(); err == nil || !strings.Contains(err.Error(), "node client runs no PostgreSQL primary") {
		t.Errorf("Validate: %v", err)
	}
}
