package lab

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
)

// UserDataRoot is where a lab keeps the directories of services that run
// as a user of their own and must reach them through every directory on
// the way (MariaDB's rsync state transfer runs as mysql), when the lab's
// state directory lies below one that user cannot pass (under /root, or a
// test's 0700 temporary directory).
const UserDataRoot = "/run/interlink/data"

// userDataDir is the lab's directory under UserDataRoot: named after the
// lab and its state directory, so Down finds it without any record (a lab
// up killed at any moment) and two state directories never share one.
func userDataDir(lab string) string {
	sum := sha256.Sum256([]byte(stateDir()))
	return filepath.Join(UserDataRoot, lab+"-"+hex.EncodeToString(sum[:4]))
}

// serviceDir is the directory of a service of node, in the node's.
func serviceDir(lab, node, kind string) string {
	return filepath.Join(nodeDir(lab, node), kind)
}

// serviceUserDir is the directory of a service of node that runs as its
// own user: the lab's directory when other users can pass every directory
// above it (the default state directory, /run/interlink/labs), else the
// lab's directory under UserDataRoot.
func serviceUserDir(lab, node, kind string) string {
	if othersCanPass(stateDir()) {
		return serviceDir(lab, node, kind)
	}
	return filepath.Join(userDataDir(lab), node, kind)
}

// othersCanPass reports whether every directory from / down to dir lets
// other users through (the execute bit for others).
func othersCanPass(dir string) bool {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	for {
		fi, err := os.Stat(dir)
		if err != nil || fi.Mode().Perm()&0o001 == 0 {
			return false
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return true
		}
		dir = parent
	}
}

// labFiles are the files and directories of lab name besides its record,
// which Down removes.
func labFiles(name string) []string {
	return []string{statePath(name) + ".tmp", labDir(name), userDataDir(name)}
}
