package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/interlink/interlink/internal/agent"
	"github.com/interlink/interlink/internal/dnfs"
	"github.com/interlink/interlink/internal/inventory"
	"github.com/interlink/interlink/internal/pmtu"
	"github.com/interlink/interlink/internal/report"
	"github.com/interlink/interlink/internal/termtext"
)

// storageFlags are pmtu's Direct NFS flags.
type storageFlags struct {
	on          bool
	oranfstabs  []string
	oracleHomes []string
}

// runPMTUStorage proves every local: -> path: pair of the oranfstab files
// named with --oranfstab, or else of those Direct NFS would read on this
// node (each Oracle home's dbs/oranfstab, /etc/oranfstab).
func runPMTUStorage(ctx context.Context, e *env, sf storageFlags, opt agent.ProbeOptions, asJSON bool) error {
	var files []*inventory.Oranfstab
	for _, f := range sf.oranfstabs {
		t, err := readOranfstabFile(f)
		if err != nil {
			return err
		}
		files = append(files, t)
	}
	if len(sf.oranfstabs) == 0 {
		for _, h := range sf.oracleHomes {
			if !filepath.IsAbs(h) {
				return usageError("pmtu: --oracle-home %q: want an absolute directory", h)
			}
		}
		src, err := inventory.Open("/")
		if err != nil {
			return fmt.Errorf("pmtu: %v", err)
		}
		d, detail := inventory.ReadDNFS(ctx, src, cleanHomes(sf.oracleHomes))
		src.Close()
		if d == nil || len(d.Files) == 0 {
			return usageError("pmtu: --storage: no oranfstab to prove (%s); name one with --oranfstab FILE or its home with --oracle-home DIR", termtext.Clean(detail))
		}
		files = d.Files
	}
	res := &dnfs.Result{Schema: dnfs.Schema, Expect: opt.Expect}
	for _, t := range files {
		res.Files = append(res.Files, t.File)
	}
	pairs := dnfs.Pairs(files)
	if len(pairs) == 0 {
		return usageError("pmtu: --storage: %s lists no path: to prove", termtext.Clean(strings.Join(res.Files, ", ")))
	}
	var paths []string
	for _, p := range pairs {
		paths = append(paths, p.Path)
	}
	if err := fence(e, "pmtu", paths...); err != nil {
		return err
	}
	res.Proofs = dnfs.Prove(ctx, pairs, dnfs.Options{Tries: opt.Tries, Max: opt.Max, Expect: opt.Expect})
	if asJSON {
		if err := report.JSON(e.stdout, res); err != nil {
			return err
		}
	} else {
		if werr := res.WriteText(e.stdout); werr != nil {
			return fmt.Errorf("pmtu --storage: write report: %w", werr)
		}
	}
	return withCode(storageCode(res))
}

func readOranfstabFile(name string) (*inventory.Oranfstab, error) {
	fi, err := os.Stat(name)
	switch {
	case err != nil:
		return nil, usageError("pmtu: --oranfstab %s: %v", termtext.Clean(name), errorsUnwrapPath(err))
	case !fi.Mode().IsRegular():
		return nil, usageError("pmtu: --oranfstab %s: not a regular file", termtext.Clean(name))
	case fi.Size() > 1<<20:
		return nil, usageError("pmtu: --oranfstab %s: %d bytes; an oranfstab is a few lines", termtext.Clean(name), fi.Size())
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, usageError("pmtu: --oranfstab %s: %v", termtext.Clean(name), errorsUnwrapPath(err))
	}
	defer f.Close()
	t, err := inventory.ParseOranfstab(f, name)
	if err != nil {
		return nil, usageError("pmtu: --oranfstab %s: %v", termtext.Clean(name), err)
	}
	return t, nil
}

// errorsUnwrapPath drops the path an *fs.PathError repeats.
func errorsUnwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// storageCode is pmtu's exit policy over every pair (pmtu.Judge): 2 when
// a path is below --expect, 3 when a pair could not be probed or its filer
// did not answer at all, 1 for a problem verdict.
func storageCode(res *dnfs.Result) int {
	status := pmtu.StatusOK
	for _, p := range res.Proofs {
		if p.Result == nil {
			status = pmtu.Worse(status, pmtu.StatusUnknown)
			continue
		}
		_, st := pmtu.Judge(*p.Result, res.Expect)
		status = pmtu.Worse(status, st)
	}
	return statusCode(status)
}
