package store

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestHistoryDoc: an empty listing is [] in JSON and one line of text.
func TestHistoryDoc(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "h.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h := NewHistory(s, nil)
	data, err := json.Marshal(h)
	if err != nil || !strings.HasSuffix(string(data), `"results":[]}`) || !strings.HasPrefix(string(data), `{"schema":"interlink.history/v1","db":`) {
		t.Errorf("JSON %s, %v", data, err)
	}
	var b strings.Builder
	if err := h.WriteText(&b); err != nil || b.String() != "no saved results match in "+s.Path()+"\n" {
		t.Errorf("text %q, %v", b.String(), err)
	}
	h.Results = []Record{{ID: 7, Host: "db1", Command: "mesh", Labels: map[string]string{"b": "2", "a": "1"}, Summary: "OK"}}
	b.Reset()
	if err := h.WriteText(&b); err != nil || !strings.Contains(b.String(), "a=1,b=2") || !strings.HasPrefix(b.String(), "ID  ") {
		t.Errorf("text %q, %v", b.String(), err)
	}
}
