// Package service starts and stops the processes a lab node runs: the
// interlink agent with the lab's token, and PostgreSQL primaries and
// streaming standbys (package pgserver). It knows nothing of labs: the
// caller (package lab) passes the function that starts a command inside a
// node, the directories under the lab's state directory, and the
// addresses; it records every service before starting it, so that `lab
// down` stops it even after `lab up` was killed.
package service
