package nfs

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"
)

// Client is an NFSv3 client of one export over TCP: MOUNT for the root
// handle, then NFS calls on one connection. Every call is counted in Stats.
// Close unmounts and closes the connections.
type Client struct {
	Server, Export string
	Root           []byte // the export's root file handle
	// RtMax and WtMax are the server's largest READ and WRITE (FSINFO).
	RtMax, WtMax int
	Stats        *Stats // NFS procedures
	MountStats   *Stats // portmapper and MOUNT
	nfs          *conn
	mnt          *conn // kept for UMNT, so Close needs no new socket
}

// Dial mounts export from server ("host" or "host:port" for the NFS port;
// the MOUNT port comes from the portmapper, as does the NFS port when none
// is given).
func Dial(ctx context.Context, server, export string) (*Client, error) {
	host, nport := server, 0
	if h, p, err := net.SplitHostPort(server); err == nil {
		host = h
		if nport, err = strconv.Atoi(p); err != nil || nport <= 0 || nport > 65535 {
			return nil, fmt.Errorf("nfs: port %q: want 1 to 65535", p)
		}
	}
	c := &Client{Server: server, Export: export, Stats: &Stats{}, MountStats: &Stats{}}
	mport, err := getport(ctx, host, progMount, 3, c.MountStats)
	if err != nil {
		return nil, fmt.Errorf("nfs: %s: %w", host, err)
	}
	maddr := net.JoinHostPort(host, strconv.Itoa(mport))
	if c.mnt, err = dial(ctx, maddr, progMount, 3, mountNames, c.MountStats); err != nil {
		return nil, fmt.Errorf("nfs: mountd %s: %w", maddr, err)
	}
	if c.Root, err = c.mount(ctx, mntMnt); err != nil {
		c.mnt.close()
		return nil, err
	}
	if nport == 0 {
		if nport, err = getport(ctx, host, progNFS, 3, c.MountStats); err != nil {
			c.mnt.close()
			return nil, fmt.Errorf("nfs: %s: %w", host, err)
		}
	}
	if c.nfs, err = dial(ctx, net.JoinHostPort(host, strconv.Itoa(nport)), progNFS, 3, nfsNames, c.Stats); err != nil {
		c.mnt.close()
		return nil, fmt.Errorf("nfs: %s: %w", host, err)
	}
	if err := c.fsinfo(ctx); err != nil {
		c.Close()
		return nil, fmt.Errorf("nfs: %s:%s: FSINFO: %w", host, export, err)
	}
	return c, nil
}

// mount calls MNT (returning the root handle) or UMNT on the MOUNT
// connection.
func (c *Client) mount(ctx context.Context, proc uint32) ([]byte, error) {
	var e enc
	e.str(c.Export)
	d, err := c.mnt.call(ctx, proc, e.b)
	if err != nil || proc == mntUmnt {
		if err != nil {
			err = fmt.Errorf("nfs: mountd: %w", err)
		}
		return nil, err
	}
	if st := d.u32(); st != 0 {
		return nil, fmt.Errorf("nfs: mount %s:%s refused: %s", c.Server, c.Export, mountStat(st))
	}
	fh := d.opaque(maxFH)
	if d.err != nil {
		return nil, fmt.Errorf("nfs: mount reply: %w", d.err)
	}
	return append([]byte(nil), fh...), nil
}

func mountStat(s uint32) string {
	switch s {
	case 1:
		return "not owner (MNT3ERR_PERM)"
	case 2:
		return "no such export (MNT3ERR_NOENT)"
	case 13:
		return "access denied (MNT3ERR_ACCES)"
	case 20:
		return "not a directory (MNT3ERR_NOTDIR)"
	}
	return fmt.Sprintf("mountstat3 %d", s)
}

// Close unmounts (UMNT, best effort) and closes the NFS connection.
func (c *Client) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, uerr := c.mount(ctx, mntUmnt)
	var err error
	if c.nfs != nil {
		err = c.nfs.close()
	}
	return errors.Join(err, uerr, c.mnt.close())
}

func (c *Client) fsinfo(ctx context.Context) error {
	var e enc
	fhArg(&e, c.Root)
	d, err := c.nfs.call(ctx, procFsinfo, e.b)
	if err != nil {
		return err
	}
	if err := status(d); err != nil {
		return err
	}
	postOpAttr(d)
	c.RtMax = int(d.u32())
	d.u32() // rtpref
	d.u32() // rtmult
	c.WtMax = int(d.u32())
	if d.err != nil {
		return fmt.Errorf("%w: %v", ErrRPC, d.err)
	}
	return nil
}

// Getattr is GETATTR.
func (c *Client) Getattr(ctx context.Context, fh []byte) (Attr, error) {
	var e enc
	fhArg(&e, fh)
	d, err := c.nfs.call(ctx, procGetattr, e.b)
	if err != nil {
		return Attr{}, err
	}
	if err := status(d); err != nil {
		return Attr{}, err
	}
	return fattr(d), d.err
}

