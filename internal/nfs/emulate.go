package nfs

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/interlink/interlink/internal/inventory"
)

// Options is a set of mount options as the emulation applies them.
type Options struct {
	Raw string `json:"raw"`
	// AttrTimeout is how long cached attributes of a file count as valid
	// (acregmin; 0 under noac or actimeo=0); DirAttrTimeout is acdirmin.
	AttrTimeout    time.Duration `json:"attr_timeout_ns"`
	DirAttrTimeout time.Duration `json:"dir_attr_timeout_ns"`
	// NoAC: noac, which also revalidates before every operation and makes
	// every write synchronous.
	NoAC bool `json:"noac"`
	// SyncWrites: each application write is a FILE_SYNC WRITE (noac, sync).
	SyncWrites bool `json:"sync_writes"`
	// Direct: forcedirectio (Solaris, HP-UX) or O_DIRECT: no client cache;
	// each application write is sent at its own size, FILE_SYNC.
	Direct bool `json:"direct"`
	// Rsize and Wsize as asked (0: the server's maximum, as Linux does).
	Rsize int `json:"rsize"`
	Wsize int `json:"wsize"`
}

// known lists the options ParseOptions accepts: those that change the RPC
// pattern, and the ones a database mount line carries that do not.
var known = map[string]bool{"rw": true, "hard": true, "soft": true, "intr": true, "nointr": true, "bg": true, "fg": true,
	"tcp": true, "proto": true, "vers": true, "nfsvers": true, "noac": true, "ac": true, "actimeo": true, "acregmin": true,
	"acregmax": true, "acdirmin": true, "acdirmax": true, "forcedirectio": true, "noforcedirectio": true, "sync": true,
	"async": true, "rsize": true, "wsize": true, "timeo": true, "retrans": true, "suid": true, "nosuid": true,
	"nolock": true, "lock": true, "cto": true, "local_lock": true, "sec": true, "llock": true}

// ParseOptions reads options as mount takes them ("rw,hard,vers=3,noac",
// "actimeo=0", "forcedirectio", "defaults", "rsize=32768,wsize=32768").
// Only NFSv3 over TCP is emulated.
func ParseOptions(s string) (Options, error) {
	s = strings.TrimSpace(s)
	mo, err := inventory.ParseMountOptions(s)
	if err != nil {
		return Options{}, err
	}
	for _, n := range mo.Names() {
		if !known[n] {
			return Options{}, fmt.Errorf("option %q is not one the emulation knows (it emulates noac, actimeo, ac*, sync, forcedirectio, rsize, wsize)", n)
		}
	}
	if mo.Vers != "" && mo.Vers != "3" {
		return Options{}, fmt.Errorf("vers=%s: the userspace client speaks NFSv3 only", mo.Vers)
	}
	if mo.Proto != "" && mo.Proto != "tcp" {
		return Options{}, fmt.Errorf("proto=%s: the userspace client uses TCP only", mo.Proto)
	}
	if mo.RsizeBytes < 0 || mo.WsizeBytes < 0 || mo.RsizeBytes > maxWriteData || mo.WsizeBytes > maxWriteData {
		return Options{}, fmt.Errorf("rsize/wsize: want 4096 to 1048576")
	}
	o := Options{Raw: s, NoAC: mo.NoAC, Direct: mo.Has("forcedirectio") && !mo.Has("noforcedirectio"),
		Rsize: mo.RsizeBytes, Wsize: mo.WsizeBytes}
	o.SyncWrites = mo.NoAC || mo.Sync
	regMin, _, dirMin, _ := mo.AttrCache()
	o.AttrTimeout, o.DirAttrTimeout = regMin, dirMin
	if mo.NoAC {
		o.AttrTimeout, o.DirAttrTimeout = 0, 0
	}
	return o, nil
}

// maxWriteBehind bounds the WRITEs in flight from write-behind, as the
// RPC slot table bounds the kernel's.
const maxWriteBehind = 16

