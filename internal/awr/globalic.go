package awr

import (
	"math"
	"strconv"
	"strings"
)

// The interconnect sections of a global report, and what is settled when
// the whole report has been read.

// global is what the builder keeps of a global report beyond its
// instances: the block size, each instance's DB CPU seconds and its
// interconnect interfaces (Cluster Interconnect).
type global struct {
	blockSize float64
	cpuSecs   map[int]float64
	ics       map[int][]icEntry
}

type icEntry struct{ name, addr, pub, source string }

func (g *global) cpu(n int, v float64) {
	if g.cpuSecs == nil {
		g.cpuSecs = map[int]float64{}
	}
	g.cpuSecs[n] = v
}

// parseGIC reads Cluster Interconnect: I#, name, IP address, Pub (Y/N),
// source, then the same at the end snapshot when they differ.
func parseGIC(b *builder, r row) {
	_, n, c, ok := instRow(b, r)
	if !ok {
		return
	}
	var e icEntry
	switch {
	case r.exact && len(c) >= 4:
		e = icEntry{strings.TrimSpace(c[0]), strings.TrimSpace(c[1]), strings.TrimSpace(c[2]), strings.TrimSpace(c[3])}
	case !r.exact && len(c) >= 3:
		e = icEntry{c[0], c[1], c[2], strings.Join(c[3:], " ")}
	default:
		b.reject()
		return
	}
	if b.glob.ics == nil {
		b.glob.ics = map[int][]icEntry{}
	}
	if len(b.glob.ics[n]) < maxDevices {
		b.glob.ics[n] = append(b.glob.ics[n], e)
	}
	b.mark(secGIC, n)
}

// parseGPing reads Ping Statistics: the source instance (I#), the target,
// then for 500-byte and 8 KiB pings each count, average (microseconds)
// and standard deviation, as 19c prints it:
//
//	Src Target Ping Count   Avg Time  Std Dev Ping Count   Avg Time  Std Dev
//
// Before 12.2 (a reconstruction from DBA_HIST_INTERCONNECT_PINGS) each
// size had a wait time (s) after its count and averages in milliseconds.
func parseGPing(b *builder, r row) {
	in, n, c, ok := instRow(b, r)
	if !ok {
		return
	}
	if (len(c) != 7 && len(c) != 9) || len(in.Pings) >= maxInstances {
		b.reject()
		return
	}
	t, err := strconv.Atoi(strings.TrimSpace(c[0]))
	if err != nil {
		b.reject()
		return
	}
	d := b.decComma
	var p Ping
	if len(c) == 7 {
		p = Ping{Target: t, Count500B: ptr(c[1], d), Avg500BMs: us(c[2], d), Stddev500Ms: ptr(c[3], d),
			Count8K: ptr(c[4], d), Avg8KMs: us(c[5], d), Stddev8KMs: ptr(c[6], d)}
	} else {
		p = Ping{Target: t, Count500B: ptr(c[1], d), Avg500BMs: ptr(c[3], d), Stddev500Ms: ptr(c[4], d),
			Count8K: ptr(c[5], d), Avg8KMs: ptr(c[7], d), Stddev8KMs: ptr(c[8], d)}
	}
	in.Pings = append(in.Pings, p)
	b.mark(secGPing, n)
}

// us reads microseconds into milliseconds (to the nanosecond, so that
// 1,210.4 us is 1.2104 ms in JSON, not 1.2104000000000001).
func us(s string, decComma bool) *float64 {
	p := ptr(s, decComma)
	if p != nil {
		*p = math.Round(*p*1000) / 1e6
	}
	return p
}

// clientNames name awrgrpt's client columns (Cache, IPQ, DLM, PNG, Misc)
// as awrrpt's Interconnect Throughput by Client does.
var clientNames = []string{"Global Cache", "Parallel Query", "DB Locks", "Ping", "Other"}

// parseGClients reads Interconnect Client Statistics (per Second): I#,
// then sent and received MB/s, each as total, cache, IPQ, DLM, PNG, misc.
func parseGClients(b *builder, r row) {
	in, n, c, ok := instRow(b, r)
	if !ok {
		return
	}
	if len(c) != 12 {
		b.reject()
		return
	}
	d := b.decComma
	in.Clients = in.Clients[:0]
	for i, name := range clientNames {
		in.Clients = append(in.Clients, ClientThroughput{Client: name, SendMBPerSec: ptr(c[1+i], d), ReceiveMBPerSec: ptr(c[7+i], d)})
	}
	b.mark(secGClients, n)
}

