package ab

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSchedule(t *testing.T) {
	s := Schedule(OrderABBA, 4, 1, 0)
	var got strings.Builder
	for _, x := range s {
		c := "AB"[x.Arm : x.Arm+1]
		if x.Warmup {
			c = strings.ToLower(c)
		}
		got.WriteString(c)
	}
	if got.String() != "abABBAABBA" {
		t.Errorf("ABBA schedule %s, want abABBAABBA", got.String())
	}
	// Random: every pair holds one A and one B, and the seed decides.
	r1, r2 := Schedule(OrderRandom, 50, 0, 7), Schedule(OrderRandom, 50, 0, 7)
	firstB := 0
	for i := 0; i < len(r1); i += 2 {
		if r1[i].Arm+r1[i+1].Arm != 1 {
			t.Fatalf("pair %d is not one A and one B", i/2)
		}
		if r1[i] != r2[i] {
			t.Fatal("same seed, different order")
		}
		firstB += r1[i].Arm
	}
	if firstB < 10 || firstB > 40 {
		t.Errorf("B came first in %d of 50 random pairs", firstB)
	}
}

func TestParseMetric(t *testing.T) {
	for _, tc := range []struct {
		arg, err string
		lower    bool
	}{
		{"blocks_per_sec", "", false},
		{"rtt_p50", "", true},
		{"wall", "", true},
		{"tps=tps = ([0-9.]+)", "", false},
		{"latency=latency average = ([0-9.]+) ms", "", true},
		{"latency+=x ([0-9]+)", "", false},
		{"score-=json:a.b.0", "", true},
		{"nosuch", "not a metric interlink knows", false},
		{"tps=tps = [0-9.]+", "capture group", false},
		{"tps=([", "missing closing", false},
		{"=x(1)", "a name of letters", false},
		{"a b=(x)", "a name of letters", false},
		{"x=json:", "empty JSON path", false},
	} {
		m, err := ParseMetric(tc.arg)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseMetric(%q) error %v, want %q", tc.arg, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseMetric(%q): %v", tc.arg, err)
			continue
		}
		if m.LowerBetter != tc.lower {
			t.Errorf("ParseMetric(%q) lower-is-better %v, want %v", tc.arg, m.LowerBetter, tc.lower)
		}
	}
}

// benchDoc is the shape of `interlink bench --json` (two flows, as --bidir
// prints), trimmed to what the metrics read.
const benchDoc = `{"schema":"interlink.bench/v1","spec":{"mode":"blocks"},"flows":[
 {"summary":{"bits_per_sec":1.5e9,"messages_per_sec":22000,"rtt":{"p50_ns":41000,"p99_ns":98000},
   "fragments_per_message":6,"client_cost":{"cpu_ns_per_message":20100}}},
 {"summary":{"bits_per_sec":0.5e9,"messages_per_sec":8000,"rtt":{"p50_ns":45000,"p99_ns":99000},
   "fragments_per_message":6,"client_cost":{"cpu_ns_per_message":19000}}}]}`

func TestExtract(t *testing.T) {
	doc := ParseJSON([]byte(benchDoc + "\n"))
	for _, tc := range []struct {
		metric string
		want   float64
		err    string
	}{
		{"bits_per_sec", 2e9, ""},     // summed over flows
		{"blocks_per_sec", 30000, ""}, // summed
		{"rtt_p50", 41000, ""},        // the first flow's
		{"fragments_per_message", 6, ""},
		{"retransmits", 0, ""}, // omitted by omitempty: zero
		{"cpu_per_message_server", 0, "not in the run's JSON"},
		// Absent beside figures that are there: not measured, not 0.
		{"packets_per_message", 0, "not in the run's JSON"},
		{"softirq_per_message_client", 0, "not in the run's JSON"},
		{"x=json:flows.1.summary.rtt.p99_ns", 99000, ""},
		{"x=json:flows.7.summary", 0, "not in the run's JSON"},
		{"x=json:spec.mode", 0, "not a number"},
	} {
		m, err := ParseMetric(tc.metric)
		if err != nil {
			t.Fatal(err)
		}
		got, err := m.Extract([]byte(benchDoc), doc, time.Second)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.metric, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s = %v, %v; want %v", tc.metric, got, err, tc.want)
		}
	}
	m, _ := ParseMetric("blocks_per_sec")
	if _, err := m.Extract([]byte(`{"schema":"interlink.pmtu/v1"}`), ParseJSON([]byte(`{"schema":"interlink.pmtu/v1"}`)), 0); err == nil ||
		!strings.Contains(err.Error(), "wants a interlink.bench/v1 document") {
		t.Errorf("a pmtu document gave %v", err)
	}
	re, _ := ParseMetric("tps=tps = ([0-9.]+)")
	if v, err := re.Extract([]byte("latency average = 4.6 ms\ntps = 1712.381 (without initial connection time)\n"), nil, 0); v != 1712.381 || err != nil {
		t.Errorf("pgbench tps = %v, %v", v, err)
	}
	if _, err := re.Extract([]byte("nothing here"), nil, 0); err == nil {
		t.Error("a regex that matches nothing gave a value")
	}
}

