package sysctl

import "strings"

// Root is where the kernel shows its parameters.
const Root = "/proc/sys"

// Name is a key in sysctl(8)'s dotted form: net/ipv4/ip_forward is
// net.ipv4.ip_forward.
func Name(key string) string { return strings.ReplaceAll(key, "/", ".") }
