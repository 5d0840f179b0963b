package storage

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/interlink/interlink/internal/nfs"
)

// EmulationNote says what an nfs:// run is, in every rendering.
const EmulationNote = "emulation of the Linux kernel NFS client's RPC pattern for these mount options, " +
	"issued by interlink's userspace NFSv3 client over the real server and network (no kernel mount, no page cache)"

// Emulation is what an nfs:// run adds: the server, the options emulated
// and the RPCs the profile issued, per procedure (the MOUNT, FSINFO and
// the removal of the working directory are not counted).
type Emulation struct {
	Note    string          `json:"note"`
	Server  string          `json:"server"`
	Export  string          `json:"export"`
	Options nfs.Options     `json:"options"`
	Rsize   int             `json:"rsize"` // as negotiated with the server's FSINFO
	Wsize   int             `json:"wsize"`
	RPC     []nfs.ProcStats `json:"rpc"`
	// Calls is RPC's call count by procedure, every NFSv3 procedure the
	// client knows present (zero when not issued), and CallsTotal their
	// sum: what `interlink ab --metric rpc_calls` and friends read.
	Calls      map[string]uint64 `json:"calls"`
	CallsTotal uint64            `json:"calls_total"`
	// CleanupError is set when the working directory could not be removed.
	CleanupError string `json:"cleanup_error,omitempty"`
}

// NFSProfiles are the profiles an nfs:// run emulates.
var NFSProfiles = []Profile{Install, Mkfile, Backup}

// ParseNFSURL splits nfs://HOST[:PORT]/EXPORT.
func ParseNFSURL(s string) (server, export string, err error) {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "nfs" || u.Host == "" || u.Path == "" || u.RawQuery != "" || u.User != nil {
		return "", "", fmt.Errorf("%w: %q: want nfs://SERVER/EXPORT (an NFSv3 export, optionally SERVER:PORT)", ErrSpec, s)
	}
	return u.Host, path.Clean(u.Path), nil
}

func runNFS(ctx context.Context, res *Result) error {
	spec := res.Spec
	server, export, err := ParseNFSURL(spec.Path)
	if err != nil {
		return err
	}
	ok := false
	for _, p := range NFSProfiles {
		ok = ok || p == spec.Profile
	}
	if !ok {
		return fmt.Errorf("%w: profile %s is not emulated over nfs:// (install, mkfile and backup are); run it on a mounted path", ErrSpec, spec.Profile)
	}
	opts, err := nfs.ParseOptions(spec.Emulate)
	if err != nil {
		return fmt.Errorf("%w: --emulate %q: %v", ErrSpec, spec.Emulate, err)
	}
	c, err := nfs.Dial(ctx, server, export)
	if err != nil {
		return err
	}
	defer c.Close()
	fs := nfs.NewFS(c, opts)
	em := &Emulation{Note: EmulationNote, Server: server, Export: export, Options: opts, Rsize: fs.Rsize, Wsize: fs.Wsize}
	res.Emulation = em
	name := fmt.Sprintf(".interlink-storage-%d", time.Now().UnixNano())
	w := &nfsWork{fs: fs}
	dir, err := w.mkdir(ctx, fs.Root(), name)
	if err != nil {
		return fmt.Errorf("create the working directory in %s:%s: %w", server, export, err)
	}
	before := c.Stats.Snapshot()
	switch spec.Profile {
	case Install:
		err = nfsInstall(ctx, res, w, dir)
	case Mkfile:
		err = nfsMkfile(ctx, res, w, dir)
	case Backup:
		err = nfsBackup(ctx, res, w, dir)
	}
	em.RPC = diffStats(before, c.Stats.Snapshot())
	em.Calls = map[string]uint64{}
	for _, n := range nfs.ProcNames() {
		em.Calls[n] = 0
	}
	for _, p := range em.RPC {
		if _, ok := em.Calls[p.Proc]; ok {
			em.Calls[p.Proc] = p.Calls
			em.CallsTotal += p.Calls
		}
	}
	// Cleaning up must not be cut short by Ctrl-C: it is bounded instead.
	cctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if cerr := w.cleanup(cctx); cerr != nil {
		em.CleanupError = cerr.Error()
		err = errors.Join(err, fmt.Errorf("remove %s from %s:%s: %w", name, server, export, cerr))
	}
	return err
}

