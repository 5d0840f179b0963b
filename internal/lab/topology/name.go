package topology

import "errors"

// CheckName returns an error unless s can name a lab: a command checks its
// --name flag with it before anything is built. The error reads after the
// flag's name ("--name is empty: ...", "--name \"X\": use ...").
func CheckName(s string) error {
	if s == "" {
		return errors.New("is empty: a lab needs a name")
	}
	return checkLabName(s)
}

// CheckLabName returns an error unless s can name a lab or a node, as
// Validate checks them; unlike CheckName, its error quotes the name first
// (`"": use lower-case letters ...`), as errors about a lab's name do.
func CheckLabName(s string) error { return checkLabName(s) }
