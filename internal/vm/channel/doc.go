// Package channel is the protocol between a VM node's host and its guest
// over a serial line: frames (Writer, Reader) that survive leftovers of
// earlier callers and damaged bytes, and their payloads (Command,
// ExitBody, ServiceProbe, ServiceAnswer). Each call opens with a Hello
// carrying Version both ways, so a host meets a guest of another protocol
// by name instead of misreading it.
package channel
