package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
)

// dashboardQuery is one PromQL text of a dashboard and where it is.
type dashboardQuery struct {
	where, expr, legend string
}

// dashboardQueries walks a Grafana JSON model and returns every panel
// target's expression (with its legend) and every templating query.
func dashboardQueries(v any, where string, out *[]dashboardQuery) {
	switch x := v.(type) {
	case map[string]any:
		if title, ok := x["title"].(string); ok {
			where = title
		}
		if e, ok := x["expr"].(string); ok {
			l, _ := x["legendFormat"].(string)
			*out = append(*out, dashboardQuery{where, e, l})
		}
		if d, ok := x["definition"].(string); ok {
			*out = append(*out, dashboardQuery{"variable " + where, d, ""})
		}
		for _, c := range x {
			dashboardQueries(c, where, out)
		}
	case []any:
		for _, c := range x {
			dashboardQueries(c, where, out)
		}
	}
}

var (
	promMetric   = regexp.MustCompile(`\binterlink_[a-z_]+`)
	promSelector = regexp.MustCompile(`(interlink_[a-z_]+)\{([^}]*)\}`)
	promMatcher  = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)`)
	promLabelVal = regexp.MustCompile(`label_values\((interlink_[a-z_]+),\s*([a-zA-Z_]+)\)`)
	legendLabel  = regexp.MustCompile(`\{\{\s*([a-zA-Z_]+)\s*\}\}`)
	dashVar      = regexp.MustCompile(`\$\{?([a-zA-Z_]+)`)
)

// checkDashboards holds every dashboard in contrib/grafana to the metrics
// a real watch served (fams, scraped): each metric a query names is
// served, each label it selects on, groups by or shows in a legend is one
// the metric has, and each variable it uses is defined; so a renamed
// metric or label cannot leave a panel silently empty.
func checkDashboards(t *testing.T, fams map[string]*dto.MetricFamily) {
	t.Helper()
	files, _ := filepath.Glob("../../contrib/grafana/*.json")
	if len(files) == 0 {
		t.Fatal("no dashboard in contrib/grafana")
	}
	// What is served: names (with a summary's _sum and _count) and labels.
	labels := map[string]map[string]bool{}
	for name, f := range fams {
		l := map[string]bool{}
		for _, m := range f.Metric {
			for _, lp := range m.Label {
				l[lp.GetName()] = true
			}
		}
		labels[name] = l
		switch f.GetType() {
		case dto.MetricType_SUMMARY:
			labels[name+"_sum"], labels[name+"_count"] = l, l
			q := map[string]bool{"quantile": true}
			for k := range l {
				q[k] = true
			}
			labels[name] = q
		case dto.MetricType_HISTOGRAM:
			b := map[string]bool{"le": true}
			for k := range l {
				b[k] = true
			}
			labels[name+"_sum"], labels[name+"_count"], labels[name+"_bucket"] = l, l, b
		}
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var model map[string]any
		if err := json.Unmarshal(b, &model); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		vars := map[string]bool{"__rate_interval": true, "__interval": true, "__range": true}
		if tl, ok := model["templating"].(map[string]any); ok {
			list, _ := tl["list"].([]any)
			for _, v := range list {
				if name, ok := v.(map[string]any)["name"].(string); ok {
					vars[name] = true
				}
			}
		}
		var qs []dashboardQuery
		dashboardQueries(model["panels"], "", &qs)
		dashboardQueries(model["templating"], "", &qs)
		if len(qs) < 5 {
			t.Errorf("%s: %d queries", file, len(qs))
		}
		seen := map[string]bool{}
		for _, q := range qs {
			names := promMetric.FindAllString(q.expr, -1)
			if len(names) == 0 {
				t.Errorf("%s: %s: %q names no interlink metric", file, q.where, q.expr)
			}
			for _, n := range names {
				seen[strings.TrimSuffix(strings.TrimSuffix(n, "_sum"), "_count")] = true
				if labels[n] == nil {
					t.Errorf("%s: %s: %s is not served by interlink watch", file, q.where, n)
				}
			}
			check := func(metric, label string) {
				if l := labels[metric]; l != nil && !l[label] {
					t.Errorf("%s: %s: %s has no label %q", file, q.where, metric, label)
				}
			}
			for _, m := range promSelector.FindAllStringSubmatch(q.expr, -1) {
				for _, lm := range promMatcher.FindAllStringSubmatch(m[2], -1) {
					check(m[1], lm[1])
				}
			}
			for _, m := range promLabelVal.FindAllStringSubmatch(q.expr, -1) {
				check(m[1], m[2])
			}
			for _, m := range legendLabel.FindAllStringSubmatch(q.legend, -1) {
				for _, n := range names {
					check(n, m[1])
				}
			}
			for _, m := range dashVar.FindAllStringSubmatch(q.expr, -1) {
				if !vars[m[1]] {
					t.Errorf("%s: %s: variable $%s is not defined", file, q.where, m[1])
				}
			}
		}
		// Every path series watch serves has a panel.
		for _, n := range []string{"interlink_path_mtu_bytes", "interlink_path_verdict", "interlink_path_problem", "interlink_path_rtt_seconds",
			"interlink_path_probe_loss_ratio", "interlink_agent_up", "interlink_agent_handshake_seconds"} {
			if !seen[n] {
				t.Errorf("%s: no panel shows %s", file, n)
			}
		}
	}
}
