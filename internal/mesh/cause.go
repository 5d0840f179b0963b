package mesh

import (
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/interlink/interlink/internal/agent"
)

// Cause names the class of an error reaching an agent, shared by every
// node that failed the same way, so that a report can group a hundred dead
// nodes on one line instead of a hundred lines that differ only in the
// address.
func Cause(err error) string {
	var re *agent.RefusedError
	var ne net.Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &re):
		return "refused the session: " + re.Reason
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused (no agent listening)"
	case errors.Is(err, syscall.EHOSTUNREACH):
		return "no route to host"
	case errors.Is(err, syscall.ENETUNREACH):
		return "network unreachable"
	case errors.As(err, &ne) && ne.Timeout():
		return "no answer (timed out)"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET):
		return "connection closed during the handshake (not an interlink agent?)"
	}
	// Unknown: the innermost part of the message, which rarely names the
	// address.
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 {
		s = s[i+2:]
	}
	return s
}
