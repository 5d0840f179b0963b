package awr

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	"github.com/interlink/interlink/internal/rules"
	"github.com/interlink/interlink/internal/shellq"
)

// Sources the thresholds cite. Where Oracle documents the meaning of a
// figure but no number, the number is marked a field convention.
const (
	srcLost = "My Oracle Support note 563566.1 (gc block lost diagnostics: lost blocks should be zero); Oracle RAC Administration and Deployment Guide, Monitoring Performance, block-related wait events; RFC 791 (a datagram is delivered only when all its fragments arrive: one lost fragment loses the block)"
	srcRecv = "Oracle RAC Administration and Deployment Guide, Monitoring Performance (Cache Fusion transfer times reflect interconnect latency and remote load); 1 ms and 5 ms are a field convention for a modern (10 GbE or faster) interconnect, not an Oracle document"
	srcPing = "Oracle Database Reference, V$INSTANCE_PING and DBA_HIST_INTERCONNECT_PINGS (500 B and 8 KiB round trips, the instance itself as control); 1 ms and 3x the control are a field convention"
	srcDev  = "Oracle RAC Administration and Deployment Guide, Verifying the Interconnect Settings; kernel Documentation/networking/statistics.rst (rx_errors, rx_dropped: frames the host did not deliver)"
	srcPub  = "Oracle Grid Infrastructure Installation Guide, network requirements (the interconnect is a private network); Oracle RAC Administration and Deployment Guide, V$CLUSTER_INTERCONNECTS IS_PUBLIC"
	srcBusy = "Oracle RAC Administration and Deployment Guide, Monitoring Performance, contention-related wait events (gc buffer busy: contention, or an interconnect or load issue); 10 % of DB time is a field convention"
	src3way = "Oracle RAC Administration and Deployment Guide, Monitoring Performance, block-related wait events (2-way and 3-way transfers); 'dominating' (more 3-way than 2-way waits, congested above 10 % of transfers) is a field convention"
)

// Rule ids.
const (
	RuleLost      = "AWR-GC-LOST"
	RuleReceive   = "AWR-GC-RECEIVE"
	RulePing      = "AWR-PING-8K"
	RuleDevice    = "AWR-IC-DEVICE"
	RulePublic    = "AWR-IC-PUBLIC"
	RuleBusy      = "AWR-GC-BUFFER-BUSY"
	RuleThreeWay  = "AWR-GC-3WAY"
	RuleCongested = "AWR-GC-CONGESTED"
)

// Rules lists what Analyze judges, for `awr --rules` and the docs.
func Rules() []rules.RuleInfo {
	return []rules.RuleInfo{
		{ID: RuleLost, Severity: rules.Warning, Also: []rules.SeverityCase{{Severity: rules.Critical, When: "lost-block waits take 1 % of DB time or more"}}, Title: "blocks lost on the interconnect in the interval (the statistic gc blocks lost, else gc cr/current block lost waits)", Source: srcLost},
		{ID: RuleReceive, Severity: rules.Warning, Also: []rules.SeverityCase{{Severity: rules.Critical, When: "above 5 ms"}}, Title: "average global cache cr or current block receive time above 1 ms", Source: srcRecv},
		{ID: RulePing, Severity: rules.Warning, Title: "average 8 KiB ping to another instance above 1 ms and 3 times the instance's ping of itself", Source: srcPing},
		{ID: RuleDevice, Severity: rules.Warning, Title: "errors, drops, overruns, frame errors or carrier losses on an interconnect device", Source: srcDev},
		{ID: RulePublic, Severity: rules.Warning, Title: "the interconnect runs over a device marked public", Source: srcPub},
		{ID: RuleBusy, Severity: rules.Warning, Title: "gc buffer busy acquire and release take 10 % of DB time or more", Source: srcBusy},
		{ID: RuleThreeWay, Severity: rules.Info, Title: "3-way transfers outnumber 2-way ones", Source: src3way},
		{ID: RuleCongested, Severity: rules.Warning, Title: "congested transfers above 10 % of block requests (single and multi block, every gc cr/current block and multi block event the report lists)", Source: src3way},
	}
}

// Analyze judges the reports and returns the document `awr` prints.
func Analyze(reps []Report) *Result {
	res := &Result{Schema: Schema, Reports: reps, Findings: []rules.Finding{}}
	for i := range reps {
		r := &reps[i]
		for j := range r.Instances {
			res.Findings = append(res.Findings, judge(r, &r.Instances[j])...)
		}
	}
	sort.SliceStable(res.Findings, func(i, j int) bool {
		a, b := res.Findings[i], res.Findings[j]
		if a.Severity != b.Severity {
			return a.Severity > b.Severity
		}
		return a.Rule < b.Rule
	})
	s := rules.Summarize(res.Findings)
	for _, r := range reps {
		if len(r.Notes) > 0 && r.Cluster {
			for _, n := range r.Notes {
				if len(s.NotFullyRead) < maxNotes {
					s.NotFullyRead = append(s.NotFullyRead, r.File+": "+n)
				}
			}
		}
	}
	res.Summary = s
	return res
}

// Object names an instance of a report in findings and comparisons.
func (r *Report) Object(in *Instance) string {
	s := "instance " + strconv.Itoa(in.Number)
	if in.Name != "" {
		s += " (" + in.Name + ")"
	}
	return r.File + ": " + s
}