// parseGDevice reads Interconnect Device Statistics of a global report,
// totals over the interval, every interface of the host: I#, name, IP
// address, IP mask, then sent MBytes, packets, errors, packets dropped,
// buffer overruns, carrier lost, and received MBytes, packets, errors,
// packets dropped, buffer overruns, frame errors. The counts are kept;
// the rates come from the per-second table. finishGlobal keeps the
// interfaces Cluster Interconnect names.
func parseGDevice(b *builder, r row) {
	in, n, c, ok := globalDevice(b, r)
	if !ok {
		return
	}
	x := b.decComma
	d := device0(in, c[0], c[1])
	d.SendErrors, d.SendDropped, d.SendOverrun, d.SendCarrierLost = ptr(c[5], x), ptr(c[6], x), ptr(c[7], x), ptr(c[8], x)
	d.ReceiveErrors, d.ReceiveDropped, d.ReceiveOverrun, d.ReceiveFrameErrs = ptr(c[11], x), ptr(c[12], x), ptr(c[13], x), ptr(c[14], x)
	b.mark(secGDevices, n)
}

// parseGDeviceRate reads Interconnect Device Statistics (per Second): the
// same columns per second, of which the MB/s are kept.
func parseGDeviceRate(b *builder, r row) {
	in, n, c, ok := globalDevice(b, r)
	if !ok {
		return
	}
	d := device0(in, c[0], c[1])
	d.SendMBPerSec, d.ReceiveMBPerSec = ptr(c[3], b.decComma), ptr(c[9], b.decComma)
	b.mark(secGDevRate, n)
}

func globalDevice(b *builder, r row) (*Instance, int, []string, bool) {
	in, n, c, ok := instRow(b, r)
	if !ok {
		return nil, 0, nil, false
	}
	if len(c) != 15 {
		b.reject()
		return nil, 0, nil, false
	}
	for i := range c {
		c[i] = strings.TrimSpace(c[i])
	}
	return in, n, c, true
}

// device0 returns in's device called name, adding it.
func device0(in *Instance, name, addr string) *Device {
	for i := range in.Devices {
		if in.Devices[i].Name == name && in.Devices[i].Address == addr {
			return &in.Devices[i]
		}
	}
	if len(in.Devices) >= maxDevices {
		return &Device{}
	}
	in.Devices = append(in.Devices, Device{Name: name, Address: addr})
	return &in.Devices[len(in.Devices)-1]
}

// finishGlobal settles what needs the whole report: the interfaces of the
// interconnect among all the host's, DB CPU per second, and Oracle's
// estimate of the interconnect traffic.
func (b *builder) finishGlobal() {
	filtered := false
	for n, in := range b.byNum {
		if ics := b.glob.ics[n]; len(ics) > 0 && len(in.Devices) > 0 {
			in.Devices = interconnectOnly(in.Devices, ics)
			filtered = true
		}
		if cpu, ok := b.glob.cpuSecs[n]; ok && in.ElapsedSeconds != nil && *in.ElapsedSeconds > 0 {
			load(in).DBCPUPerSec = f(math.Round(cpu / *in.ElapsedSeconds * 1000) / 1000)
		}
		if g := in.GCLoad; g != nil && b.glob.blockSize > 0 {
			g.TrafficKBPerSec = estdTraffic(g, b.glob.blockSize)
			g.TrafficComputed = g.TrafficKBPerSec != nil
		}
	}
	if !filtered && len(b.filled[secGDevices])+len(b.filled[secGDevRate]) > 0 {
		b.note("Interconnect Device Statistics lists every interface of a host, and the report has no Cluster Interconnect table to tell which carry the interconnect: all are kept")
	}
}

// interconnectOnly keeps the devices Cluster Interconnect names (by name
// and address), with its public flag and source.
func interconnectOnly(devs []Device, ics []icEntry) []Device {
	out := []Device{}
	for _, d := range devs {
		for _, e := range ics {
			if d.Name != e.name || (e.addr != "" && d.Address != e.addr) {
				continue
			}
			switch e.pub {
			case "Y", "YES":
				d.Public = "YES"
			case "N", "NO":
				d.Public = "NO"
			}
			d.Source = e.source
			out = append(out, d)
			break
		}
	}
	return out
}
