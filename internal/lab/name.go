package lab

import "errors"

// CheckName returns an error unless s can name a lab: a command checks its
// --name flag with it before anything is built. The error reads after the
// flag's name ("--name is empty: ...", "--name \"X\": use ...").
func CheckName(s string) error {
	if s == "" {
		return errors.New("is empty: a lab needs a name")
	}
	return validName(s)
}