func TestParseExpect(t *testing.T) {
	e, err := ParseExpect("blocks_per_sec: B > 1.2x A")
	if err != nil || e.Metric != "blocks_per_sec" || !e.Greater || e.Factor != 1.2 {
		t.Errorf("got %+v, %v", e, err)
	}
	e, err = ParseExpect(" rtt_p50 :B<A ")
	if err != nil || e.Greater || e.Factor != 0 {
		t.Errorf("got %+v, %v", e, err)
	}
	for _, bad := range []string{"B > A", "x: A > B", "x: B >= A", "x: B > 0x A", "x: B > -1x A"} {
		if _, err := ParseExpect(bad); err == nil {
			t.Errorf("ParseExpect(%q) accepted", bad)
		}
	}
}

// fakeResult builds a result from values per arm, as runs in ABBA order.
func fakeResult(a, b []float64, lower bool, expect ...string) *Result {
	m, _ := ParseMetric("m=(x)")
	m.LowerBetter = lower
	s := Spec{A: Arm{Name: "A"}, B: Arm{Name: "B"}, Runs: len(a), Metrics: []Metric{m}}
	s.defaults()
	for _, x := range expect {
		e, _ := ParseExpect(x)
		s.Expect = append(s.Expect, e)
	}
	r := newResult(s)
	for i, slot := range Schedule(OrderABBA, len(a), 0, 0) {
		v := []float64{a[i/2], b[i/2]}[slot.Arm]
		r.Runs = append(r.Runs, Run{Index: i, Arm: []string{"A", "B"}[slot.Arm], Metrics: map[string]float64{"m": v}})
	}
	r.finish()
	return r
}

func TestVerdicts(t *testing.T) {
	a := []float64{18902, 19410, 18655, 19120, 18777, 19305}
	b := []float64{26002, 25410, 26630, 25120, 26777, 25905}
	r := fakeResult(a, b, false, "m: B > A", "m: B > 1.3x A")
	if r.Verdict != VerdictOK {
		t.Errorf("verdict %s: %+v", r.Verdict, r.Expect)
	}
	if s := r.Stats[0].Summary; !strings.HasPrefix(s, "B is 1.37x A (95 % CI 1.33 to 1.41): better") {
		t.Errorf("summary %q", s)
	}
	if r := fakeResult(a, b, false, "m: B > 1.5x A"); r.Verdict != VerdictCritical || r.Expect[0].Outcome != Contradicted {
		t.Errorf("B > 1.5x A on a 1.37x result: %s %s", r.Verdict, r.Expect[0].Outcome)
	}
	if r := fakeResult(a, b, true); r.Stats[0].Better != "A" || !strings.HasSuffix(r.Stats[0].Summary, "worse") {
		t.Errorf("lower is better: better %q, %q", r.Stats[0].Better, r.Stats[0].Summary)
	}
	same := fakeResult([]float64{10.1, 9.8, 10.4, 10.0, 9.7, 10.3}, []float64{10.2, 9.9, 10.05, 10.35, 9.75, 10.15}, false, "m: B > A")
	if same.Verdict != VerdictWarning || same.Expect[0].Outcome != Inconclusive {
		t.Errorf("no difference: verdict %s outcome %s", same.Verdict, same.Expect[0].Outcome)
	}
	// The advice is arithmetic on the printed interval: half of 3.4 + 3.6
	// (3.49 unrounded), 6 (3.49 / 1)^2 = 73.08.
	if s, want := same.Stats[0].Summary, "no detectable difference: the 95 % CI -3.4 % to +3.6 % includes 0 (half-width 3.49 % at 6 runs per arm); about 6 * (3.49 / 1)^2 = 74 runs per arm would narrow it to +-1 %"; s != want {
		t.Errorf("summary\n%q, want\n%q", s, want)
	}
	if _, err := json.Marshal(same); err != nil {
		t.Errorf("result does not encode: %v", err)
	}
	// A steady rise over B's runs is drift; A holds still.
	drift := fakeResult([]float64{10, 10.2, 9.9, 10.1, 10, 9.8, 10.1, 10}, []float64{10, 10.5, 11, 11.5, 12, 12.5, 13, 13.5}, false)
	if drift.Stats[0].Drift[1] == nil || drift.Stats[0].Drift[0] != nil {
		t.Errorf("drift %v", drift.Stats[0].Drift)
	}
}