// g formats a figure for a finding: counts whole (42379, 8353089), other
// figures with six significant digits.
func g(x float64) string {
	if x == math.Trunc(x) && math.Abs(x) < 1e15 {
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	return strconv.FormatFloat(x, 'g', 6, 64)
}

// judge applies every rule to one instance.
func judge(r *Report, in *Instance) []rules.Finding {
	var out []rules.Finding
	obj := r.Object(in)
	ev := func(what string, v float64) rules.Evidence {
		return rules.Evidence{What: what, Value: g(v), File: r.File}
	}
	var add adder = func(id string, sev rules.Severity, msg, fix, src string, evs ...rules.Evidence) {
		out = append(out, rules.Finding{Rule: id, Severity: sev, Object: obj, Message: msg, Evidence: evs, Fix: fix, Source: src})
	}

	judgeLost(in, ev, add)

	if w := in.GCWorkload; w != nil {
		for _, c := range []struct {
			name string
			v    *float64
		}{{"avg global cache cr block receive time (ms)", w.CRReceiveMs}, {"avg global cache current block receive time (ms)", w.CurrentReceiveMs}} {
			if c.v == nil || *c.v <= 1 {
				continue
			}
			sev := rules.Warning
			if *c.v > 5 {
				sev = rules.Critical
			}
			add(RuleReceive, sev, fmt.Sprintf("%s is %s ms", c.name, g(*c.v)),
				"compare with the 8 KiB ping and the lab: 'interlink bench PEER --mode blocks' over the interconnect gives the network's share; a high LMS CPU or log flush time on the serving instance is the other cause",
				srcRecv, ev(c.name, *c.v))
		}
	}

	judgePings(in, ev, add)
	judgeDevices(in, r.File, ev, add)

	busy := 0.0
	var busyEv []rules.Evidence
	for _, n := range []string{"gc buffer busy acquire", "gc buffer busy release"} {
		if w := in.Wait(n); w != nil && w.PctDBTime != nil {
			busy += *w.PctDBTime
			busyEv = append(busyEv, ev(n+" % DB time", *w.PctDBTime))
		}
	}
	if busy >= 10 {
		add(RuleBusy, rules.Warning, fmt.Sprintf("gc buffer busy takes %s %% of DB time", g(busy)),
			"find the segments ('Segments by Global Cache Buffer Busy' in the same report): hot blocks shared by instances want partitioning, reverse-key or hash indexes, or service affinity; if the transfers themselves are slow, see the receive time and ping findings",
			srcBusy, busyEv...)
	}

	judgeTransfers(in, ev, add)
	return out
}

// judgePings applies AWR-PING-8K: an 8 KiB ping to another instance slow
// both absolutely and beside the instance's ping of itself.
func judgePings(in *Instance, ev evidencer, add adder) {
	var self *Ping
	for i := range in.Pings {
		if in.Pings[i].Target == in.Number {
			self = &in.Pings[i]
		}
	}
	for _, p := range in.Pings {
		if p.Target == in.Number || p.Avg8KMs == nil || *p.Avg8KMs <= 1 {
			continue
		}
		if self != nil && self.Avg8KMs != nil && *p.Avg8KMs <= 3**self.Avg8KMs {
			continue
		}
		evs := []rules.Evidence{ev(fmt.Sprintf("avg 8K ping to instance %d (ms)", p.Target), *p.Avg8KMs)}
		if p.Avg500BMs != nil {
			evs = append(evs, ev(fmt.Sprintf("avg 500B ping to instance %d (ms)", p.Target), *p.Avg500BMs))
		}
		if self != nil && self.Avg8KMs != nil {
			evs = append(evs, ev("avg 8K ping to itself (ms)", *self.Avg8KMs))
		}
		add(RulePing, rules.Warning, fmt.Sprintf("8 KiB pings to instance %d average %s ms", p.Target, g(*p.Avg8KMs)),
			"an 8 KiB message slow where 500 B is fast points at fragmentation or an MTU mismatch: 'interlink pmtu PEER' on the interconnect address proves the path MTU both ways",
			srcPing, evs...)
	}
}

// judgeDevices applies AWR-IC-DEVICE and AWR-IC-PUBLIC to the
// interconnect devices of the report (file).
func judgeDevices(in *Instance, file string, ev evidencer, add adder) {
	for _, d := range in.Devices {
		var evs []rules.Evidence
		for _, c := range []struct {
			what string
			v    *float64
		}{{"send errors", d.SendErrors}, {"send dropped", d.SendDropped}, {"send buffer overrun", d.SendOverrun}, {"send carrier lost", d.SendCarrierLost},
			{"receive errors", d.ReceiveErrors}, {"receive dropped", d.ReceiveDropped}, {"receive buffer overrun", d.ReceiveOverrun}, {"receive frame errors", d.ReceiveFrameErrs}} {
			if c.v != nil && *c.v > 0 {
				evs = append(evs, ev(d.Name+" "+c.what, *c.v))
			}
		}
		if len(evs) > 0 {
			add(RuleDevice, rules.Warning, fmt.Sprintf("interconnect device %s (%s) counted errors or drops", d.Name, d.Address),
				"read the device's counters on the node ('interlink check --interconnect "+shellq.Quote(d.Name)+"' shows rx_dropped, rx_errors and the UDP buffer errors) and the switch port's; drops with a full socket buffer call for larger net.core.rmem_max",
				srcDev, evs...)
		}
		if d.Public == "YES" {
			add(RulePublic, rules.Warning, fmt.Sprintf("Cache Fusion runs over %s (%s), a public interface", d.Name, d.Address),
				"give the cluster a private interconnect and register it ('oifcfg setif -global IF/SUBNET:cluster_interconnect')",
				srcPub, rules.Evidence{What: d.Name + " public", Value: d.Public, File: file})
		}
	}
}
