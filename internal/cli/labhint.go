package cli

import (
	"errors"

	"github.com/interlink/interlink/internal/lab"
	"github.com/interlink/interlink/internal/lab/topology"
	"github.com/interlink/interlink/internal/shellq"
)

// labNotUp turns "lab NAME: no such lab" into the next commands to run:
// bring it up (a built-in by its name, else a topology file under that
// name), or list what is up. Other errors pass unchanged.
func labNotUp(name string, err error) error {
	if !errors.Is(err, lab.ErrNotFound) {
		return err
	}
	up := shellq.Join("interlink", "lab", "up", name)
	if !isBuiltin(name) {
		up = "interlink lab up TOPOLOGY.yaml --name " + shellq.Quote(name)
	}
	return usageError("lab %s: no such lab is up; bring it up: %s (labs up, built-ins: interlink lab list)", name, up)
}

func isBuiltin(name string) bool {
	for _, b := range lab.Builtins() {
		if b.Name == name {
			return true
		}
	}
	return false
}

// labSetErr says what to run next after a setting lab set could not
// apply: the lab's switches and links are in its status.
func labSetErr(name string, err error) error {
	var se *topology.SettingError
	if errors.As(err, &se) {
		return usageError("%v; its switches and links: %s", err, shellq.Join("interlink", "lab", "status", name))
	}
	return labNotUp(name, err)
}

// labSettingsErr is labSetErr for settings that do not parse.
func labSettingsErr(err error) error {
	return usageError("lab set: %v (see 'interlink lab set --help')", err)
}