func diffStats(before, after []nfs.ProcStats) []nfs.ProcStats {
	b := map[string]nfs.ProcStats{}
	for _, p := range before {
		b[p.Proc] = p
	}
	var out []nfs.ProcStats
	for _, a := range after {
		p := b[a.Proc]
		d := nfs.ProcStats{Proc: a.Proc, Calls: a.Calls - p.Calls, BytesSent: a.BytesSent - p.BytesSent,
			BytesReceived: a.BytesReceived - p.BytesReceived, RTT: a.RTT - p.RTT}
		if d.Calls > 0 {
			out = append(out, d)
		}
	}
	return out
}

// nfsWork remembers what a run created, to remove exactly that.
type nfsWork struct {
	fs      *nfs.FS
	created []entry // in creation order
}

type entry struct {
	dir   nfs.Handle
	name  string
	isDir bool
}

func (w *nfsWork) mkdir(ctx context.Context, dir nfs.Handle, name string) (nfs.Handle, error) {
	h, err := w.fs.Mkdir(ctx, dir, name)
	if err == nil {
		w.created = append(w.created, entry{dir, name, true})
	}
	return h, err
}

func (w *nfsWork) create(ctx context.Context, dir nfs.Handle, name string) (*nfs.File, error) {
	f, err := w.fs.Create(ctx, dir, name)
	if err == nil {
		w.created = append(w.created, entry{dir, name, false})
	}
	return f, err
}

func (w *nfsWork) cleanup(ctx context.Context) error {
	var errs []error
	for i := len(w.created) - 1; i >= 0; i-- {
		e := w.created[i]
		if err := w.fs.Remove(ctx, e.dir, e.name, e.isDir); err != nil && len(errs) < 3 {
			errs = append(errs, fmt.Errorf("%s: %w", e.name, err))
		}
	}
	return errors.Join(errs...)
}

func nfsInstall(ctx context.Context, res *Result, w *nfsWork, dir nfs.Handle) error {
	rng := rand.New(rand.NewPCG(1, 2))
	mk, cr, wr, cl, ut, st := newRec("mkdir"), newRec("create"), newRec("write"), newRec("close"), newRec("utime"), newRec("stat")
	buf := fill(make([]byte, 64<<10))
	stamp := time.Date(2024, 1, 16, 0, 0, 0, 0, time.UTC)
	start := time.Now()
	var written int64
	var files int
	var sub nfs.Handle
	tops := map[int]nfs.Handle{}
	for files < installFiles && written < res.Spec.SizeBytes && time.Since(start) < res.Spec.Time && ctx.Err() == nil {
		if files%100 == 0 { // a new directory every 100 files, two levels deep
			t := time.Now()
			top, ok := tops[files/10000]
			var err error
			if !ok {
				if top, err = w.mkdir(ctx, dir, fmt.Sprintf("d%03d", files/10000)); err != nil {
					return fmt.Errorf("mkdir: %w", err)
				}
				tops[files/10000] = top
			}
			if sub, err = w.mkdir(ctx, top, fmt.Sprintf("d%03d", files/100%100)); err != nil {
				return fmt.Errorf("mkdir: %w", err)
			}
			mk.add(time.Since(t), 0)
		}
		t := time.Now()
		f, err := w.create(ctx, sub, fmt.Sprintf("f%05d", files))
		if err != nil {
			return fmt.Errorf("create: %w", err)
		}
		cr.add(time.Since(t), 0)
		for left := installSize(rng); left > 0; {
			n := min(left, len(buf))
			t = time.Now()
			if err := f.Write(ctx, buf[:n]); err != nil {
				return fmt.Errorf("write: %w", err)
			}
			wr.add(time.Since(t), n)
			written += int64(n)
			left -= n
		}
		t = time.Now()
		if err := f.Close(ctx); err != nil {
			return fmt.Errorf("close: %w", err)
		}
		cl.add(time.Since(t), 0)
		t = time.Now()
		if err := w.fs.SetTimes(ctx, f.FH, stamp); err != nil {
			return fmt.Errorf("utime: %w", err)
		}
		ut.add(time.Since(t), 0)
		t = time.Now()
		if err := w.fs.Stat(ctx, f.FH); err != nil {
			return fmt.Errorf("stat: %w", err)
		}
		st.add(time.Since(t), 0)
		files++
	}
	d := time.Since(start)
	res.Steps = append(res.Steps, Step{Name: fmt.Sprintf("%d files, %s, unzip-like", files, fmtSize64(written)), Depth: 1,
		Duration: d.Nanoseconds(), Ops: []Op{cr.op(d), wr.op(d), cl.op(d), ut.op(d), st.op(d), mk.op(d)}})
	if written < res.Spec.SizeBytes && files < installFiles && ctx.Err() == nil {
		res.LimitedBy = append(res.LimitedBy, fmt.Sprintf("time: wrote %d files, %s of %s in %s", files, fmtSize64(written), fmtSize64(res.Spec.SizeBytes), res.Spec.Time))
	}
	return nil
}

