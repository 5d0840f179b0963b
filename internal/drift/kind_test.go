package drift

import (
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/ab"
	"github.com/interlink/interlink/internal/gc"
	"github.com/interlink/interlink/internal/pmtu"
	"github.com/interlink/interlink/internal/rules"
	"github.com/interlink/interlink/internal/traffic"
)

// Each kind compares with itself under its schema, and with any other
// kind is refused as a mismatch naming both commands.
func TestCompareKinds(t *testing.T) {
	kinds := []struct {
		schema string
		v      func() any
	}{
		{pmtu.ReportSchema, func() any { return &pmtu.Report{} }},
		{rules.Schema, func() any { return &rules.Result{} }},
		{traffic.Schema, func() any { return &traffic.Report{} }},
		{ab.Schema, func() any { return &ab.Result{} }},
		{gc.Schema, func() any { return &gc.Report{} }},
	}
	for i, a := range kinds {
		d, err := Compare(a.v(), a.v())
		if err != nil || d.Kind != a.schema || d.Verdict != NoChange {
			t.Errorf("%s with itself: %+v, %v", a.schema, d, err)
		}
		for j, b := range kinds {
			if i == j {
				continue
			}
			_, err := Compare(a.v(), b.v())
			if err == nil || !strings.Contains(err.Error(), "compare results of one command") ||
				!strings.Contains(err.Error(), kind(a.v())) || !strings.Contains(err.Error(), kind(b.v())) {
				t.Errorf("%s with %s: %v, want a mismatch naming both", a.schema, b.schema, err)
			}
		}
	}
}
