package db

import (
	"slices"
	"testing"
)

func TestSpecHosts(t *testing.T) {
	for _, tc := range []struct {
		dsns []string
		want []string
	}{
		{[]string{"postgres://u@198.18.10.2:5433/db"}, []string{"198.18.10.2:5433"}},
		{[]string{"host=198.18.10.2,198.18.10.3 dbname=x user=u"}, []string{"198.18.10.2:5432", "198.18.10.3:5432"}},
		{[]string{"mysql://u:p@198.18.20.1,198.18.20.2:3307/db", "mysql://u:p@[fd00::1]/db"}, []string{"198.18.20.1:3306", "198.18.20.2:3307", "[fd00::1]:3306"}},
		{[]string{"mysql://198.18.20.1/db"}, nil}, // no user: does not parse
	} {
		if got := (Spec{DSNs: tc.dsns}).Hosts(); !slices.Equal(got, tc.want) {
			t.Errorf("%q: %q, want %q", tc.dsns, got, tc.want)
		}
	}
}
