package traffic

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/counters"
)

// Every Counters field is in fields() under its JSON tag, so the custom
// JSON writes and reads all of them.
func TestCounterFieldsMatchTags(t *testing.T) {
	var c Counters
	tags := map[string]bool{}
	rt := reflect.TypeOf(c)
	for i := 0; i < rt.NumField(); i++ {
		if tag, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ","); tag != "not_available" {
			tags[tag] = true
		}
	}
	for _, f := range c.fields() {
		if !tags[f.json] {
			t.Errorf("fields() names %q, which is no field's JSON tag", f.json)
		}
		delete(tags, f.json)
	}
	if len(tags) != 0 {
		t.Errorf("fields() lacks %v", tags)
	}
}

// A delta from a kernel that lacks Udp RcvbufErrors and SndbufErrors and
// Ip ReasmReqds: those are absent from the JSON, listed as not available,
// and read back the same; every other counter is there, 0 included.
func TestCountersNotAvailable(t *testing.T) {
	snmp := "Ip: InReceives OutRequests OutDiscards FragOKs FragCreates FragFails ReasmOKs ReasmFails ReasmTimeout\n" +
		"Ip: 10 20 0 1 6 0 3 0 0\n" +
		"Udp: InDatagrams OutDatagrams InErrors\nUdp: 5 7 0\nTcp: InSegs OutSegs RetransSegs\nTcp: 1 2 0\n"
	tab, err := counters.ParseSNMP(strings.NewReader(snmp), nil)
	if err != nil {
		t.Fatal(err)
	}
	c := countersFrom(tab)
	want := []string{"ip_reasm_reqds", "udp_rcvbuf_errors", "udp_sndbuf_errors"}
	if !reflect.DeepEqual(c.NotAvailable, want) {
		t.Errorf("not available %v, want %v", c.NotAvailable, want)
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	js := string(b)
	for _, name := range want {
		if strings.Contains(js, `"`+name+`":`) {
			t.Errorf("%s is in the JSON: %s", name, js)
		}
	}
	if !strings.Contains(js, `"ip_out_discards":0,`) || !strings.Contains(js, `"not_available":["ip_reasm_reqds","udp_rcvbuf_errors","udp_sndbuf_errors"]`) {
		t.Errorf("json %s", js)
	}
	var back Counters
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, c) {
		t.Errorf("round trip: %+v, %v; want %+v", back, err, c)
	}
	// A result written before counters could be absent has them all.
	var old Counters
	if err := json.Unmarshal([]byte(`{"ip_in_receives":1,"ip_out_requests":2,"ip_out_discards":0,"ip_frag_oks":0,"ip_frag_creates":0,"ip_frag_fails":0,"ip_reasm_reqds":0,"ip_reasm_oks":0,"ip_reasm_fails":0,"ip_reasm_timeout":0,"udp_in_datagrams":0,"udp_out_datagrams":0,"udp_rcvbuf_errors":0,"udp_sndbuf_errors":0,"udp_in_errors":0,"tcp_in_segs":0,"tcp_out_segs":0,"tcp_retrans_segs":0}`), &old); err != nil || len(old.NotAvailable) != 0 || old.IPOutRequests != 2 {
		t.Errorf("old result: %+v, %v", old, err)
	}
}

// A UDP run whose ends lack the counters that place a loss and Ip
// ReasmReqds: the summary has no loss places and no reassembly count,
// and the text says n/a rather than 0.
func TestSummaryNotAvailable(t *testing.T) {
	spec, _ := Spec{Mode: ModeUDP, Len: 8192}.Normalize()
	na := []string{"ip_reasm_reqds", "udp_rcvbuf_errors", "udp_sndbuf_errors"}
	snd := &Side{Role: RoleSender, Duration: time.Second, Messages: 1000, UDP: &UDPStats{Sent: 1000}, MTU: 1500,
		Counters: Counters{UDPOutDatagrams: 1000, FragOKs: 1000, FragCreates: 6000, NotAvailable: na}}
	rcv := &Side{Role: RoleReceiver, Duration: time.Second, Messages: 900, Bytes: 900 * 8192,
		UDP: &UDPStats{Received: 900}, Counters: Counters{ReasmOKs: 900, NotAvailable: na}}
	f := Summarize(spec, Forward, snd, rcv)
	s := f.Summary
	if s.LossBy != nil || s.ReasmReqds != nil || s.ReasmOKs == nil || *s.ReasmOKs != 900 || s.FragmentsPerMessage != 6 {
		t.Errorf("summary: loss by %v, reasm %v/%v, fragments %.2f", s.LossBy, s.ReasmReqds, s.ReasmOKs, s.FragmentsPerMessage)
	}
	b, _ := json.Marshal(s)
	if strings.Contains(string(b), `"reasm_reqds"`) || strings.Contains(string(b), `"loss_by_place"`) || !strings.Contains(string(b), `"reasm_oks":900`) {
		t.Errorf("summary json: %s", b)
	}
	var text bytes.Buffer
	Report{Result: &Result{Spec: spec, Flows: []Flow{f}}}.WriteText(&text)
	for _, want := range []string{"lost where: n/a", "reassembly n/a fragments -> 900 OK"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
}
