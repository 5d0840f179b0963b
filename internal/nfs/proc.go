package nfs

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
)

// Programs and procedures (RFC 1833 portmapper, RFC 1813 NFSv3 and MOUNT).
const (
	progPortmap = 100000
	progNFS     = 100003
	progMount   = 100005

	pmapGetport = 3
	mntMnt      = 1
	mntUmnt     = 3

	procNull     = 0
	procGetattr  = 1
	procSetattr  = 2
	procLookup   = 3
	procAccess   = 4
	procRead     = 6
	procWrite    = 7
	procCreate   = 8
	procMkdir    = 9
	procRemove   = 12
	procRmdir    = 13
	procFsinfo   = 19
	procCommit   = 21
	maxFH        = 64
	maxWriteData = 1 << 20
)

var nfsNames = map[uint32]string{procNull: "NULL", procGetattr: "GETATTR", procSetattr: "SETATTR", procLookup: "LOOKUP",
	procAccess: "ACCESS", procRead: "READ", procWrite: "WRITE", procCreate: "CREATE", procMkdir: "MKDIR",
	procRemove: "REMOVE", procRmdir: "RMDIR", procFsinfo: "FSINFO", procCommit: "COMMIT"}

var mountNames = map[uint32]string{mntMnt: "MNT", mntUmnt: "UMNT"}

// ProcNames lists the NFSv3 procedures the client issues, by name.
func ProcNames() []string {
	var out []string
	for _, n := range nfsNames {
		if n != "NULL" {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// Stable is how a WRITE asks the server to commit the data (RFC 1813 3.3.7).
type Stable uint32

// stable_how values.
const (
	Unstable Stable = 0
	DataSync Stable = 1
	FileSync Stable = 2
)

func (s Stable) String() string {
	switch s {
	case Unstable:
		return "UNSTABLE"
	case DataSync:
		return "DATA_SYNC"
	}
	return "FILE_SYNC"
}

// Status is an NFSv3 error (nfsstat3).
type Status uint32

// Statuses a caller tests for.
const (
	ErrNoEnt Status = 2
	ErrExist Status = 17
)

func (s Status) Error() string {
	names := map[Status]string{1: "NFS3ERR_PERM", 2: "NFS3ERR_NOENT", 5: "NFS3ERR_IO", 13: "NFS3ERR_ACCES", 17: "NFS3ERR_EXIST",
		20: "NFS3ERR_NOTDIR", 21: "NFS3ERR_ISDIR", 22: "NFS3ERR_INVAL", 27: "NFS3ERR_FBIG", 28: "NFS3ERR_NOSPC",
		30: "NFS3ERR_ROFS", 63: "NFS3ERR_NAMETOOLONG", 66: "NFS3ERR_NOTEMPTY", 70: "NFS3ERR_STALE", 10001: "NFS3ERR_BADHANDLE"}
	if n, ok := names[s]; ok {
		return n
	}
	return "nfsstat3 " + strconv.Itoa(int(s))
}

// Attr is the part of fattr3 the emulation uses.
type Attr struct {
	Type   uint32
	Mode   uint32
	Size   uint64
	FileID uint64
	Mtime  uint64 // seconds<<32 | nanoseconds
}

// getport asks the portmapper at host:111 for prog/vers over TCP.
func getport(ctx context.Context, host string, prog, vers uint32, stats *Stats) (int, error) {
	c, err := dial(ctx, net.JoinHostPort(host, "111"), progPortmap, 2, map[uint32]string{pmapGetport: "GETPORT"}, stats)
	if err != nil {
		return 0, fmt.Errorf("portmapper: %w", err)
	}
	defer c.close()
	var e enc
	e.u32(prog)
	e.u32(vers)
	e.u32(6) // IPPROTO_TCP
	e.u32(0)
	d, err := c.call(ctx, pmapGetport, e.b)
	if err != nil {
		return 0, fmt.Errorf("portmapper: %w", err)
	}
	port := d.u32()
	if d.err != nil || port == 0 || port > 65535 {
		return 0, fmt.Errorf("portmapper: program %d version %d is not registered over TCP", prog, vers)
	}
	return int(port), nil
}

// status reads an nfsstat3 and turns a non-zero one into an error.
func status(d *dec) error {
	s := d.u32()
	if d.err != nil {
		return fmt.Errorf("%w: %v", ErrRPC, d.err)
	}
	if s != 0 {
		return Status(s)
	}
	return nil
}

func fattr(d *dec) Attr {
	a := Attr{Type: d.u32(), Mode: d.u32()}
	d.skip(12) // nlink uid gid
	a.Size = d.u64()
	d.skip(8 + 8 + 8) // used rdev fsid
	a.FileID = d.u64()
	d.skip(8) // atime
	a.Mtime = d.u64()
	d.skip(8) // ctime
	return a
}

// postOpAttr reads post_op_attr; ok is false when the server sent none.
func postOpAttr(d *dec) (Attr, bool) {
	if d.bool() {
		return fattr(d), true
	}
	return Attr{}, false
}

// wcc reads wcc_data and returns the after attributes.
func wcc(d *dec) (Attr, bool) {
	if d.bool() {
		d.skip(8 + 8 + 8) // size mtime ctime
	}
	return postOpAttr(d)
}

func fhArg(e *enc, fh []byte) { e.opaque(fh) }

// errorsIs reports whether err is the NFS status s.
func errorsIs(err error, s Status) bool {
	var st Status
	return errors.As(err, &st) && st == s
}
