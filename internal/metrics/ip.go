package metrics

import (
	"fmt"
	"os"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/interlink/interlink/internal/counters"
)

// ipCounters are the fields of the Ip line of /proc/net/snmp exported as
// counters: fragmentation on the sending side, reassembly on the receiving
// side. Reassembly failures are where a UDP interconnect loses whole 8 KiB
// blocks when one fragment goes missing (Oracle's "gc blocks lost").
var ipCounters = []struct{ field, name, help string }{
	{"ReasmReqds", "ip_reassembly_required_total", "IP fragments received that needed reassembly (Ip ReasmReqds)."},
	{"ReasmOKs", "ip_reassembly_ok_total", "IP packets reassembled (Ip ReasmOKs)."},
	{"ReasmFails", "ip_reassembly_failures_total", "IP reassembly failures: a fragment lost, timed out or over the memory limit (Ip ReasmFails)."},
	{"ReasmTimeout", "ip_reassembly_timeouts_total", "IP fragments dropped after the reassembly timeout (Ip ReasmTimeout)."},
	{"FragOKs", "ip_fragmented_ok_total", "IP packets this node fragmented (Ip FragOKs)."},
	{"FragFails", "ip_fragmentation_failures_total", "IP packets this node had to fragment but could not, DF set (Ip FragFails)."},
	{"FragCreates", "ip_fragments_created_total", "IP fragments this node created (Ip FragCreates)."},
}

// ipCollector reads /proc/net/snmp (of the network namespace the process
// runs in) at each scrape.
type ipCollector struct {
	path  string
	descs []*prometheus.Desc
}

func newIPCollector(path string) *ipCollector {
	c := &ipCollector{path: path}
	for _, f := range ipCounters {
		c.descs = append(c.descs, prometheus.NewDesc("interlink_"+f.name, f.help, nil, nil))
	}
	return c
}

func (c *ipCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

func (c *ipCollector) Collect(ch chan<- prometheus.Metric) {
	t, err := c.read()
	for i, f := range ipCounters {
		if err != nil {
			ch <- prometheus.NewInvalidMetric(c.descs[i], err)
			continue
		}
		if v, ok := t.Get("Ip", f.field); ok {
			ch <- prometheus.MustNewConstMetric(c.descs[i], prometheus.CounterValue, float64(v))
		}
	}
}

func (c *ipCollector) read() (counters.Table, error) {
	f, err := os.Open(c.path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t, err := counters.ParseSNMP(f, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.path, err)
	}
	return t, nil
}
