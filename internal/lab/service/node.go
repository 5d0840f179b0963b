package service

import "os/exec"

// Node is where a service runs: a lab node (lab.Node satisfies it). The
// package takes it as an interface so that package lab, which starts
// services, can import this one.
type Node interface {
	// Start starts cmd inside the node's network namespace.
	Start(cmd *exec.Cmd) error
	// Do runs fn on a thread in the node's network namespace.
	Do(fn func() error) error
	Name() string
}
