package cli

import (
	"errors"
	"fmt"
)

// Exit codes, monitoring-friendly like Nagios plugins (DESIGN.md section 1).
const (
	ExitOK       = 0 // nothing wrong
	ExitWarning  = 1 // a warning finding
	ExitCritical = 2 // a critical finding, or an --expect the measurement fails
	ExitUnknown  = 3 // bad usage, bad input, unreachable peer, tool failure
)

// ErrUsage marks errors caused by what the user typed or supplied (flags,
// files, topologies, peers). They map to ExitUnknown like every other error,
// but are never wrapped in "internal" wording.
var ErrUsage = errors.New("usage")

// usageError returns an error that wraps ErrUsage and prints as msg.
func usageError(format string, a ...any) error {
	return &userError{msg: fmt.Sprintf(format, a...), kind: ErrUsage}
}

type userError struct {
	msg  string
	kind error
}

func (e *userError) Error() string { return e.msg }
func (e *userError) Unwrap() error { return e.kind }

// exitError carries a result's exit code out of a command that otherwise
// succeeded (it printed its report) but whose verdict is WARNING or CRITICAL.
// It prints nothing.
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// withCode returns nil for ExitOK and an exitError otherwise, so a command's
// RunE can end with `return withCode(worst)`.
func withCode(code int) error {
	if code == ExitOK {
		return nil
	}
	return &exitError{code: code}
}

// exitCode maps an error returned by a command to the process exit code; this
// is the one place where that mapping lives.
func exitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return ExitUnknown
}
