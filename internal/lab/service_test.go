package lab

import "testing"

func TestSynchronousStandbyNames(t *testing.T) {
	top, err := Load("pg")
	if err != nil {
		t.Fatal(err)
	}
	if got := synchronousStandbyNames(top.SyncStandbys("primary")); got != `'FIRST 1 ("standby")'` {
		t.Fatalf("synchronous_standby_names %s", got)
	}
	if got := synchronousStandbyNames(nil); got != "''" {
		t.Fatalf("no standbys: %s", got)
	}
}
