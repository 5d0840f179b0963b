//go:build !linux

package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"time"
)

// Labs are built from Linux network namespaces; elsewhere every operation
// reports errors.ErrUnsupported.

// CheckPrivilege reports that labs are not supported here.
func CheckPrivilege() error { return fmt.Errorf("lab: %w", errors.ErrUnsupported) }

// Up is not supported on this system.
func Up(ctx context.Context, t *Topology, opts ...UpOption) (*Lab, error) {
	return nil, fmt.Errorf("lab: %w", errors.ErrUnsupported)
}

// Open is not supported on this system.
func Open(name string) (*Lab, error) { return nil, fmt.Errorf("lab: %w", errors.ErrUnsupported) }

// Down is not supported on this system.
func Down(name string, opts ...DownOption) error { return fmt.Errorf("lab: %w", errors.ErrUnsupported) }

// Do is not supported on this system.
func (n *Node) Do(fn func() error) error { return fmt.Errorf("lab: %w", errors.ErrUnsupported) }

// Start is not supported on this system.
func (n *Node) Start(cmd *exec.Cmd) error { return fmt.Errorf("lab: %w", errors.ErrUnsupported) }

// Inspect is not supported on this system.
func Inspect(name string) (*Status, error) { return nil, fmt.Errorf("lab: %w", errors.ErrUnsupported) }

// ProcessCPU is not supported on this system.
func (n *Node) ProcessCPU() (map[int]time.Duration, error) {
	return nil, fmt.Errorf("lab: %w", errors.ErrUnsupported)
}

// vmPlan is Linux's (vmnode_linux.go).
type vmPlan struct{}

// namespaceOf is a node's namespace name; nothing is built here.
func namespaceOf(lab string, n *NodeSpec) string { return nodeNS(lab, n.Name) }

// Exec is not supported on this system.
func (n *Node) Exec(ctx context.Context, argv []string, stdout, stderr io.Writer, opts ...ExecOption) (int, error) {
	return 0, fmt.Errorf("lab: %w", errors.ErrUnsupported)
}
