package report

import (
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/rules"
)

// TestFindingsText holds the one findings writer check's and awr's text
// share: severities in order critical, warning, info (empty groups left
// out), rule ids in one column as wide as the longest, the first evidence
// labelled and the rest under it, then fix and source.
func TestFindingsText(t *testing.T) {
	var b strings.Builder
	p := &printer{w: &b}
	findingsText(p, []rules.Finding{
		{Rule: "INFO-1", Severity: rules.Info, Object: "node", Message: "fyi", Fix: "none", Source: "s3"},
		{Rule: "NET-MTU-LONG", Severity: rules.Critical, Object: "interface eth1", Message: "mtu 1500",
			Evidence: []rules.Evidence{{What: "mtu", Value: "1500", File: "/sys/class/net/eth1/mtu"}, {What: "peer", Value: "9000"}},
			Fix:      "ip link set eth1 mtu 9000", Source: "s1"},
	})
	if p.err != nil {
		t.Fatal(p.err)
	}
	want := `
CRITICAL (1)
  NET-MTU-LONG  interface eth1: mtu 1500
      evidence: mtu = 1500  (/sys/class/net/eth1/mtu)
                peer = 9000
      fix:      ip link set eth1 mtu 9000
      source:   s1

INFO (1)
  INFO-1        node: fyi
      fix:      none
      source:   s3
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
