package cluster

import (
	"fmt"
	"strings"
	"testing"
)

func hostsString(hs []Host) string {
	var b strings.Builder
	for _, h := range hs {
		fmt.Fprintf(&b, "%s addr=%s user=%s port=%d id=%s ic=%v\n", h.Name, h.Address, h.User, h.Port, h.Identity, h.Interconnect)
	}
	return b.String()
}

func TestParseInventory(t *testing.T) {
	for _, tc := range []struct{ name, file, in, want string }{
		{"ini", "hosts", `# RAC nodes
[rac]
rac1 ansible_host=192.0.2.11 interconnect=10.0.0.1,10.0.1.1
rac2 ansible_host=192.0.2.12 ansible_user=grid interconnect="10.0.0.2,10.0.1.2"  # comment

[standby]
rac[3:4] ansible_port=2222

[rac:vars]
ansible_user=oracle

[db:children]
rac
standby

[db:vars]
ansible_user=dba
ansible_ssh_private_key_file=~/.ssh/rac

[all:vars]
ansible_port=22
`, `rac1 addr=192.0.2.11 user=oracle port=22 id=~/.ssh/rac ic=[10.0.0.1 10.0.1.1]
rac2 addr=192.0.2.12 user=grid port=22 id=~/.ssh/rac ic=[10.0.0.2 10.0.1.2]
rac3 addr= user=dba port=2222 id=~/.ssh/rac ic=[]
rac4 addr= user=dba port=2222 id=~/.ssh/rac ic=[]
`},
		{"ini ungrouped and padding", "inv.ini", "db[01:03]\n", "db01 addr= user= port=0 id= ic=[]\ndb02 addr= user= port=0 id= ic=[]\ndb03 addr= user= port=0 id= ic=[]\n"},
		{"ansible yaml", "inv.yml", `all:
  vars:
    ansible_user: root
  hosts:
    lone: {ansible_host: 192.0.2.9}
  children:
    rac:
      vars: {ansible_user: oracle, ansible_port: 2200}
      hosts:
        rac1:
          ansible_host: 192.0.2.11
          interconnect: 10.0.0.1,fd00::1
        rac2:
          ansible_host: 192.0.2.12
          interconnect: [10.0.0.2, fd00::2]
`, `lone addr=192.0.2.9 user=root port=0 id= ic=[]
rac1 addr=192.0.2.11 user=oracle port=2200 id= ic=[10.0.0.1 fd00::1]
rac2 addr=192.0.2.12 user=oracle port=2200 id= ic=[10.0.0.2 fd00::2]
`},
		{"simple yaml", "nodes", `nodes:
  - {name: a, host: 192.0.2.1, user: oracle, port: 22, interconnect: [10.0.0.1, 10.0.1.1]}
  - host: b.example
    interconnect: "10.0.0.2, 10.0.1.2"
`, `a addr=192.0.2.1 user=oracle port=22 id= ic=[10.0.0.1 10.0.1.1]
b.example addr=b.example user= port=0 id= ic=[10.0.0.2 10.0.1.2]
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hs, err := ParseInventory(strings.NewReader(tc.in), tc.file)
			if err != nil {
				t.Fatal(err)
			}
			if got := hostsString(hs); got != tc.want {
				t.Errorf("got\n%swant\n%s", got, tc.want)
			}
		})
	}
}

func TestParseInventoryErrors(t *testing.T) {
	for _, tc := range []struct{ name, file, in, want string }{
		{"empty", "hosts", "# nothing\n", "hosts: no hosts"},
		{"bad address", "hosts", "[rac]\nrac1 interconnect=10.0.0.300\n", `hosts: host rac1: interconnect: "10.0.0.300" is not an IP address`},
		{"bad port", "hosts", "rac1 ansible_port=ssh\n", `hosts: host rac1: ansible_port "ssh" is not a port number`},
		{"bad section", "hosts", "[rac:hosts]\n", "hosts:1: section [rac:hosts]: want :vars or :children"},
		{"no equals", "hosts", "rac1 oops\n", `hosts:1: host rac1: want key=value, got "oops"`},
		{"quote", "hosts", "rac1 a='b\n", "hosts:1: unterminated quote"},
		{"long quote", "hosts", "rac1 a='" + strings.Repeat("b", 5000) + "\n", `hosts:1: unterminated quote in "rac1 a='` + strings.Repeat("b", 52) + `"... (5008 bytes)`},
		{"long line", "hosts", strings.Repeat("x", 70000), "hosts: a line longer than 65536 bytes: not an inventory"},
		{"huge range", "hosts", "n[1:99999]\n", `hosts:1: host range "n[1:99999]": want [LOW:HIGH] with at most 256 hosts`},
		{"yaml", "x.yaml", "all: [1, 2\n", "x.yaml: "},
		{"simple bad", "x.yaml", "nodes:\n  - {name: a, interconnect: nope}\n", `x.yaml: node a: interconnect: "nope" is not an IP address`},
		{"simple no name", "x.yaml", "nodes:\n  - {user: a}\n", "x.yaml: nodes[0]: want name or host"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseInventory(strings.NewReader(tc.in), tc.file)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %v, want one line starting %q", err, tc.want)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	cfg, err := LoadSSHConfig("testdata/ssh_config")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		h    Host
		opt  Options
		want string
	}{
		{Host{Name: "rac1"}, Options{}, "rac1.example.com:2222 user=oracle ids=[/keys/rac1.example.com] kh=[/kh/rac /etc/ssh/ssh_known_hosts]"},
		{Host{Name: "rac1", User: "grid", Port: 22}, Options{User: "x"}, "rac1.example.com:22 user=grid ids=[/keys/rac1.example.com] kh=[/kh/rac /etc/ssh/ssh_known_hosts]"},
		{Host{Name: "n", Address: "rac1"}, Options{User: "x", Identities: []string{"/k"}, KnownHosts: []string{"/f"}}, "rac1.example.com:2222 user=x ids=[/k] kh=[/f]"},
		{Host{Name: "other", Identity: "/i"}, Options{User: "u"}, "other:22 user=u ids=[/i] kh=[/home/t/.ssh/known_hosts /etc/ssh/ssh_known_hosts]"},
	} {
		t.Setenv("HOME", "/home/t")
		tg := Resolve(tc.h, cfg, tc.opt)
		got := fmt.Sprintf("%s user=%s ids=%v kh=%v", tg.Addr(), tg.User, tg.Identities, tg.KnownHosts)
		if got != tc.want {
			t.Errorf("%+v: got %s, want %s", tc.h, got, tc.want)
		}
	}
	if _, err := LoadSSHConfig("testdata/missing"); err == nil {
		t.Error("a missing --ssh-config is no error")
	}
}
