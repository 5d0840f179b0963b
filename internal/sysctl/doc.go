// Package sysctl writes kernel parameters under /proc/sys: the one writer
// of the lab's namespaces (internal/lab) and of the VM nodes' guests
// (internal/vm), which cannot share code through each other (lab imports
// vm). Entries under net/ belong to the network namespace of the thread
// that writes them.
package sysctl
