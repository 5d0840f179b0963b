package ab

import (
	"strings"
	"testing"
)

// A storage bench over nfs:// gets its RPC counts as default metrics; a
// procedure it never issued reads as zero, not as a missing value.
func TestStorageDefaultMetrics(t *testing.T) {
	doc := `{"schema":"interlink.storage/v1","duration_ns":4160000000,"cpu_ns_per_io":1200,
		"emulation":{"calls":{"GETATTR":2011,"WRITE":1759,"COMMIT":0},"calls_total":7792}}`
	ms := chooseMetrics([]byte(doc))
	var names []string
	got := map[string]float64{}
	for _, m := range ms {
		names = append(names, m.Name)
		v, err := m.Extract([]byte(doc), ParseJSON([]byte(doc)), 0)
		if err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
		got[m.Name] = v
	}
	if strings.Join(names, " ") != "storage_time rpc_calls getattr_calls commit_calls write_calls" {
		t.Errorf("metrics %v", names)
	}
	if got["storage_time"] != 4.16e9 || got["rpc_calls"] != 7792 || got["getattr_calls"] != 2011 || got["commit_calls"] != 0 || got["write_calls"] != 1759 {
		t.Errorf("values %v", got)
	}
	local := chooseMetrics([]byte(`{"schema":"interlink.storage/v1"}`))
	if len(local) != 2 || local[0].Name != "storage_time" || local[1].Name != "cpu_per_io" {
		t.Errorf("local storage metrics %+v", local)
	}
}
