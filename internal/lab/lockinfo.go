package lab

import (
	"bufio"
	"bytes"
	"strconv"
	"strings"
)

// flockHolder returns the PID that holds an exclusive flock(2) on the file
// with device major:minor and inode ino, as /proc/locks (whose text is
// locks) lists it, or 0 when there is none. Lines of processes waiting for
// a lock ("->") and other kinds of locks are skipped. The format is
// fs/locks.c's: "ID: FLOCK  ADVISORY  WRITE PID MAJ:MIN:INODE START END",
// major and minor in hex.
func flockHolder(locks []byte, major, minor uint32, ino uint64) int {
	sc := bufio.NewScanner(bytes.NewReader(locks))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 6 || f[1] != "FLOCK" || f[3] != "WRITE" {
			continue
		}
		dev := strings.Split(f[5], ":")
		if len(dev) != 3 {
			continue
		}
		maj, err1 := strconv.ParseUint(dev[0], 16, 32)
		mnr, err2 := strconv.ParseUint(dev[1], 16, 32)
		in, err3 := strconv.ParseUint(dev[2], 10, 64)
		pid, err4 := strconv.Atoi(f[4])
		if err1 != nil || err2 != nil || err3 != nil || err4 != nil || pid <= 0 {
			continue
		}
		if uint32(maj) == major && uint32(mnr) == minor && in == ino {
			return pid
		}
	}
	return 0
}

// lockOwner parses what a lab's lock file holds ("PID OP\n", written by the
// process that locked it) into the operation, when that PID is pid.
func lockOwner(content []byte, pid int) string {
	f := strings.Fields(string(content))
	if len(f) == 2 && f[0] == strconv.Itoa(pid) {
		return f[1]
	}
	return ""
}