// script writes an executable shell script into a temp dir.
func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "arm.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestExecuteInterleavesAndPrepares(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	log := filepath.Join(dir, "log")
	// The arm's prepare step writes its configuration; the command reads
	// it and reports a figure that depends on it, as a real change would.
	cmd := script(t, `c=$(cat `+state+`); echo "$c" >> `+log+`; if [ "$c" = jumbo ]; then echo "rate = 130"; else echo "rate = 100"; fi`)
	m, _ := ParseMetric("rate=rate = ([0-9]+)")
	e, _ := ParseExpect("rate: B > 1.2x A")
	r := &Runner{Spec: Spec{
		A:    Arm{Name: "A", Command: []string{cmd}, Prepare: "echo std > " + state},
		B:    Arm{Name: "B", Command: []string{cmd}, Prepare: "echo jumbo > " + state},
		Runs: 4, Warmup: 1, Metrics: []Metric{m}, Expect: []Expectation{e},
	}}
	var progress int
	r.Progress = func(done []Run, total int) { progress++ }
	res, err := r.Execute(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(log)
	if got := strings.Fields(string(b)); strings.Join(got, " ") != "std jumbo std jumbo jumbo std std jumbo jumbo std" {
		t.Errorf("configurations seen by the runs: %v", got)
	}
	if progress != 10 || len(res.Runs) != 10 || !res.Runs[0].Warmup || res.Runs[2].Warmup {
		t.Errorf("progress %d, runs %+v", progress, res.Runs)
	}
	if res.Verdict != VerdictOK || res.Stats[0].Median != [2]float64{100, 130} {
		t.Errorf("verdict %s, medians %v", res.Verdict, res.Stats[0].Median)
	}
}

func TestExecuteFailures(t *testing.T) {
	ok := script(t, "echo v = 1")
	fail := script(t, "echo 'connection refused' >&2; exit 3")
	m, _ := ParseMetric("v=v = ([0-9]+)")
	spec := Spec{A: Arm{Name: "A", Command: []string{ok}}, B: Arm{Name: "B", Command: []string{fail}}, Runs: 2, Metrics: []Metric{m}}
	res, err := (&Runner{Spec: spec}).Execute(context.Background())
	if err == nil || !strings.Contains(err.Error(), "run 2 (B) failed: exit status 3: connection refused") {
		t.Errorf("error %v", err)
	}
	if res == nil || len(res.Runs) != 2 || res.Verdict != VerdictUnknown {
		t.Errorf("partial result %+v", res)
	}
	spec.B.Command = []string{ok}
	spec.B.Prepare = "exit 4"
	if _, err := (&Runner{Spec: spec}).Execute(context.Background()); err == nil || !strings.Contains(err.Error(), "prepare step of arm B (exit 4) failed: exit status 4") {
		t.Errorf("prepare failure: %v", err)
	}
	spec.B.Prepare = ""
	spec.B.Command = []string{script(t, "sleep 30")}
	spec.RunTimeout = 300 * time.Millisecond
	// The error says the timeout ended it (the script sleeps 30 s).
	if _, err := (&Runner{Spec: spec}).Execute(context.Background()); err == nil || !strings.Contains(err.Error(), "still running after 300ms") {
		t.Errorf("timeout: %v", err)
	}
}

