package lab

import (
	"errors"
	"fmt"
	"strings"
)

// ErrBusy: another process is building or removing the lab right now (it
// holds the lab's lock); see BusyError.
var ErrBusy = errors.New("lab is busy")

// Operations that hold a lab's lock.
const (
	opUp   = "up"
	opDown = "down"
	opSet  = "set"
)

// BusyError says which process holds the lock of lab Lab, and for what. PID
// is 0 when the holder could not be found out (it let go meanwhile).
type BusyError struct {
	Lab string
	PID int
	Op  string // "up", "down" or "" (not known)
}

func (e *BusyError) Error() string {
	by := "another process"
	if e.PID > 0 {
		by = fmt.Sprintf("PID %d", e.PID)
	}
	switch e.Op {
	case opUp:
		return fmt.Sprintf("lab %s is being built by %s", e.Lab, by)
	case opDown:
		return fmt.Sprintf("lab %s is being removed by %s", e.Lab, by)
	case opSet:
		return fmt.Sprintf("lab %s is being changed by %s", e.Lab, by)
	}
	return fmt.Sprintf("lab %s is being built or removed by %s", e.Lab, by)
}

// Is makes errors.Is(err, ErrBusy) true.
func (e *BusyError) Is(target error) bool { return target == ErrBusy }

// ErrSurvivors: a process in the lab's namespaces was still there after
// SIGKILL; see SurvivorsError.
var ErrSurvivors = errors.New("processes survived SIGKILL")

// SurvivorsError lists the processes Down could not end ("PID (command) in
// NAMESPACE"). The lab stays recorded, so Down can be run again once they
// are gone.
type SurvivorsError struct{ Processes []string }

func (e *SurvivorsError) Error() string {
	return fmt.Sprintf("%d process(es) still running in the lab after SIGKILL: %s; the lab stays recorded, run lab down again once they are gone",
		len(e.Processes), strings.Join(e.Processes, ", "))
}

// Is makes errors.Is(err, ErrSurvivors) true.
func (e *SurvivorsError) Is(target error) bool { return target == ErrSurvivors }
