package awr

import (
	"strconv"
	"strings"
)

// parsePing reads an Interconnect Ping Latency Stats row (awrrpt):
//
//	  Target 500B Ping       Avg Latency     Stddev  8K Ping   Avg Latency     Stddev
//	Instance     Count          500B msg   500B msg    Count       8K msg     8K msg
//	--------- -------- ----------------- ---------- -------- ------------ ----------
//	        1    2,400               .16        .03    2,400          .19        .04
//
// From 12.2 ("Interconnect Ping Latency Statistics") the notes say the
// averages are in microseconds (b.usec); they are kept in milliseconds.
func parsePing(b *builder, r row) {
	c := r.cells
	if len(c) != 7 {
		b.reject()
		return
	}
	target, err := strconv.Atoi(strings.TrimSpace(c[0]))
	if err != nil || target < 0 || target > 10000 {
		b.reject()
		return
	}
	in := b.only()
	if len(in.Pings) >= maxInstances {
		return
	}
	d := b.decComma
	in.Pings = append(in.Pings, Ping{Target: target, Count500B: ptr(c[1], d), Avg500BMs: avgMs(b, c[2]), Stddev500Ms: ptr(c[3], d),
		Count8K: ptr(c[4], d), Avg8KMs: avgMs(b, c[5]), Stddev8KMs: ptr(c[6], d)})
	b.mark(secPing, onlyKey)
}

// parseClient reads an Interconnect Throughput by Client row:
//
//	Used By               Mbytes/sec  Mbytes/sec
//	Global Cache                 .48         .50
func parseClient(b *builder, r row) {
	name, vals := r.split(b.decComma)
	if name == "" || len(vals) < 2 {
		b.reject()
		return
	}
	in := b.only()
	if len(in.Clients) >= 16 {
		return
	}
	in.Clients = append(in.Clients, ClientThroughput{Client: strings.TrimSpace(name),
		SendMBPerSec: ptr(vals[0], b.decComma), ReceiveMBPerSec: ptr(vals[1], b.decComma)})
	b.mark(secClients, onlyKey)
}

// maxDevices bounds the devices kept per instance.
const maxDevices = 64

// parseDevice reads an Interconnect Device Statistics entry (awrrpt). In
// HTML one row of 14 cells; in text three lines, which the reader joins
// into one row (the second and third are values only):
//
//	eth1            192.168.10.1    NO     cluster_interconnects parameter
//	      0.52        0        0        0        0
//	      0.55        0        0        0        0
//
// The values: send MB/s, errors, dropped, buffer overrun, carrier lost;
// receive MB/s, errors, dropped, buffer overrun, frame errors.
func parseDevice(b *builder, r row) {
	dev, ok := device(b, r.cells, r.exact)
	if !ok {
		b.reject()
		return
	}
	in := b.only()
	if len(in.Devices) < maxDevices {
		in.Devices = append(in.Devices, dev)
	}
	b.mark(secDevices, onlyKey)
}

// device reads the name, address, public flag, source and ten values
// from c.
func device(b *builder, c []string, exact bool) (Device, bool) {
	var d Device
	var vals []string
	if exact {
		if len(c) < 14 {
			return d, false
		}
		d.Name, d.Address, d.Public, d.Source = c[0], c[1], c[2], strings.TrimSpace(c[3])
		vals = c[len(c)-10:]
	} else {
		if len(c) < 12 {
			return d, false
		}
		vals = c[len(c)-10:]
		words := c[:len(c)-10]
		for _, v := range vals {
			if !numeric(v, b.decComma) {
				return d, false
			}
		}
		d.Name, d.Address = words[0], words[1]
		rest := words[2:]
		if len(rest) > 0 && (rest[0] == "YES" || rest[0] == "NO") {
			d.Public, rest = rest[0], rest[1:]
		}
		d.Source = strings.Join(rest, " ")
	}
	x := b.decComma
	d.SendMBPerSec, d.SendErrors, d.SendDropped, d.SendOverrun, d.SendCarrierLost = ptr(vals[0], x), ptr(vals[1], x), ptr(vals[2], x), ptr(vals[3], x), ptr(vals[4], x)
	d.ReceiveMBPerSec, d.ReceiveErrors, d.ReceiveDropped, d.ReceiveOverrun, d.ReceiveFrameErrs = ptr(vals[5], x), ptr(vals[6], x), ptr(vals[7], x), ptr(vals[8], x), ptr(vals[9], x)
	return d, d.Name != ""
}

// parseRemaster reads a Dynamic Remastering Stats row:
//
//	                                                   per    Begin     End
//	Name                                   Total   Remaster   Snap     Snap
//	remaster ops                                2      1.00
//	affinity objects                                            5        6
func parseRemaster(b *builder, r row) {
	name, vals := r.split(b.decComma)
	if name == "" || len(vals) == 0 {
		return
	}
	in := b.only()
	if in.Remaster == nil {
		in.Remaster = &Remaster{}
	}
	m := in.Remaster
	var dst **float64
	switch key(name) {
	case "remaster ops":
		dst = &m.Ops
	case "remastered objects":
		dst = &m.Objects
	case "replayed locks received":
		dst = &m.ReplayedLocksReceived
	case "replayed locks sent":
		dst = &m.ReplayedLocksSent
	case "resources cleaned":
		dst = &m.ResourcesCleaned
	case "remaster time (s)":
		dst = &m.TimeSeconds
	default:
		return
	}
	set(b, dst, vals[0], secRemaster)
}

// avgMs reads an average time of the current section in milliseconds:
// as printed, or divided by 1000 when the section gives microseconds.
func avgMs(b *builder, s string) *float64 {
	if b.usec {
		return us(s, b.decComma)
	}
	return ptr(s, b.decComma)
}