// nfsWriteThenSync writes size bytes in len(buf) writes, then fsyncs.
func nfsWriteThenSync(ctx context.Context, f *nfs.File, buf []byte, size int64, bound time.Duration) (int64, Step, error) {
	w, fs := newRec("write"), newRec("fsync")
	start := time.Now()
	var written int64
	for written < size && time.Since(start) < bound && ctx.Err() == nil {
		n := int(min(int64(len(buf)), size-written))
		t := time.Now()
		if err := f.Write(ctx, buf[:n]); err != nil {
			return written, Step{}, fmt.Errorf("%s write at %d: %w", fmtSize(n), written, err)
		}
		w.add(time.Since(t), n)
		written += int64(n)
	}
	t := time.Now()
	if err := f.Sync(ctx); err != nil {
		return written, Step{}, fmt.Errorf("fsync: %w", err)
	}
	fs.add(time.Since(t), 0)
	d := time.Since(start)
	return written, Step{Depth: 1, Duration: d.Nanoseconds(), Ops: []Op{w.op(d), fs.op(d)}}, nil
}

func nfsMkfile(ctx context.Context, res *Result, w *nfsWork, dir nfs.Handle) error {
	f, err := w.create(ctx, dir, "mkfile.dat")
	if err != nil {
		return err
	}
	written, step, err := nfsWriteThenSync(ctx, f, fill(make([]byte, blockSize)), res.Spec.SizeBytes, res.Spec.Time)
	if err != nil {
		return err
	}
	step.Name = fmt.Sprintf("%s file in 8 KiB writes, then fsync", fmtSize64(written))
	res.Steps = append(res.Steps, step)
	if written < res.Spec.SizeBytes && ctx.Err() == nil {
		res.LimitedBy = append(res.LimitedBy, fmt.Sprintf("time: wrote %s of %s in %s", fmtSize64(written), fmtSize64(res.Spec.SizeBytes), res.Spec.Time))
	}
	return nil
}

func nfsBackup(ctx context.Context, res *Result, w *nfsWork, dir nfs.Handle) error {
	f, err := w.create(ctx, dir, "backup.bkp")
	if err != nil {
		return err
	}
	buf := fill(make([]byte, 1<<20))
	half := res.Spec.Time / 2
	written, step, err := nfsWriteThenSync(ctx, f, buf, res.Spec.SizeBytes, half)
	if err != nil {
		return err
	}
	step.Name = "1 MiB sequential writes"
	res.Steps = append(res.Steps, step)
	if written < res.Spec.SizeBytes && ctx.Err() == nil {
		res.LimitedBy = append(res.LimitedBy, fmt.Sprintf("time: wrote %s of %s before half the time ran out", fmtSize64(written), fmtSize64(res.Spec.SizeBytes)))
	}
	r := newRec("read")
	start := time.Now()
	for off := int64(0); off < written && time.Since(start) < half && ctx.Err() == nil; {
		t := time.Now()
		n, err := f.ReadAt(ctx, buf[:min(int64(len(buf)), written-off)], off)
		if n > 0 {
			r.add(time.Since(t), n)
		}
		if err != nil || n == 0 {
			break
		}
		off += int64(n)
	}
	d := time.Since(start)
	res.Steps = append(res.Steps, Step{Name: "1 MiB sequential reads (no client cache)", Depth: 1, Duration: d.Nanoseconds(), Ops: []Op{r.op(d)}})
	return nil
}

// IsNFSURL reports whether a bench target is an nfs:// export.
func IsNFSURL(p string) bool { return strings.HasPrefix(p, "nfs://") }
