package vm

import (
	"fmt"
	"io"
)

// cpioWriter writes an uncompressed cpio archive in the "newc" format, the
// one the kernel unpacks into its initial root file system
// (Documentation/driver-api/early-userspace/buffer-format.rst). Uncompressed
// because a guest in software emulation takes seconds to gunzip the
// interlink binary; the archive is read once, from the host's page cache.
type cpioWriter struct {
	w   io.Writer
	ino int
	off int64
	err error
}

const (
	modeDir  = 0o040000
	modeFile = 0o100000
	modeLink = 0o120000
)

func (c *cpioWriter) write(b []byte) {
	if c.err != nil {
		return
	}
	n, err := c.w.Write(b)
	c.off += int64(n)
	c.err = err
}

func (c *cpioWriter) pad() {
	if r := c.off % 4; r != 0 {
		c.write(make([]byte, 4-r))
	}
}

// entry writes one member: name without a leading slash, mode with its
// type bits, and the data (a symlink's target for modeLink).
func (c *cpioWriter) entry(name string, mode int, data []byte) {
	c.ino++
	nlink := 1
	if mode&modeDir == modeDir && mode&modeFile == 0 {
		nlink = 2
	}
	hdr := fmt.Sprintf("070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		c.ino, mode, 0, 0, nlink, 0, len(data), 0, 0, 0, 0, len(name)+1, 0)
	c.write([]byte(hdr))
	c.write(append([]byte(name), 0))
	c.pad()
	c.write(data)
	c.pad()
}

// close writes the trailer.
func (c *cpioWriter) close() error {
	c.ino = 0
	c.entry("TRAILER!!!", 0, nil)
	return c.err
}
