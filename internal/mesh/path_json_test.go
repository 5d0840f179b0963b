package mesh

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/pmtu"
)

// A path not tried (an agent unreachable) has no probe figures in the
// JSON: it read verdict "", local_mtu 0, probes 0, elapsed_ns 0. A tried
// path keeps them, and both read back.
func TestPathJSONNotTried(t *testing.T) {
	skipped := Path{From: "a", To: "b", Network: 1, FromAddr: "10.0.0.1", ToAddr: "10.0.0.2", Error: "not tried: agent of b unreachable", Skipped: SkipUnreachable}
	js, err := json.Marshal(skipped)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"verdict", "local_mtu", "probes", "elapsed_ns", "header_bytes", "lost", "direction", "detail"} {
		if strings.Contains(string(js), `"`+k+`"`) {
			t.Errorf("a path not tried has %s: %s", k, js)
		}
	}
	var back Path
	if err := json.Unmarshal(js, &back); err != nil || back.Skipped != SkipUnreachable || back.To != "b" || back.Error == "" {
		t.Errorf("read back %+v, %v", back, err)
	}
	tried := Path{From: "a", To: "b", Network: 1, Result: pmtu.Result{Verdict: pmtu.OK, PathMTU: 9000, LocalMTU: 9000, Probes: 3}}
	js, _ = json.Marshal(tried)
	if !strings.Contains(string(js), `"verdict":"ok"`) || !strings.Contains(string(js), `"probes":3`) || !strings.Contains(string(js), `"lost":0`) {
		t.Errorf("a tried path lost its figures: %s", js)
	}
}
