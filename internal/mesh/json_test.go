package mesh

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/pmtu"
)

// WriteJSON writes what an indenting json.Encoder writes (report.JSON),
// byte for byte, with paths measured, failed and not tried, and with none.
func TestWriteJSONAsEncoder(t *testing.T) {
	ok := true
	full := &Result{Schema: "interlink.mesh/v1", Nodes: []Node{{Name: "a<b>", Agent: "198.18.0.1"}}, Networks: 1, Expect: 9000,
		PerNode: 4, MaxPerNode: 12, Slowest: &NodeTime{Node: "a", Pairs: 2, Spent: time.Second, Waited: time.Millisecond},
		Paths: []Path{
			{From: "a", To: "b", Network: 1, MeetsExpect: &ok, Result: pmtu.Result{Verdict: pmtu.OK, PathMTU: 9000, Detail: "x \"y\" & z"}},
			{From: "b", To: "a", Network: 1, Skipped: SkipUnreachable, Error: "not tried"},
			{From: "a", To: "c", Network: 1, Error: "agent: i/o timeout"},
		},
		Unreachable: []Unreachable{{Node: "c", Cause: "refused"}}, Stopped: "--timeout 1s reached", Elapsed: time.Second}
	for name, res := range map[string]*Result{
		"full":     full,
		"no paths": {Schema: "interlink.mesh/v1", Paths: []Path{}},
		"nil":      {Schema: "interlink.mesh/v1"},
	} {
		var want, got bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			t.Fatal(err)
		}
		if err := WriteJSON(&got, res); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("%s: WriteJSON\n%s\nencoder\n%s", name, got.String(), want.String())
		}
	}
}