func TestExecuteStopsAfterCurrentRun(t *testing.T) {
	m, _ := ParseMetric("v=v = ([0-9]+)")
	ctx, cancel := context.WithCancel(context.Background())
	spec := Spec{A: Arm{Name: "A", Command: []string{script(t, "echo v = 1")}}, B: Arm{Name: "B", Command: []string{script(t, "echo v = 2")}}, Runs: 5, Metrics: []Metric{m}}
	r := &Runner{Spec: spec, Progress: func(done []Run, total int) {
		if len(done) == 4 {
			cancel()
		}
	}}
	res, err := r.Execute(ctx)
	if err != nil || !res.Interrupted || len(res.Runs) != 4 || res.Verdict != VerdictWarning {
		t.Errorf("err %v interrupted %v runs %d verdict %s", err, res.Interrupted, len(res.Runs), res.Verdict)
	}
}

func TestValidate(t *testing.T) {
	base := func() Spec {
		return Spec{A: Arm{Name: "A", Command: []string{"true"}}, B: Arm{Name: "B", Command: []string{"true"}}}
	}
	for _, tc := range []struct {
		mod  func(*Spec)
		want string
	}{
		{func(s *Spec) { s.Runs = 1 }, "--runs 1"},
		{func(s *Spec) { s.Runs = 5000 }, "--runs 5000"},
		{func(s *Spec) { s.Warmup = -1 }, "--warmup -1"},
		{func(s *Spec) { s.Order = "zigzag" }, "--order"},
		{func(s *Spec) { s.Confidence = 1.5 }, "--confidence"},
		{func(s *Spec) { s.B.Command = nil }, "arm B has no command"},
		{func(s *Spec) {
			m, _ := ParseMetric("wall")
			e, _ := ParseExpect("tps: B > A")
			s.Metrics, s.Expect = []Metric{m}, []Expectation{e}
		}, `no metric named "tps"`},
	} {
		s := base()
		tc.mod(&s)
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate: %v, want %q", err, tc.want)
		}
	}
}

// A metric ab chose itself, beside the headline one, that a run's JSON
// lacks (fragments per message without the kernel's counters, or with
// other traffic in them) is left out for that run, which stays measured;
// the headline figure absent fails the run, as a --metric would.
func TestDefaultMetricAbsent(t *testing.T) {
	doc := `{"schema":"interlink.bench/v1","spec":{"mode":"blocks"},"flows":[{"summary":{"messages_per_sec":22000,"rtt":{"p50_ns":41000,"p99_ns":98000},"client_cost":{"cpu_ns_per_message":20100},"server_cost":{"cpu_ns_per_message":19000}}}]}`
	ms := chooseMetrics([]byte(doc))
	vals, failed := extract(ms, outcome{out: []byte(doc)})
	if _, there := vals["fragments_per_message"]; failed != "" || there || vals["blocks_per_sec"] != 22000 {
		t.Errorf("fragments absent: values %v, failed %q", vals, failed)
	}
	noHeadline := strings.Replace(doc, `"messages_per_sec":22000,`, "", 1)
	if _, failed := extract(ms, outcome{out: []byte(noHeadline)}); !strings.Contains(failed, "blocks_per_sec") {
		t.Errorf("headline absent: failed %q", failed)
	}
}

// A metric without statistics (no run gave it a value) has no p-value,
// shift or detectable shift in the JSON, and null for an arm's median:
// it read "p_value": 0 and medians of 0.
func TestStatsJSONWithout(t *testing.T) {
	m := MetricStats{Metric: "fragments_per_message", N: [2]int{0, 3}, Median: [2]float64{0, 6}, Error: "0 runs of A and 3 of B gave a value"}
	js, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"p_value"`, `"shift"`, `"detectable_shift"`} {
		if strings.Contains(string(js), k) {
			t.Errorf("no statistics, yet %s: %s", k, js)
		}
	}
	if !strings.Contains(string(js), `"median":[null,6]`) {
		t.Errorf("medians: %s", js)
	}
	m.Error, m.N, m.P = "", [2]int{3, 3}, 0.1
	if js, _ := json.Marshal(m); !strings.Contains(string(js), `"p_value":0.1`) || !strings.Contains(string(js), `"median":[0,6]`) {
		t.Errorf("with statistics: %s", js)
	}
}