// FS issues the RPCs the Linux client would for file operations under
// Options. It keeps an attribute cache (when each handle's attributes were
// last fetched or returned by a reply) and nothing else: data is never
// cached for reads.
type FS struct {
	C            *Client
	Opt          Options
	Rsize, Wsize int // negotiated: the option, else the server's maximum, at most its maximum
	mu           sync.Mutex
	attrAt       map[string]time.Time
}

// NewFS applies o to c.
func NewFS(c *Client, o Options) *FS {
	fs := &FS{C: c, Opt: o, attrAt: map[string]time.Time{}, Rsize: o.Rsize, Wsize: o.Wsize}
	if fs.Rsize == 0 || fs.Rsize > c.RtMax && c.RtMax > 0 {
		fs.Rsize = c.RtMax
	}
	if fs.Wsize == 0 || fs.Wsize > c.WtMax && c.WtMax > 0 {
		fs.Wsize = c.WtMax
	}
	fs.Rsize, fs.Wsize = min(max(fs.Rsize, 4096), maxWriteData), min(max(fs.Wsize, 4096), maxWriteData)
	return fs
}

func (fs *FS) fresh(fh []byte) {
	fs.mu.Lock()
	fs.attrAt[string(fh)] = time.Now()
	fs.mu.Unlock()
}

// revalidate sends GETATTR when the cached attributes of fh are older
// than the timeout (always under noac and actimeo=0).
func (fs *FS) revalidate(ctx context.Context, fh []byte, dir bool) error {
	timeout := fs.Opt.AttrTimeout
	if dir {
		timeout = fs.Opt.DirAttrTimeout
	}
	fs.mu.Lock()
	at, ok := fs.attrAt[string(fh)]
	fs.mu.Unlock()
	if ok && timeout > 0 && time.Since(at) < timeout {
		return nil
	}
	if _, err := fs.C.Getattr(ctx, fh); err != nil {
		return err
	}
	fs.fresh(fh)
	return nil
}

// perOp is noac's revalidation before every operation on a file.
func (fs *FS) perOp(ctx context.Context, fh []byte) error {
	if !fs.Opt.NoAC {
		return nil
	}
	return fs.revalidate(ctx, fh, false)
}

// Handle is a file or directory on the server.
type Handle []byte

// Root is the export's root directory.
func (fs *FS) Root() Handle { return fs.C.Root }

// newEntry is the kernel's path to a new name: revalidate the directory,
// LOOKUP the name (a negative answer is expected), then create it.
func (fs *FS) newEntry(ctx context.Context, dir Handle, name string, mk func() ([]byte, error)) (Handle, error) {
	if err := fs.revalidate(ctx, dir, true); err != nil {
		return nil, err
	}
	if _, err := fs.C.Lookup(ctx, dir, name); err == nil {
		return nil, fmt.Errorf("%s exists: %w", name, ErrExist)
	} else if !errorsIs(err, ErrNoEnt) {
		return nil, err
	}
	fh, err := mk()
	if err != nil {
		return nil, err
	}
	fs.fresh(fh) // CREATE and MKDIR return the new object's attributes
	fs.fresh(dir)
	return fh, nil
}

// Mkdir makes directory name in dir.
func (fs *FS) Mkdir(ctx context.Context, dir Handle, name string) (Handle, error) {
	return fs.newEntry(ctx, dir, name, func() ([]byte, error) { return fs.C.Mkdir(ctx, dir, name, 0o755) })
}

// Create creates and opens a new file (O_CREAT|O_EXCL|O_WRONLY).
func (fs *FS) Create(ctx context.Context, dir Handle, name string) (*File, error) {
	fh, err := fs.newEntry(ctx, dir, name, func() ([]byte, error) { return fs.C.Create(ctx, dir, name, 0o644) })
	if err != nil {
		return nil, err
	}
	return &File{fs: fs, FH: fh, sem: make(chan struct{}, maxWriteBehind)}, nil
}

// Stat is stat(2): GETATTR unless the cached attributes are still valid.
func (fs *FS) Stat(ctx context.Context, fh Handle) error { return fs.revalidate(ctx, fh, false) }

