package lab

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestServicesBuiltinGalera(t *testing.T) {
	top, err := Load("galera")
	if err != nil {
		t.Fatal(err)
	}
	if err := top.Validate(); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range top.GaleraNodes() {
		s := n.Service(KindGalera)
		if s.Via != "ic" || s.Port != GaleraPort || n.Service(KindAgent) == nil {
			t.Errorf("node %s: galera %+v", n.Name, s)
		}
		if a := firstAddrOn(n, "ic"); !a.Is4() || !strings.HasPrefix(a.String(), "198.18.10.") {
			t.Errorf("node %s: cluster address %s", n.Name, a)
		}
		// Clients reach a member on the public network, its first link.
		if a := firstAddr(n); !strings.HasPrefix(a.String(), "198.18.99.") {
			t.Errorf("node %s: client address %s", n.Name, a)
		}
		names = append(names, n.Name)
	}
	if strings.Join(names, " ") != "db1 db2 db3" {
		t.Errorf("galera members %v, want db1 db2 db3 (db1 bootstraps)", names)
	}
	for _, sw := range top.Switches {
		if want := map[string]int{"pub": 1500, "ic": 9000}[sw.Name]; sw.MTU != want {
			t.Errorf("switch %s: MTU %d, want %d", sw.Name, sw.MTU, want)
		}
	}
}

func TestServicesGalera(t *testing.T) {
	node := func(name, links, services string) string {
		return "  " + name + ":\n    links: " + links + "\n    services: " + services + "\n"
	}
	two := "[{switch: a, address: 10.0.0.%d/24}, {switch: b, address: 10.1.0.%d/24}]"
	links := func(i int) string { return strings.ReplaceAll(strings.Replace(two, "%d", itoa(i), 1), "%d", itoa(i)) }
	head := "name: t\nswitches: {a: {}, b: {}}\nnodes:\n"
	// Via defaults to the first switch every member is on, for all.
	top, err := Parse("t.yaml", []byte(head+node("n1", links(1), "[{kind: galera}]")+node("n2", links(2), "[{kind: galera, via: b}]")+node("n3", links(3), "[{kind: galera, port: 3307}]")))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range top.GaleraNodes() {
		if s := n.Service(KindGalera); s.Via != "b" {
			t.Errorf("node %s: via %q, want b (named by n2)", n.Name, s.Via)
		}
	}
	if p := top.Nodes[2].Services[0].Port; p != 3307 {
		t.Errorf("port %d", p)
	}
	top, err = Parse("t.yaml", []byte(head+node("n1", links(1), "[{kind: galera}]")+node("n2", links(2), "[{kind: galera}]")+node("n3", links(3), "[{kind: galera}]")))
	if err != nil || top.Nodes[0].Services[0].Via != "a" {
		t.Fatalf("default via: %v %+v", err, top)
	}
	for _, tc := range []struct{ nodes, want string }{
		{node("n1", links(1), "[{kind: galera}]") + node("n2", links(2), "[{kind: galera}]"), "at least 3 nodes with a galera service"},
		{node("n1", links(1), "[{kind: galera, via: a}]") + node("n2", links(2), "[{kind: galera, via: b}]") + node("n3", links(3), "[{kind: galera}]"), `via "b": the lab's galera nodes form one cluster`},
		{node("n1", links(1), "[{kind: galera, via: b}]") + node("n2", links(2), "[{kind: galera}]") + node("n3", "[{switch: a, address: 10.0.0.3/24}]", "[{kind: galera}]"), `via "b": node n3 needs an address on that switch`},
		{node("n1", "[{switch: a, address: 10.0.0.1/24}]", "[{kind: galera}]") + node("n2", "[{switch: b, address: 10.1.0.2/24}]", "[{kind: galera}]") + node("n3", links(3), "[{kind: galera}]"), "no switch connects every galera node"},
		{node("n1", links(1), "[{kind: galera, role: primary}]"), "a galera service takes only kind, via and port"},
		{node("n1", links(1), "[{kind: galera, sync: true}]"), "a galera service takes only kind, via and port"},
		{node("n1", links(1), "[{kind: galera}, {kind: galera}]"), "a node runs one galera service"},
	} {
		_, err := Parse("t.yaml", []byte(head+tc.nodes))
		if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want one line with %q", tc.nodes, err, tc.want)
		}
	}
}

func itoa(i int) string { return string(rune('0' + i)) }

// TestServiceUserDir: a lab whose state directory others cannot pass keeps
// its Galera data under UserDataRoot, in a directory named for the lab and
// the state directory, and lists it among its files for Down.
func TestServiceUserDir(t *testing.T) {
	open := t.TempDir()
	closed := t.TempDir()
	for _, d := range []string{filepath.Dir(open), open} {
		if err := os.Chmod(d, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(closed, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("INTERLINK_LAB_DIR", open)
	if got, want := serviceUserDir("x", "db1", KindGalera), filepath.Join(open, "x.d", "nodes", "db1", "galera"); got != want {
		t.Errorf("passable state dir: %s, want %s", got, want)
	}
	t.Setenv("INTERLINK_LAB_DIR", closed)
	got := serviceUserDir("x", "db1", KindGalera)
	if !strings.HasPrefix(got, UserDataRoot+"/x-") || !strings.HasSuffix(got, "/db1/galera") {
		t.Errorf("closed state dir: %s, want under %s/x-HASH", got, UserDataRoot)
	}
	if !strings.Contains(strings.Join(labFiles("x"), " "), filepath.Dir(filepath.Dir(got))) {
		t.Errorf("labFiles %v lacks %s", labFiles("x"), filepath.Dir(filepath.Dir(got)))
	}
	t.Setenv("INTERLINK_LAB_DIR", open)
	if other := userDataDir("x"); other == filepath.Dir(filepath.Dir(got)) {
		t.Errorf("two state directories share %s", other)
	}
	if othersCanPass("/nonexistent/dir") {
		t.Error("a missing directory counted as passable")
	}
}
