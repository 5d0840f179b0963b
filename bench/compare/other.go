//go:build !linux

package main

// Elsewhere than Linux compare says in one line that it needs namespaces.

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "compare: needs Linux (network namespaces)")
	os.Exit(3)
}
