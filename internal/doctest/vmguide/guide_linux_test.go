//go:build linux

// Package vmguide runs the guide whose labs have VM nodes, as the VM lab
// tests run: after the others and alone (make test), since three guests in
// software emulation take both cores of a small machine.
package vmguide

import (
	"testing"

	"github.com/interlink/interlink/internal/doctest/labtest"
	"github.com/interlink/interlink/internal/labuptest"
)

var bin string // the interlink binary under test

func TestMain(m *testing.M) {
	labuptest.Main(m, "VM guide tests", &bin, "td-vmguide-")
}

// TestSeparateKernelsGuide runs the separate kernels guide: a namespace
// node's kernel and NIC, the vmjumbo guests' own, and cluster over SSH
// from the ops node to the guests, with its bundles and exit code.
func TestSeparateKernelsGuide(t *testing.T) {
	labtest.Run(t, "../../..", bin, "docs/guides/separate-kernels.md", map[string]string{"blackhole": "td-sk-bh", "vmjumbo": "td-sk-vm"})
}
