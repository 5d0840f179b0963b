package topology

import (
	"errors"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestParseLoss: a percentage with its %, or 0; anything else, or out of
// 0.001% to 100%, is refused saying what to write.
func TestParseLoss(t *testing.T) {
	for s, want := range map[string]float64{"0": 0, "0%": 0, "1%": 1, "0.5%": 0.5, "100%": 100, "0.001%": 0.001} {
		if got, err := ParseLoss(s); err != nil || got != want {
			t.Errorf("%q: %v, %v; want %v", s, got, err, want)
		}
	}
	for s, want := range map[string]string{
		"150%":    "loss 150% out of range: want 0.001% to 100%, or 0 for none",
		"-1%":     "loss -1% out of range",
		"abc":     `"abc" is not a loss: want a percentage such as 1% or 0.5%, or 0 for none`,
		"1":       `"1" is not a loss`,
		"%":       `"%" is not a loss`,
		"NaN%":    `"NaN%" is not a loss`,
		"0.0001%": "loss 0.0001% out of range",
	} {
		if _, err := ParseLoss(s); err == nil || err.Error() != want && !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q: %v, want %q", s, err, want)
		}
	}
}

const lossyYAML = `name: lossy
switches:
  ic: {mtu: 9000, loss: 1%}
  pub: {}
nodes:
  n1:
    links:
      - {switch: ic, address: 198.18.10.1/24}
      - {switch: pub, address: 198.18.99.1/24, loss: 0.5%}
  n2:
    links:
      - {switch: ic, address: 198.18.10.2/24, loss: 0}
`

// TestLossInTopology: a switch's loss is the default of its links, a
// link's own loss (0 included) wins, and the topology written back as
// YAML reads the same.
func TestLossInTopology(t *testing.T) {
	top, err := Parse("lossy.yaml", []byte(lossyYAML))
	if err != nil {
		t.Fatal(err)
	}
	if got := []float64{top.Nodes[0].Links[0].LossPercent, top.Nodes[0].Links[1].LossPercent, top.Nodes[1].Links[0].LossPercent}; got[0] != 1 || got[1] != 0.5 || got[2] != 0 {
		t.Errorf("losses %v, want [1 0.5 0]", got)
	}
	data, err := yaml.Marshal(top)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Parse("lossy.yaml", data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	again.File = top.File
	if !strings.Contains(string(data), "loss: 0.5%") || again.Nodes[0].Links[1].LossPercent != 0.5 || again.Nodes[0].Links[0].LossPercent != 1 {
		t.Errorf("written back:\n%s", data)
	}
}

// TestLossRefused: a bad loss in a file is one line naming the field; in
// lab set it names the setting, and the topology is left as it was.
func TestLossRefused(t *testing.T) {
	for _, c := range []struct{ from, to, field string }{
		{"loss: 0.5%", "loss: 150%", "lossy.yaml:9: nodes.n1.links[1].loss: loss 150% out of range"},
		{"loss: 0.5%", "loss: -1%", "lossy.yaml:9: nodes.n1.links[1].loss: loss -1% out of range"},
		{"loss: 0.5%", "loss: abc", `lossy.yaml:9: nodes.n1.links[1].loss: "abc" is not a loss`},
		{"loss: 1%", "loss: 1", `lossy.yaml:3: switches.ic.loss: "1" is not a loss`},
	} {
		_, err := Parse("lossy.yaml", []byte(strings.Replace(lossyYAML, c.from, c.to, 1)))
		if err == nil || !errors.Is(err, ErrInvalid) || !strings.HasPrefix(err.Error(), c.field) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line starting %q", c.to, err, c.field)
		}
	}
	top, err := Load("jumbo")
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range []string{"loss=150%", "loss=-1%", "loss=abc"} {
		s, err := ParseSettings("node1:eth1", []string{kv})
		if err != nil {
			t.Fatal(err)
		}
		_, err = Apply(top, s)
		if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "node1:eth1 "+kv+": ") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v", kv, err)
		}
	}
	s, _ := ParseSettings("ic", []string{"loss=1%"})
	nt, err := Apply(top, s)
	if err != nil {
		t.Fatal(err)
	}
	s, _ = ParseSettings("node2:eth1", []string{"loss=0"})
	if nt, err = Apply(nt, s); err != nil {
		t.Fatal(err)
	}
	for _, n := range nt.Nodes {
		want := 1.0
		if n.Name == "node2" {
			want = 0
		}
		if l := n.Links[0]; l.LossPercent != want {
			t.Errorf("%s %s: loss %v after ic loss=1%% and node2:eth1 loss=0, want %v", n.Name, l.Name, l.LossPercent, want)
		}
	}
	for _, n := range top.Nodes {
		if n.Links[0].LossPercent != 0 {
			t.Error("Apply changed the topology it was given")
		}
	}
}
