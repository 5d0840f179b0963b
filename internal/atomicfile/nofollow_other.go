//go:build !unix

package atomicfile

// noFollow: O_EXCL alone refuses what is there, links included.
const noFollow = 0