// Lookup is LOOKUP of name in dir.
func (c *Client) Lookup(ctx context.Context, dir []byte, name string) ([]byte, error) {
	var e enc
	fhArg(&e, dir)
	e.str(name)
	d, err := c.nfs.call(ctx, procLookup, e.b)
	if err != nil {
		return nil, err
	}
	if err := status(d); err != nil {
		return nil, err
	}
	fh := d.opaque(maxFH)
	return append([]byte(nil), fh...), d.err
}

// sattr writes an sattr3: mode when mode >= 0, mtime and atime when
// mtime is not zero, nothing else.
func sattr(e *enc, mode int, mtime time.Time) {
	e.bool(mode >= 0)
	if mode >= 0 {
		e.u32(uint32(mode))
	}
	e.bool(false) // uid
	e.bool(false) // gid
	e.bool(false) // size
	for range 2 { // atime, mtime
		if mtime.IsZero() {
			e.u32(0) // DONT_CHANGE
		} else {
			e.u32(2) // SET_TO_CLIENT_TIME
			e.u32(uint32(mtime.Unix()))
			e.u32(uint32(mtime.Nanosecond()))
		}
	}
}

// Create is CREATE (GUARDED: fails with NFS3ERR_EXIST rather than touch
// a file that is there) or MKDIR; it returns the new handle.
func (c *Client) create(ctx context.Context, proc uint32, dir []byte, name string, mode int) ([]byte, error) {
	var e enc
	fhArg(&e, dir)
	e.str(name)
	if proc == procCreate {
		e.u32(1) // GUARDED
	}
	sattr(&e, mode, time.Time{})
	d, err := c.nfs.call(ctx, proc, e.b)
	if err != nil {
		return nil, err
	}
	if err := status(d); err != nil {
		return nil, err
	}
	if !d.bool() {
		return nil, fmt.Errorf("%w: %s returned no file handle", ErrRPC, nfsNames[proc])
	}
	fh := d.opaque(maxFH)
	return append([]byte(nil), fh...), d.err
}

// Create is CREATE GUARDED of a regular file.
func (c *Client) Create(ctx context.Context, dir []byte, name string, mode int) ([]byte, error) {
	return c.create(ctx, procCreate, dir, name, mode)
}

// Mkdir is MKDIR.
func (c *Client) Mkdir(ctx context.Context, dir []byte, name string, mode int) ([]byte, error) {
	return c.create(ctx, procMkdir, dir, name, mode)
}

// SetTimes is SETATTR of atime and mtime, as utime(2) over NFS.
func (c *Client) SetTimes(ctx context.Context, fh []byte, t time.Time) error {
	var e enc
	fhArg(&e, fh)
	sattr(&e, -1, t)
	e.bool(false) // no guard
	d, err := c.nfs.call(ctx, procSetattr, e.b)
	if err != nil {
		return err
	}
	return status(d)
}

// Write is WRITE of data at off; it returns how the server committed it.
func (c *Client) Write(ctx context.Context, fh []byte, off int64, data []byte, how Stable) (Stable, error) {
	var e enc
	e.b = make([]byte, 0, len(fh)+len(data)+32)
	fhArg(&e, fh)
	e.u64(uint64(off))
	e.u32(uint32(len(data)))
	e.u32(uint32(how))
	e.opaque(data)
	d, err := c.nfs.call(ctx, procWrite, e.b)
	if err != nil {
		return 0, err
	}
	if err := status(d); err != nil {
		return 0, err
	}
	wcc(d)
	n := d.u32()
	committed := Stable(d.u32())
	if d.err == nil && int(n) != len(data) {
		return committed, fmt.Errorf("short WRITE: %d of %d bytes", n, len(data))
	}
	return committed, d.err
}

// Commit is COMMIT of the whole file.
func (c *Client) Commit(ctx context.Context, fh []byte) error {
	var e enc
	fhArg(&e, fh)
	e.u64(0)
	e.u32(0)
	d, err := c.nfs.call(ctx, procCommit, e.b)
	if err != nil {
		return err
	}
	return status(d)
}

// Read is READ of up to len(p) bytes at off.
func (c *Client) Read(ctx context.Context, fh []byte, off int64, p []byte) (n int, eof bool, err error) {
	var e enc
	fhArg(&e, fh)
	e.u64(uint64(off))
	e.u32(uint32(len(p)))
	d, err := c.nfs.call(ctx, procRead, e.b)
	if err != nil {
		return 0, false, err
	}
	if err := status(d); err != nil {
		return 0, false, err
	}
	postOpAttr(d)
	d.u32() // count
	eof = d.bool()
	data := d.opaque(len(p))
	return copy(p, data), eof, d.err
}

// Remove is REMOVE (rmdir false) or RMDIR of name in dir.
func (c *Client) Remove(ctx context.Context, dir []byte, name string, rmdir bool) error {
	var e enc
	fhArg(&e, dir)
	e.str(name)
	proc := uint32(procRemove)
	if rmdir {
		proc = procRmdir
	}
	d, err := c.nfs.call(ctx, proc, e.b)
	if err != nil {
		return err
	}
	return status(d)
}
