//go:build linux

package labtest

import (
	"testing"

	"github.com/interlink/interlink/internal/testlab"
)

var bin string // the interlink binary under test

func TestMain(m *testing.M) {
	testlab.Main(m, "guide lab tests", &bin, "td-interlink-")
}

// The guides run at once, each in labs of its own names (labs coexist):
// they measure nothing against a threshold.

func run(t *testing.T, guide string, labs map[string]string) {
	t.Parallel()
	Run(t, "../../..", bin, guide, labs)
}

// TestJumboFramesGuide runs the jumbo frames guide in its demo lab: the
// demo kept up, pmtu to the blackholed and the healthy node, ping and
// tracepath in the blackhole lab, the mesh, the port fixed and the mesh
// again, the blocks bench on both networks.
func TestJumboFramesGuide(t *testing.T) {
	run(t, "docs/guides/jumbo-frames.md", map[string]string{"demo": "td-jumbo", "blackhole": "td-jumbo-bh"})
}

// TestNFSGuideDirectNFS proves the Direct NFS paths of the NFS guide's
// oranfstab in the dnfs lab, and compares its two option sets with ab
// in the nfs lab.
func TestNFSGuideDirectNFS(t *testing.T) {
	run(t, "docs/guides/nfs.md", map[string]string{"dnfs": "td-dnfs", "nfs": "td-nfs"})
}

// TestProveAChangeGuide runs the ab experiments of the guide in its demo
// lab, shortened (4 runs per arm of 1 s): the report's shape, its
// metrics, the exit code.
func TestProveAChangeGuide(t *testing.T) {
	run(t, "docs/guides/prove-a-change.md", map[string]string{"demo": "td-ab"})
}

// TestHostInTheRoundTripGuide brings the guide's demo lab up (its agents
// allowing CPU latency holds) and down; its measurements are shown, not
// rerun: their verdicts depend on the machine's load.
func TestHostInTheRoundTripGuide(t *testing.T) {
	run(t, "docs/guides/host-in-the-round-trip.md", map[string]string{"hostrt": "td-hostrt"})
}

// TestLogonStormGuide runs the storm of the guide against the pg lab's
// PostgreSQL, straight and through the gate.
func TestLogonStormGuide(t *testing.T) {
	run(t, "docs/guides/logon-storm.md", map[string]string{"pg": "td-storm"})
}
