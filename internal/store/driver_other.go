//go:build !linux

package store

// haveDriver is false where the pure-Go SQLite is not built: Open returns
// errors.ErrUnsupported.
const haveDriver = false
