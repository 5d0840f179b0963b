package drift

import (
	"testing"

	"github.com/interlink/interlink/internal/cluster"
	"github.com/interlink/interlink/internal/mesh"
	"github.com/interlink/interlink/internal/pmtu"
)

// A cluster run stands for its mesh against a mesh result, either way
// round: its own mesh is no change, a path fixed since is one change.
func TestClusterAsMesh(t *testing.T) {
	run := load(t, "lab-cluster.json").(*cluster.Result)
	if run.Mesh == nil || len(run.Mesh.Paths) == 0 {
		t.Fatal("fixture without a mesh")
	}
	own := load(t, "lab-cluster.json").(*cluster.Result).Mesh
	for _, pair := range [][2]any{{run, own}, {own, run}} {
		d := compare(t, pair[0], pair[1])
		if d.Verdict != NoChange || d.Compared != len(own.Paths) || d.Kind != "interlink.mesh/v1" {
			t.Errorf("%T against %T: %s, %d of %d compared, kind %s, %+v", pair[0], pair[1], d.Verdict, d.Compared, len(own.Paths), d.Kind, d.Changes)
		}
	}
	fixed := load(t, "lab-cluster.json").(*cluster.Result).Mesh
	i := -1
	for j, p := range fixed.Paths {
		if p.Verdict != pmtu.OK && p.Error == "" && i < 0 {
			i = j
		}
	}
	if i < 0 {
		t.Fatal("fixture mesh has no problem path")
	}
	fixed.Paths[i].Verdict, fixed.Paths[i].PathMTU = pmtu.OK, 9000
	d := compare(t, run, fixed)
	if d.Verdict != Changed || len(d.Changes) != 1 {
		t.Errorf("one path fixed: %s, %+v", d.Verdict, d.Changes)
	}
}

// Two cluster runs compare their meshes and each node's findings; a run
// without a mesh against a mesh is refused as a mismatch.
func TestClusterRuns(t *testing.T) {
	a := load(t, "lab-cluster.json").(*cluster.Result)
	b := load(t, "lab-cluster.json").(*cluster.Result)
	d := compare(t, a, b)
	if d.Verdict != NoChange || d.Kind != cluster.Schema || d.Compared <= len(a.Mesh.Paths) {
		t.Errorf("a run against itself: %s, kind %s, %d compared (%d paths)", d.Verdict, d.Kind, d.Compared, len(a.Mesh.Paths))
	}
	var withFindings *cluster.NodeResult
	for i := range b.Nodes {
		if b.Nodes[i].Check != nil && len(b.Nodes[i].Check.Findings) > 0 {
			withFindings = &b.Nodes[i]
			break
		}
	}
	if withFindings == nil {
		t.Fatal("fixture has no findings")
	}
	withFindings.Check.Findings = withFindings.Check.Findings[1:]
	if d := compare(t, a, b); d.Verdict != Changed || len(d.Changes) != 1 {
		t.Errorf("a finding gone: %s, %+v", d.Verdict, d.Changes)
	}
	a.Mesh = nil
	if _, err := Compare(a, &mesh.Result{}); err == nil {
		t.Error("a cluster run without a mesh compared with a mesh")
	}
}
