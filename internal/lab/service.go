package lab

import "strings"

// serviceState records one service in the lab's state: written before the
// service starts (PID 0), again with its PID once it runs.
type serviceState struct {
	Node string `json:"node"`
	Kind string `json:"kind"`
	Dir  string `json:"dir"` // its files, under the lab's directory
	PID  int    `json:"pid,omitempty"`
}

// synchronousStandbyNames is the primary's setting for its synchronous
// standbys (their application_name is their node's name): commits wait for
// the first of them that is connected.
func synchronousStandbyNames(names []string) string {
	if len(names) == 0 {
		return "''"
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = `"` + n + `"`
	}
	return "'FIRST 1 (" + strings.Join(q, ", ") + ")'"
}
