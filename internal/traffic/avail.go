package traffic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/interlink/interlink/internal/counters"
)

// counterField is one field of Counters: its JSON name and the kernel
// counter it holds (group and name in /proc/net/snmp or netstat).
type counterField struct {
	json, group, name string
	v                 *int64
}

func (c *Counters) fields() []counterField {
	return []counterField{
		{"ip_in_receives", "Ip", "InReceives", &c.IPInReceives},
		{"ip_out_requests", "Ip", "OutRequests", &c.IPOutRequests},
		{"ip_out_discards", "Ip", "OutDiscards", &c.IPOutDiscards},
		{"ip_frag_oks", "Ip", "FragOKs", &c.FragOKs},
		{"ip_frag_creates", "Ip", "FragCreates", &c.FragCreates},
		{"ip_frag_fails", "Ip", "FragFails", &c.FragFails},
		{"ip_reasm_reqds", "Ip", "ReasmReqds", &c.ReasmReqds},
		{"ip_reasm_oks", "Ip", "ReasmOKs", &c.ReasmOKs},
		{"ip_reasm_fails", "Ip", "ReasmFails", &c.ReasmFails},
		{"ip_reasm_timeout", "Ip", "ReasmTimeout", &c.ReasmTimeout},
		{"udp_in_datagrams", "Udp", "InDatagrams", &c.UDPInDatagrams},
		{"udp_out_datagrams", "Udp", "OutDatagrams", &c.UDPOutDatagrams},
		{"udp_rcvbuf_errors", "Udp", "RcvbufErrors", &c.UDPRcvbufErrors},
		{"udp_sndbuf_errors", "Udp", "SndbufErrors", &c.UDPSndbufErrors},
		{"udp_in_errors", "Udp", "InErrors", &c.UDPInErrors},
		{"tcp_in_segs", "Tcp", "InSegs", &c.TCPInSegs},
		{"tcp_out_segs", "Tcp", "OutSegs", &c.TCPOutSegs},
		{"tcp_retrans_segs", "Tcp", "RetransSegs", &c.TCPRetransSegs},
	}
}

// countersFrom picks the counters of a delta; those the delta lacks (the
// kernel does not keep them) are listed in NotAvailable and left 0.
func countersFrom(t counters.Table) Counters {
	var c Counters
	for _, f := range c.fields() {
		if v, ok := t.Get(f.group, f.name); ok {
			*f.v = v
		} else {
			c.NotAvailable = append(c.NotAvailable, f.json)
		}
	}
	return c
}

// Has reports whether the kernel gave every named counter (JSON names).
func (c Counters) Has(names ...string) bool {
	for _, n := range names {
		if slices.Contains(c.NotAvailable, n) {
			return false
		}
	}
	return true
}

// ptr returns v as a pointer, nil when the kernel did not give the
// counter of JSON name.
func (c Counters) ptr(name string, v int64) *int64 {
	if !c.Has(name) {
		return nil
	}
	return &v
}

// packetsOutFields are the counters PacketsOut needs.
var packetsOutFields = []string{"udp_out_datagrams", "ip_frag_oks", "ip_frag_creates"}

// HasPacketsOut reports whether PacketsOut can be computed.
func (c Counters) HasPacketsOut() bool { return c.Has(packetsOutFields...) }

// MarshalJSON writes the counters in field order, leaving out those the
// kernel did not give (absent, never 0) and listing them under
// "not_available".
func (c Counters) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for _, f := range c.fields() {
		if slices.Contains(c.NotAvailable, f.json) {
			continue
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q:%d", f.json, *f.v)
	}
	if len(c.NotAvailable) > 0 {
		na, err := json.Marshal(c.NotAvailable)
		if err != nil {
			return nil, err
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		b.WriteString(`"not_available":`)
		b.Write(na)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads what MarshalJSON wrote, and the results of earlier
// versions (every counter present); a counter missing from the object is
// not available.
func (c *Counters) UnmarshalJSON(data []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	*c = Counters{}
	if raw, ok := m["not_available"]; ok {
		if err := json.Unmarshal(raw, &c.NotAvailable); err != nil {
			return fmt.Errorf("counters not_available: %w", err)
		}
	}
	for _, f := range c.fields() {
		raw, ok := m[f.json]
		if !ok {
			if !slices.Contains(c.NotAvailable, f.json) {
				c.NotAvailable = append(c.NotAvailable, f.json)
			}
			continue
		}
		if err := json.Unmarshal(raw, f.v); err != nil {
			return fmt.Errorf("counters %s: %w", f.json, err)
		}
	}
	return nil
}
