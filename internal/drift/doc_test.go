package drift

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestDoc: the document leaves the compared values out and says where
// each result came from; the text names both and counts the changes.
func TestDoc(t *testing.T) {
	at := time.Date(2026, 11, 21, 16, 59, 30, 0, time.UTC)
	d := Doc{Schema: Schema,
		Baseline: Ref{ID: 1, Name: "good", Command: "check", Host: "db1", Time: at, Value: 42},
		Result:   Ref{File: "now.json", Command: "check", Value: 43},
		Diff: &Diff{Kind: "interlink.check/v1", Compared: 3, Verdict: Worse,
			Changes: []Change{{What: "finding X", Before: "absent", After: "critical", Worse: true}}}}
	data, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"schema":"interlink.diff/v1","baseline":{"id":1,"name":"good","command":"check","host":"db1","time":"2026-11-21T16:59:30Z"},"result":{"file":"now.json","command":"check"},"diff":{"kind":"interlink.check/v1","changes":[{"what":"finding X","before":"absent","after":"critical","worse":true}],"compared":3,"verdict":"worse"}}`
	if string(data) != want {
		t.Errorf("JSON\n%s\nwant\n%s", data, want)
	}
	var b strings.Builder
	d.WriteText(&b)
	for _, s := range []string{"interlink diff: check result now.json\n", `against check result 1 "good" (`, "WORSE   finding X: absent -> critical", "worse: 1 change(s), 1 worse, among 3 compared\n"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("text lacks %q:\n%s", s, b.String())
		}
	}
}
