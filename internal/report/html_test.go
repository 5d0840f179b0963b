package report

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/ab"
	"github.com/interlink/interlink/internal/mesh"
	"github.com/interlink/interlink/internal/pmtu"
	"github.com/interlink/interlink/internal/rules"
	"github.com/interlink/interlink/internal/traffic"
)

// The fixtures under testdata are real --json outputs, captured from one
// run of the demo lab (three nodes, node3's switch port at 1500): lab
// demo, then pmtu, bench (udp, blocks, tcp), mesh, check and an ab over
// the interconnect MTU, run inside its nodes; lab-gc.json is bench --mode
// gc on the jumbo lab with node2's switch port set to 1500 (the blackhole
// built-in).
func fixture(t *testing.T, name string) any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	v, _, err := Decode(b)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return v
}

func render(t *testing.T, results ...any) string {
	t.Helper()
	var b bytes.Buffer
	if err := HTML(&b, Page{Title: "test", Generated: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Results: results}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestDecodeFixtures(t *testing.T) {
	files, _ := filepath.Glob("testdata/lab-*.json")
	if len(files) < 9 {
		t.Fatalf("want the 9 captured fixtures, found %d", len(files))
	}
	seen := map[string]bool{}
	for _, f := range files {
		b, _ := os.ReadFile(f)
		_, schema, err := Decode(b)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		seen[schema] = true
	}
	for _, s := range Schemas {
		if !seen[s] {
			t.Errorf("no fixture has schema %s", s)
		}
	}
}

func TestDecodeBadInput(t *testing.T) {
	for in, want := range map[string]string{
		`{"schema":`:                        "bad JSON",
		`[1,2]`:                             "bad JSON",
		`{"paths":[]}`:                      `no "schema" field`,
		`{"schema":"interlink.version/v1"}`: `schema "interlink.version/v1" is not one of`,
		`{"schema":"interlink.mesh/v1","nodes":3}`: "interlink.mesh/v1",
	} {
		_, _, err := Decode([]byte(in))
		if !errors.Is(err, ErrSchema) || !strings.Contains(err.Error(), want) {
			t.Errorf("Decode(%s) = %v, want ErrSchema saying %q", in, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("Decode(%s): error spans lines: %q", in, err)
		}
	}
}

// count returns how many times re matches page.
func count(page, re string) int { return len(regexp.MustCompile(re).FindAllStringIndex(page, -1)) }

func TestHTMLCharts(t *testing.T) {
	m := fixture(t, "lab-mesh.json").(*mesh.Result)
	page := render(t, m)
	if n := count(page, `class="chart heatmap mesh-heatmap"`); n != m.Networks {
		t.Errorf("%d heatmaps, want one per network (%d)", n, m.Networks)
	}
	// One titled cell per path: the tooltip names both ends and the verdict.
	if n := count(page, `<rect [^>]*><title>node\d -&gt; node\d \(`); n != len(m.Paths) {
		t.Errorf("%d heatmap cells with a verdict, want %d paths", n, len(m.Paths))
	}
	if !strings.Contains(page, "blackhole (silently dropped)") || !strings.Contains(page, `stroke="#b71c1c"`) {
		t.Error("the blackhole paths below --expect are not marked")
	}

	bench := render(t, fixture(t, "lab-bench-blocks.json"))
	for _, c := range []string{"timeseries bench-rate", "timeseries bench-rtt", "cdf bench-cdf", "bars bench-fragments", "bars bench-cpu"} {
		if !strings.Contains(bench, `class="chart `+c+`"`) {
			t.Errorf("bench blocks report lacks the %s chart", c)
		}
	}
	abPage := render(t, fixture(t, "lab-ab.json"))
	if count(abPage, `class="chart forest ab-verdict"`) != 1 || count(abPage, `class="chart strip ab-runs"`) != 6 {
		t.Error("ab report: want one verdict chart and one run-order chart per metric (6)")
	}
	// Run order: every run (12, warm-ups included) is a point on each strip.
	if n := count(abPage, `<title>run \d+, arm [AB]: `); n != 6*12 {
		t.Errorf("ab report: %d run points, want 72", n)
	}
	// The fixture predates primary and secondary metrics: no roles shown.
	// With them, each metric's heading says its role and the page says how
	// the secondary ones were corrected.
	if strings.Contains(abPage, "; primary)") || strings.Contains(abPage, "Holm") {
		t.Error("ab report: a document without metric roles shows them")
	}
	abr := fixture(t, "lab-ab.json").(*ab.Result)
	abr.Primary, abr.PrimaryFrom, abr.HolmFamily = []string{abr.Stats[0].Metric}, "first metric", len(abr.Stats)-1
	abr.Stats[0].Primary = true
	roles := render(t, abr)
	if count(roles, `; primary\)</h3>`) != 1 || count(roles, `; secondary\)</h3>`) != 5 ||
		!strings.Contains(roles, "The question: "+abr.Stats[0].Metric+" (the first metric") || !strings.Contains(roles, "Holm-corrected across 5") {
		t.Error("ab report: the roles of the metrics are not shown")
	}
	chk := render(t, fixture(t, "lab-check.json"))
	if !strings.Contains(chk, `<div class="finding warning">`) || !strings.Contains(chk, "<dt>fix</dt>") || !strings.Contains(chk, "<dt>evidence</dt>") {
		t.Error("check report: findings lack severity, evidence or fix")
	}
	demoPage := render(t, fixture(t, "lab-demo.json"))
	for _, c := range []string{"heatmap mesh-heatmap", "bars demo-rate", "bars demo-fragments", "cdf demo-cdf", "bars demo-tcp"} {
		if !strings.Contains(demoPage, `class="chart `+c+`"`) {
			t.Errorf("demo report lacks the %s chart", c)
		}
	}
	pm := render(t, fixture(t, "lab-pmtu.json"))
	if !strings.Contains(pm, "pmtu-bars") || !strings.Contains(pm, "BELOW 9000") {
		t.Error("pmtu report lacks its bars or the --expect verdict")
	}
}

// TestHTMLSelfContained: nothing in a report refers to the network, and a
// policy forbids fetching anything should a later change try.
func TestHTMLSelfContained(t *testing.T) {
	files, _ := filepath.Glob("testdata/lab-*.json")
	var all []any
	for _, f := range files {
		all = append(all, fixture(t, filepath.Base(f)))
	}
	page := render(t, all...)
	if !strings.Contains(page, `content="default-src 'none'; style-src 'unsafe-inline'; img-src data:"`) {
		t.Error("no Content-Security-Policy forbidding fetches")
	}
	for _, bad := range []string{"<script", " src=", "<link", "@import", "url("} {
		if strings.Contains(page, bad) {
			t.Errorf("report holds %q", bad)
		}
	}
	if n := len(regexp.MustCompile(`https?://`).FindAllString(page, -1)); n != count(page, `xmlns="http://www.w3.org/2000/svg"`) {
		t.Errorf("report holds URLs other than the SVG namespace")
	}
	if len(page) > 400<<10 {
		t.Errorf("every fixture in one report takes %d KiB; keep reports small", len(page)>>10)
	}
}

// TestHTMLEscapes feeds markup through every kind of text a result holds
// (node names, details, evidence, fixes) and wants it shown, not obeyed.
func TestHTMLEscapes(t *testing.T) {
	evil := `<script>alert(1)</script>"><img src=x onerror=alert(2)>`
	m := &mesh.Result{Schema: "interlink.mesh/v1", Networks: 1, Nodes: []mesh.Node{{Name: evil}, {Name: "b"}},
		Paths: []mesh.Path{{From: evil, To: "b", Network: 1, Result: pmtu.Result{Verdict: pmtu.Blackhole, PathMTU: 1500, Detail: evil}},
			{From: "b", To: evil, Network: 1, Error: evil}}}
	c := &rules.Result{Schema: rules.Schema, Node: rules.Result{}.Node, Findings: []rules.Finding{{Rule: "X", Severity: rules.Critical,
		Object: evil, Message: evil, Fix: evil, Source: evil, Evidence: []rules.Evidence{{What: evil, Value: evil, File: evil}}}},
		Summary: rules.Summary{Status: "CRITICAL", Critical: 1}}
	c.Node.Hostname = evil
	page := render(t, m, c)
	for _, bad := range []string{"<script>", "<img"} {
		if i := strings.Index(page, bad); i >= 0 {
			t.Errorf("markup from a result reached the page raw: %q", page[max(0, i-80):i+20])
		}
	}
	if count(page, "&lt;script&gt;alert\\(1\\)&lt;/script&gt;") < 5 {
		t.Error("the escaped text is not shown")
	}
}

func TestHTMLUnknownType(t *testing.T) {
	if err := HTML(&bytes.Buffer{}, Page{Results: []any{42}}); err == nil {
		t.Error("rendering an int succeeded")
	}
}

// TestHTMLLargeMesh: a 200-node mesh shows the nodes on problem paths in
// its heatmap, says so, and stays small; a 40-node one shows every cell.
func TestHTMLLargeMesh(t *testing.T) {
	big := func(n int, bad map[int]bool) *mesh.Result {
		r := &mesh.Result{Schema: "interlink.mesh/v1", Networks: 1}
		for i := range n {
			r.Nodes = append(r.Nodes, mesh.Node{Name: fmt.Sprintf("db%03d", i)})
		}
		for i := range n {
			for j := range n {
				if i == j {
					continue
				}
				p := mesh.Path{From: r.Nodes[i].Name, To: r.Nodes[j].Name, Network: 1, Result: pmtu.Result{Verdict: pmtu.OK, PathMTU: 9000}}
				if bad[i] || bad[j] {
					p.Verdict, p.PathMTU = pmtu.Blackhole, 1500
				}
				r.Paths = append(r.Paths, p)
			}
		}
		return r
	}
	page := render(t, big(200, map[int]bool{7: true, 150: true}))
	// Every node has a path to db007: all 200 are on problem paths, the
	// heatmap shows 64 of them and the table 200 of the 794 paths.
	if !strings.Contains(page, "The mesh has 200 nodes; the heatmaps show the 64 nodes on problem paths (at most 64)") ||
		!strings.Contains(page, "Problem paths (794 of 39800; the first 200 shown, the JSON result holds every path)") {
		t.Errorf("no note on the bounded heatmap or table")
	}
	if n := count(page, `<rect [^>]*><title>db`); n != 64*63 {
		t.Errorf("%d heatmap cells, want 64 x 63", n)
	}
	if len(page) > 3<<20 {
		t.Errorf("a 200-node mesh report takes %d KiB", len(page)>>10)
	}
	page = render(t, big(40, nil))
	if n := count(page, `<rect [^>]*><title>db`); n != 40*39 {
		t.Errorf("%d heatmap cells, want 40 x 39", n)
	}
	t.Logf("40 nodes, all ok: %d KiB", len(page)>>10)
}

// A cluster run from the lab (nodes from a grid home, node4 unreachable,
// node3's switch port at 1500, a blocks bench ring): the page has the
// nodes with their status, a heatmap per interconnect network, the bench
// pairs with their verdicts, and each reached node's check.
func TestHTMLCluster(t *testing.T) {
	page := render(t, fixture(t, "lab-cluster.json"))
	for s, want := range map[string]int{
		`class="chart heatmap mesh-heatmap"`:              2,
		`<h2>check: node`:                                 3,
		`<td class="critical">unreachable (refused)</td>`: 1,
		`<td class="critical">failed</td>`:                4,
		`<td class="ok">ok</td>`:                          2 + 3, // bench pairs and reached nodes
		"crsconfig_params":                                1,     // where the nodes came from
		"198.18.10.1 -&gt; 198.18.10.2":                   1,
		"no-data":                                         4,
	} {
		if n := strings.Count(page, s); n < want {
			t.Errorf("page has %q %d times, want at least %d", s, n, want)
		}
	}
}

// TestHTMLBenchVerdict: a bench run held back by a limit says so in HTML as
// in text (loopback-bench-udp-limited.json is a real udp --reverse run
// against an agent started with --max-rate 10M), and a failed run shows why.
func TestHTMLBenchVerdict(t *testing.T) {
	limited := fixture(t, "loopback-bench-udp-limited.json").(*traffic.Report)
	page := render(t, limited)
	if !strings.Contains(page, "limited by agent-rate: the agent&#39;s send limit of 10.0 Mbit/s per session") {
		t.Error("the agent-rate limit that held the run back is not in the report")
	}
	if !regexp.MustCompile(`class="badge warning"[^>]*>limited<`).MatchString(page) {
		t.Error("a limited run is not badged as a warning")
	}
	failed := fixture(t, "lab-bench-udp.json").(*traffic.Report)
	failed.Verdict = traffic.VerdictFailed
	failed.Problems = []traffic.Problem{{Problem: traffic.ProblemStalled, Direction: traffic.Forward, Detail: "the receiver stopped hearing"}}
	page = render(t, failed)
	if !strings.Contains(page, "forward stalled: the receiver stopped hearing") || !regexp.MustCompile(`class="badge critical"[^>]*>failed<`).MatchString(page) {
		t.Error("a failed run does not show its problem and verdict")
	}
	if ok := render(t, fixture(t, "lab-bench-tcp.json")); strings.Contains(ok, "<h3>Problems</h3>") {
		t.Error("a run without problems lists some")
	}
}

// The HTML qualifies the packet figures as the text does: other traffic in
// the counters, or both ends in one namespace.
func TestHTMLBenchPacketsNote(t *testing.T) {
	r := fixture(t, "loopback-bench-udp-limited.json").(*traffic.Report)
	f := &r.Flows[0].Summary
	for _, c := range []struct {
		shared  bool
		foreign int64
		want    string
	}{{true, 0, "both ends ran in one network namespace"}, {true, 5000, "5000 UDP datagrams not of this run"}} {
		f.SharedNetns, f.ForeignUDP, f.PacketsPerMessage = c.shared, c.foreign, 2
		if page := render(t, r); !strings.Contains(page, c.want) {
			t.Errorf("shared %v, foreign %d: the HTML lacks %q", c.shared, c.foreign, c.want)
		}
	}
}

// A direction no probe crossed has no path MTU: "-" in HTML as n/a in
// text, not 0.
func TestHTMLPMTUNone(t *testing.T) {
	r := fixture(t, "lab-pmtu.json").(*pmtu.Report)
	r.Directions[0].PathMTU, r.Directions[0].PeerMTU = 0, 0
	page := render(t, r)
	if strings.Contains(page, ">0<") || !strings.Contains(page, "- ("+string(r.Directions[0].Verdict)+")") {
		t.Error("a path MTU no probe showed reads as a figure")
	}
}
