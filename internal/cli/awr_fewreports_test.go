package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestAWRDiffTooFewReports: two reports a side (the text and HTML forms of
// one 19c report before the change and one after) cannot give a 95 %
// interval: awr diff prints the 66.6 % intervals as such, gives no metric a
// verdict, says four reports a side would, and exits 0 both ways round,
// where it used to call ten metrics better (and reversed, worse: exit 1).
func TestAWRDiffTooFewReports(t *testing.T) {
	before := []string{filepath.Join(awrData, "19c-awrrpt-rac-mtu1500.txt"), filepath.Join(awrData, "19c-awrrpt-rac-mtu1500.html")}
	after := []string{filepath.Join(awrData, "19c-awrrpt-rac-mtu9000.txt"), filepath.Join(awrData, "19c-awrrpt-rac-mtu9000.html")}
	for _, dir := range [][2][]string{{before, after}, {after, before}} {
		args := append(append(append([]string{"awr", "diff"}, dir[0]...), "--"), dir[1]...)
		out, errs, code := runAWR(t, args...)
		if code != ExitOK || errs != "" || !strings.Contains(out, "too few reports for 95 % (need 4 a side)") ||
			!strings.Contains(out, "0.250 to 0.250 (66.6 %)") && !strings.Contains(out, "4.000 to 4.000 (66.6 %)") ||
			!strings.Contains(out, "summary: 0 better, 0 worse") || strings.Contains(out, "0.0500000") {
			t.Errorf("%v: exit %d %s\n%s", args, code, errs, out)
		}
		out, _, code = runAWR(t, append([]string{"awr", "diff", "--json"}, args[2:]...)...)
		var d struct {
			HolmFamily int `json:"holm_family"`
			Instances  []struct {
				Metrics []struct {
					Metric  string   `json:"metric"`
					Verdict string   `json:"verdict"`
					PHolm   *float64 `json:"p_holm"`
					RatioCI *struct {
						Achieved float64 `json:"achieved"`
					} `json:"ratio_ci"`
				} `json:"metrics"`
			} `json:"instances"`
		}
		if err := json.Unmarshal([]byte(out), &d); err != nil || code != ExitOK || len(d.Instances) != 1 || d.HolmFamily < 10 {
			t.Fatalf("--json: exit %d, %v, family %d\n%s", code, err, d.HolmFamily, out)
		}
		for _, m := range d.Instances[0].Metrics {
			if m.Metric == "gc_cr_receive_ms" && (m.PHolm == nil || m.RatioCI == nil || m.RatioCI.Achieved > 0.67 || !strings.HasPrefix(m.Verdict, "no verdict: ")) {
				t.Errorf("gc_cr_receive_ms: %+v", m)
			}
		}
	}
}
