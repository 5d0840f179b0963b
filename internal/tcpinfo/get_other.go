//go:build !linux

package tcpinfo

import "errors"

// LimitLength does nothing where there is no TCP_INFO.
func LimitLength(int) (restore func()) { return func() {} }

// Get fails: TCP_INFO is Linux's.
func Get(int) (Info, error) { return Info{}, errors.ErrUnsupported }
