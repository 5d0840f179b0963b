package topology

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/interlink/interlink/internal/units"
)

// Setting is one change to a running lab: on a whole switch (Target is the
// switch's name) or on one link (Target is NODE:LINK).
//
//	switch  mtu=N       the switch, and every link and port on it
//	switch  port_mtu=N  every port of the switch (the nodes keep theirs)
//	switch  rate=R      every link on the switch (rate=0: unshaped)
//	link    mtu=N       the node's side of the link
//	link    port_mtu=N  the switch port behind it
//	link    rate=R      the link's shaping (rate=0: unshaped)
//	switch  loss=P%     every link on the switch (loss=0: none)
//	link    loss=P%     the frames its switch port drops at random, each way
type Setting struct {
	Target string `json:"target"`
	Key    string `json:"key"`
	Value  string `json:"value"`
}

// ParseSettings parses KEY=VALUE arguments for target.
func ParseSettings(target string, kvs []string) ([]Setting, error) {
	if len(kvs) == 0 {
		return nil, settingErr("nothing to set: give KEY=VALUE (mtu, port_mtu, rate, loss)")
	}
	var out []Setting
	seen := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || v == "" {
			return nil, settingErr("%q: want KEY=VALUE, e.g. mtu=1500", kv)
		}
		switch k {
		case "mtu", "port_mtu", "rate", "loss":
		default:
			return nil, settingErr("%q: unknown setting %q (mtu, port_mtu, rate, loss)", kv, k)
		}
		// "mtu=1500 mtu=9000" set 9000 silently: which one was meant?
		if prev, dup := seen[k]; dup {
			return nil, settingErr("%s given twice (%s=%s and %q)", k, k, prev, kv)
		}
		seen[k] = v
		out = append(out, Setting{Target: target, Key: k, Value: v})
	}
	return out, nil
}

// SettingError is a setting lab set cannot apply. It wraps ErrInvalid
// but does not say "invalid topology": the user gave settings, not a
// topology file.
type SettingError struct{ msg string }

func (e *SettingError) Error() string { return e.msg }
func (e *SettingError) Unwrap() error { return ErrInvalid }

func settingErr(format string, a ...any) error {
	return &SettingError{msg: fmt.Sprintf(format, a...)}
}

// Apply returns a copy of t with the settings applied, validated like a
// topology file. t is not changed.
func Apply(t *Topology, settings []Setting) (*Topology, error) {
	data, err := json.Marshal(t)
	if err != nil {
		return nil, err
	}
	var nt Topology
	if err := json.Unmarshal(data, &nt); err != nil {
		return nil, err
	}
	for _, s := range settings {
		if err := nt.apply(s); err != nil {
			return nil, settingErr("lab %s: %s %s=%s: %v", t.Name, s.Target, s.Key, s.Value, err)
		}
	}
	if err := nt.Validate(); err != nil {
		// What the settings made of the lab, in the settings' words:
		// the topology is the lab's, not a file the user wrote.
		var te *TopologyError
		if errors.As(err, &te) && te.File == "" {
			c := *te
			c.Lab = ""
			msg := strings.TrimPrefix(c.Error(), ErrInvalid.Error()+": ")
			return nil, settingErr("lab %s: after the settings, %s", t.Name, msg)
		}
		return nil, err
	}
	return &nt, nil
}

func (t *Topology) apply(s Setting) error {
	set, mtu, err := linkSetter(s)
	if err != nil {
		return err
	}
	if node, link, ok := strings.Cut(s.Target, ":"); ok {
		for i := range t.Nodes {
			if t.Nodes[i].Name != node {
				continue
			}
			for j := range t.Nodes[i].Links {
				if l := &t.Nodes[i].Links[j]; l.Name == link {
					set(l, false)
					return nil
				}
			}
			return fmt.Errorf("node %s has no link %s", node, link)
		}
		return fmt.Errorf("no node %s", node)
	}
	for i := range t.Switches {
		if t.Switches[i].Name != s.Target {
			continue
		}
		if s.Key == "mtu" {
			t.Switches[i].MTU = mtu
		}
		for n := range t.Nodes {
			for j := range t.Nodes[n].Links {
				if l := &t.Nodes[n].Links[j]; l.Switch == s.Target {
					set(l, true)
				}
			}
		}
		return nil
	}
	return fmt.Errorf("no switch %s (and not NODE:LINK)", s.Target)
}

// linkSetter parses the value of s and returns what it does to a link:
// set(l, onSwitch), where onSwitch says the setting names the link's
// whole switch (a switch's mtu is its ports' too); mtu is the value of
// an mtu or port_mtu.
func linkSetter(s Setting) (set func(l *LinkSpec, onSwitch bool), mtu int, err error) {
	switch s.Key {
	case "mtu", "port_mtu":
		v, err := strconv.Atoi(s.Value)
		if err != nil || v < MinMTU || v > MaxMTU {
			return nil, 0, fmt.Errorf("want an MTU of %d to %d", MinMTU, MaxMTU)
		}
		if s.Key == "port_mtu" {
			return func(l *LinkSpec, _ bool) { l.PortMTU = v }, v, nil
		}
		return func(l *LinkSpec, onSwitch bool) {
			l.MTU = v
			if onSwitch {
				l.PortMTU = v
			}
		}, v, nil
	case "rate":
		var rate int64
		if s.Value != "0" && s.Value != "none" {
			v, err := units.ParseRate(s.Value)
			if err != nil {
				if errors.Is(err, units.ErrBytes) {
					return nil, 0, fmt.Errorf("%s, or 0 for none", bytesNotBits)
				}
				return nil, 0, fmt.Errorf("want a rate such as 1gbit, or 0 for none")
			}
			rate = v
		}
		return func(l *LinkSpec, _ bool) { l.RateBitsPerSec = rate }, 0, nil
	case "loss":
		loss, err := ParseLoss(s.Value)
		if err != nil {
			return nil, 0, err
		}
		return func(l *LinkSpec, _ bool) { l.LossPercent = loss }, 0, nil
	}
	return nil, 0, fmt.Errorf("unknown setting %q (mtu, port_mtu, rate, loss)", s.Key)
}
