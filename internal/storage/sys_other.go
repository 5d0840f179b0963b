//go:build !linux

package storage

import (
	"errors"
	"os"
	"time"
)

// syncFlag is O_SYNC where O_DSYNC is not portable.
const syncFlag = os.O_SYNC

func openData(path string, flag int, direct bool) (*os.File, error) {
	if direct {
		return nil, errors.ErrUnsupported
	}
	return os.OpenFile(path, flag, 0o600)
}

func probeDirect(string) error { return errors.ErrUnsupported }

func dropCache(*os.File) {}

func cpuTimes() (user, sys time.Duration) { return 0, 0 }

func filesystemOf(string) (Filesystem, error) { return Filesystem{}, errors.ErrUnsupported }