// SetTimes is utime(2): SETATTR, whose reply carries the new attributes.
func (fs *FS) SetTimes(ctx context.Context, fh Handle, t time.Time) error {
	if err := fs.perOp(ctx, fh); err != nil {
		return err
	}
	if err := fs.C.SetTimes(ctx, fh, t); err != nil {
		return err
	}
	fs.fresh(fh)
	return nil
}

// Remove removes a file (rmdir false) or an empty directory.
func (fs *FS) Remove(ctx context.Context, dir Handle, name string, rmdir bool) error {
	return fs.C.Remove(ctx, dir, name, rmdir)
}

// File is an open file written sequentially from offset 0.
type File struct {
	fs       *FS
	FH       Handle
	off      int64  // next application write offset
	dirty    []byte // write-behind: data not yet sent
	dirtyOff int64
	unstable bool // UNSTABLE data sent since the last COMMIT
	sem      chan struct{}
	wg       sync.WaitGroup
	mu       sync.Mutex
	err      error // first failed write-behind WRITE
}

// Write is write(2) of p at the current offset.
func (f *File) Write(ctx context.Context, p []byte) error {
	fs := f.fs
	if err := fs.perOp(ctx, f.FH); err != nil {
		return err
	}
	if fs.Opt.Direct || fs.Opt.SyncWrites {
		// Sent now, at the application's size (split at wsize), FILE_SYNC.
		for len(p) > 0 {
			n := min(len(p), fs.Wsize)
			if _, err := fs.C.Write(ctx, f.FH, f.off, p[:n], FileSync); err != nil {
				return err
			}
			f.off += int64(n)
			p = p[n:]
		}
		fs.fresh(f.FH)
		return nil
	}
	if len(f.dirty) == 0 {
		f.dirtyOff = f.off
	}
	f.dirty = append(f.dirty, p...)
	f.off += int64(len(p))
	for len(f.dirty) >= fs.Wsize {
		f.send(ctx, f.dirty[:fs.Wsize])
		f.dirty = f.dirty[fs.Wsize:]
		f.dirtyOff += int64(fs.Wsize)
	}
	if len(f.dirty) == 0 {
		f.dirty = nil
	}
	return f.failed()
}

// send issues an UNSTABLE WRITE in the background (write-behind), at most
// maxWriteBehind at once.
func (f *File) send(ctx context.Context, data []byte) {
	buf := append([]byte(nil), data...)
	off := f.dirtyOff
	f.unstable = true
	f.sem <- struct{}{}
	f.wg.Add(1)
	go func() {
		defer func() { <-f.sem; f.wg.Done() }()
		if _, err := f.fs.C.Write(ctx, f.FH, off, buf, Unstable); err != nil {
			f.mu.Lock()
			if f.err == nil {
				f.err = err
			}
			f.mu.Unlock()
		}
	}()
}

func (f *File) failed() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// Sync is fsync(2): the rest of the write-behind data, then COMMIT when
// UNSTABLE data was sent.
func (f *File) Sync(ctx context.Context) error {
	if len(f.dirty) > 0 {
		f.send(ctx, f.dirty)
		f.dirty = nil
	}
	f.wg.Wait()
	if err := f.failed(); err != nil {
		return err
	}
	if f.unstable {
		if err := f.fs.C.Commit(ctx, f.FH); err != nil {
			return err
		}
		f.unstable = false
		f.fs.fresh(f.FH)
	}
	return nil
}

// Close is close(2): close-to-open flushes like fsync (noac revalidates
// first).
func (f *File) Close(ctx context.Context) error {
	if err := f.fs.perOp(ctx, f.FH); err != nil {
		return err
	}
	return f.Sync(ctx)
}

// ReadAt reads len(p) bytes at off: rsize READs, never from a cache.
func (f *File) ReadAt(ctx context.Context, p []byte, off int64) (int, error) {
	if err := f.fs.perOp(ctx, f.FH); err != nil {
		return 0, err
	}
	n := 0
	for n < len(p) {
		m, eof, err := f.fs.C.Read(ctx, f.FH, off+int64(n), p[n:min(len(p), n+f.fs.Rsize)])
		n += m
		if err != nil || eof || m == 0 {
			return n, err
		}
	}
	return n, nil
}
