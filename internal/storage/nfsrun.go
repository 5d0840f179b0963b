package storage

import (
	"context"
	"errors"
	"fmt"
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
		err = install(ctx, res, &nfsTree{w: w, dir: dir, tops: map[string]nfs.Handle{}})
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

// nfsTree is install's tree in the run's working directory of an export.
type nfsTree struct {
	w    *nfsWork
	dir  nfs.Handle
	tops map[string]nfs.Handle
	cur  nfs.Handle
}

func (t *nfsTree) mkdirs(ctx context.Context, top, sub string) error {
	h, ok := t.tops[top]
	if !ok {
		var err error
		if h, err = t.w.mkdir(ctx, t.dir, top); err != nil {
			return err
		}
		t.tops[top] = h
	}
	cur, err := t.w.mkdir(ctx, h, sub)
	if err != nil {
		return err
	}
	t.cur = cur
	return nil
}

func (t *nfsTree) create(ctx context.Context, name string) (treeFile, error) {
	f, err := t.w.create(ctx, t.cur, name)
	if err != nil {
		return nil, err
	}
	return nfsTreeFile{nfsSeq: nfsSeq{f}, fs: t.w.fs}, nil
}

// nfsTreeFile writes as nfsSeq does.
type nfsTreeFile struct {
	nfsSeq
	fs *nfs.FS
}

func (n nfsTreeFile) close(ctx context.Context) error { return n.f.Close(ctx) }

func (n nfsTreeFile) setTimes(ctx context.Context, t time.Time) error {
	return n.fs.SetTimes(ctx, n.f.FH, t)
}

func (n nfsTreeFile) stat(ctx context.Context) error { return n.fs.Stat(ctx, n.f.FH) }

func nfsMkfile(ctx context.Context, res *Result, w *nfsWork, dir nfs.Handle) error {
	f, err := w.create(ctx, dir, "mkfile.dat")
	if err != nil {
		return err
	}
	return mkfile(ctx, res, nfsSeq{f}, fill(make([]byte, blockSize)))
}

func nfsBackup(ctx context.Context, res *Result, w *nfsWork, dir nfs.Handle) error {
	f, err := w.create(ctx, dir, "backup.bkp")
	if err != nil {
		return err
	}
	return backup(ctx, res, nfsSeq{f}, fill(make([]byte, 1<<20)), "1 MiB sequential reads (no client cache)")
}

// IsNFSURL reports whether a bench target is an nfs:// export.
func IsNFSURL(p string) bool { return strings.HasPrefix(p, "nfs://") }
