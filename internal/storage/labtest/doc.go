// Package labtest runs storage bench over nfs:// against nfs-ganesha in a
// lab, and holds the option-set and MTU experiments as benchmarks.
package labtest
