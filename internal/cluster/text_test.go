package cluster

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/rules"
)

// TestTextKernelFindingPerNode: the cluster report lists each node's
// KERNEL-FACILITIES finding whatever its severity (an info one on UEK6
// too), before the node's warnings and never cut off by the per-node
// limit of clusterFindingsMax, so what a node's kernel means for the
// figures is read per node before any bench figure.
func TestTextKernelFindingPerNode(t *testing.T) {
	var warnings []rules.Finding
	for i := range clusterFindingsMax + 3 {
		warnings = append(warnings, rules.Finding{Rule: "NET-UDP-BUFFERS", Severity: rules.Warning, Object: fmt.Sprintf("sysctl %d", i), Message: "low"})
	}
	uek5 := rules.Finding{Rule: "KERNEL-FACILITIES", Severity: rules.Warning, Object: "kernel 4.14.35-2047.518.4.el7uek.x86_64",
		Message: "Linux 4.14 lacks 4 facilities interlink uses"}
	uek6 := rules.Finding{Rule: "KERNEL-FACILITIES", Severity: rules.Info, Object: "kernel 5.4.17-2136.330.7.1.el8uek.x86_64",
		Message: "Linux 5.4 lacks 1 facility interlink uses"}
	res := &Result{Parallel: 8, MeshSkipped: "test", Nodes: []NodeResult{
		{Name: "rac1", Status: StatusOK, Check: &rules.Result{Findings: append(append([]rules.Finding{}, warnings...), uek5)}},
		{Name: "rac2", Status: StatusOK, Check: &rules.Result{Findings: []rules.Finding{uek6, {Rule: "NFS-NOAC-SYNC", Severity: rules.Info, Object: "mount /u04"}}}},
		{Name: "rac3", Status: StatusOK, Check: &rules.Result{}},
	}}
	var b bytes.Buffer
	if err := WriteText(&b, res); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	var rac1, rac2 []string
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) > 2 && f[0] == "rac1" && f[1] != "root@":
			rac1 = append(rac1, l)
		case len(f) > 2 && f[0] == "rac2":
			rac2 = append(rac2, l)
		}
	}
	if len(rac1) < 2 || !strings.Contains(rac1[1], "KERNEL-FACILITIES") || !strings.Contains(rac1[1], "4.14.35") {
		t.Errorf("rac1's kernel finding is not its first finding:\n%s", out)
	}
	if !strings.Contains(out, "rac1  ... and 4 more") {
		t.Errorf("rac1's 13 warnings after the kernel's are not cut at %d:\n%s", clusterFindingsMax, out)
	}
	if len(rac2) != 2 || !strings.Contains(rac2[1], "info") || !strings.Contains(rac2[1], "KERNEL-FACILITIES") {
		t.Errorf("rac2's info kernel finding (and only it) is not listed:\n%s", out)
	}
	if strings.Contains(out, "NFS-NOAC-SYNC") || strings.Contains(out, "rac3  ") && strings.Count(out, "rac3") > 1 {
		t.Errorf("an info finding other than the kernel's, or a node with none, is listed:\n%s", out)
	}
}
