package drift

import (
	"github.com/interlink/interlink/internal/cluster"
	"github.com/interlink/interlink/internal/mesh"
)

// asMesh lets a cluster run stand for the mesh it measured: compared with
// a mesh result (a replica's, or one run by hand), a cluster run is its
// mesh. Two cluster runs, or anything else, are left as they are. A
// cluster run without a mesh stays a cluster run (and Compare refuses it).
func asMesh(base, cur any) (any, any) {
	bc, bIsCluster := base.(*cluster.Result)
	cc, cIsCluster := cur.(*cluster.Result)
	_, bIsMesh := base.(*mesh.Result)
	_, cIsMesh := cur.(*mesh.Result)
	if bIsCluster && cIsMesh && bc.Mesh != nil {
		base = bc.Mesh
	}
	if cIsCluster && bIsMesh && cc.Mesh != nil {
		cur = cc.Mesh
	}
	return base, cur
}

// compareClusters compares two cluster runs: their meshes path by path,
// their gc workloads (--bench gc) pair by pair, and each node's check
// findings (a node is matched by its name).
func compareClusters(d *Diff, b, c *cluster.Result) {
	if b.Mesh != nil && c.Mesh != nil {
		comparePaths(d, "", meshPaths(b.Mesh), meshPaths(c.Mesh))
	}
	if b.GC != nil && c.GC != nil && b.GC.Report != nil && c.GC.Report != nil {
		compareGC(d, "", b.GC.Report, c.GC.Report)
	}
	for _, bn := range b.Nodes {
		for _, cn := range c.Nodes {
			if bn.Name == cn.Name && bn.Check != nil && cn.Check != nil {
				compareFindings(d, bn.Name+": ", bn.Check, cn.Check)
			}
		}
	}
}
