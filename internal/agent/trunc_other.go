//go:build !unix

package agent

// msgTrunc is zero where reads have no such flag: Windows fails the read
// of a datagram larger than the buffer (WSAEMSGSIZE) instead of
// truncating it silently, so it never reaches the datagram's reader.
const msgTrunc = 0
