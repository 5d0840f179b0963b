package rules

import (
	"reflect"
	"testing"
)

// TestSummarize: the counts by severity, and the worst finding's verdict
// and exit code (info alone is OK), with NotFullyRead empty, not null.
func TestSummarize(t *testing.T) {
	f := func(sev ...Severity) []Finding {
		var fs []Finding
		for _, s := range sev {
			fs = append(fs, Finding{Severity: s})
		}
		return fs
	}
	for _, c := range []struct {
		fs   []Finding
		want Summary
	}{
		{nil, Summary{Status: "OK", NotFullyRead: []string{}}},
		{f(Info, Info), Summary{Info: 2, Status: "OK", NotFullyRead: []string{}}},
		{f(Info, Warning, Warning), Summary{Warning: 2, Info: 1, Status: "WARNING", ExitCode: 1, NotFullyRead: []string{}}},
		{f(Warning, Critical, Info), Summary{Critical: 1, Warning: 1, Info: 1, Status: "CRITICAL", ExitCode: 2, NotFullyRead: []string{}}},
	} {
		if got := Summarize(c.fs); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%v: %+v, want %+v", c.fs, got, c.want)
		}
	}
}
