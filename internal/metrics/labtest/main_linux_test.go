//go:build linux

// Package labtest runs `interlink agent --metrics` and `interlink watch`
// as real processes in a namespace lab (issue 16): the node metrics and the
// path metrics are scraped over HTTP from inside a lab node and parsed with
// Prometheus's text parser. It builds labs: run it under the lab lock.
package labtest

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/interlink/interlink/internal/lab"
	"github.com/interlink/interlink/internal/labuptest"
)

var bin string // the interlink binary under test

func TestMain(m *testing.M) {
	labuptest.Main(m, "metrics lab tests", &bin, "t16w-interlink-")
}

// families is one scrape, parsed.
type families map[string]*dto.MetricFamily

// scrape GETs url from inside node n (the connection's socket is created in
// the node's namespace) and parses it with Prometheus's text parser.
func scrape(t *testing.T, n *lab.Node, url string) families {
	t.Helper()
	tr := &http.Transport{DisableKeepAlives: true, DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		var c net.Conn
		err := n.Do(func() error {
			var err error
			c, err = (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, network, addr)
			return err
		})
		return c, err
	}}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Get(url)
	if err != nil {
		t.Fatalf("scrape %s from %s: %v", url, n.Name(), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape %s: %s", url, resp.Status)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse %s: %v", url, err)
	}
	return fams
}

// value is the value of the series of name whose labels include want
// (counter or gauge); ok is false when there is none.
func (f families) value(name string, want map[string]string) (float64, bool) {
	for _, m := range f[name].GetMetric() {
		if matches(m, want) {
			if c := m.GetCounter(); c != nil {
				return c.GetValue(), true
			}
			return m.GetGauge().GetValue(), true
		}
	}
	return 0, false
}

func matches(m *dto.Metric, want map[string]string) bool {
	n := 0
	for _, lp := range m.Label {
		if v, ok := want[lp.GetName()]; ok {
			if v != lp.GetValue() {
				return false
			}
			n++
		}
	}
	return n == len(want)
}

func labels(m *dto.Metric) map[string]string {
	l := map[string]string{}
	for _, lp := range m.Label {
		l[lp.GetName()] = lp.GetValue()
	}
	return l
}
