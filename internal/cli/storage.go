package cli

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/interlink/interlink/internal/report"
	"github.com/interlink/interlink/internal/storage"
	"github.com/interlink/interlink/internal/units"
)

func init() { commands = append(commands, newStorageCmd) }

func newStorageCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "storage",
		Short: "Database-shaped I/O on a filesystem path: redo, datafile, backup, install, mkfile",
		// Runnable, as lab is, so that noArgs refuses an unknown
		// subcommand (one line, exit 3) rather than cobra printing help.
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	c.AddCommand(newStorageBenchCmd(e))
	return c
}

// storageBenchFlags are storage bench's flags.
type storageBenchFlags struct {
	profile, size string
	dur           time.Duration
	direct        bool
	emulate       string
	asJSON        bool
}

// storageBenchLong is storage bench's help text, which lists the profiles.
func storageBenchLong() string {
	var help strings.Builder
	for _, p := range storage.Profiles {
		fmt.Fprintf(&help, "  %-9s %s (default size %s)\n", p.Name, p.Help, units.FormatBytes(float64(storage.DefaultSize[p.Name])))
	}
	return `Run a database-shaped I/O profile in a private directory under PATH (any mounted
filesystem: NFS, local, FUSE), bounded by --size and --time, and remove it afterwards.
Files are preallocated like datafiles; nothing outside the private directory is touched.

` + help.String() + `
Reports operations per second, MB/s, latency p50/p99/p99.9/max (HDR histograms) per
operation, CPU per I/O, and the mount the path is on with its options. On an NFS mount
it adds what /proc/self/mountstats counted for the mount during the run (requests,
retransmissions, timeouts, bytes, average RTT and execute time per operation: GETATTR,
WRITE, COMMIT...) and what 'interlink check' says of the mount's options for the role the
profile stands for (redo, datafiles for datafile and mkfile, backup, home for install).

With nfs://SERVER/EXPORT instead of a path, no mount is needed: a built-in userspace
NFSv3 client (TCP, portmapper and MOUNT) runs the install, mkfile or backup profile
against the export and issues the RPC pattern the Linux kernel client issues under
--emulate OPTIONS, given as mount takes them: noac (GETATTR before every operation,
FILE_SYNC writes), actimeo=0 (revalidation, UNSTABLE writes, COMMIT on close),
forcedirectio (no client cache, FILE_SYNC writes at the application's size), defaults
(write-behind in wsize WRITEs, COMMIT on close), rsize/wsize. The output says it is an
emulation and counts the RPCs per procedure.`
}

func newStorageBenchCmd(e *env) *cobra.Command {
	var f storageBenchFlags
	c := &cobra.Command{
		Use:   "bench PATH|nfs://SERVER/EXPORT --profile redo|datafile|backup|install|mkfile [flags]",
		Short: "Measure a filesystem path with database-shaped I/O",
		Long:  storageBenchLong(),
		Args:  exactArgs(1, "a directory PATH or nfs://SERVER/EXPORT"),
		RunE:  func(cmd *cobra.Command, args []string) error { return runStorageBench(e, &f, args[0]) },
	}
	fs := c.Flags()
	fs.StringVar(&f.profile, "profile", "", "redo, datafile, backup, install or mkfile")
	fs.StringVar(&f.size, "size", "", "data to write (default per profile)")
	fs.DurationVar(&f.dur, "time", 10*time.Second, "bound on the run (shared by the profile's steps)")
	fs.BoolVar(&f.direct, "direct", false, "open data files with O_DIRECT (no page cache)")
	fs.StringVar(&f.emulate, "emulate", "", "for nfs://: mount options whose RPC pattern to emulate (default defaults)")
	fs.BoolVar(&f.asJSON, "json", false, "print JSON (schema interlink.storage/v1)")
	return c
}

// runStorageBench checks the spec, runs the profile on path and prints
// what it measured, a partial result too.
func runStorageBench(e *env, f *storageBenchFlags, path string) error {
	spec := storage.Spec{Profile: storage.Profile(f.profile), Path: path, Time: f.dur, Direct: f.direct, Emulate: f.emulate}
	if f.size != "" {
		v, err := units.ParseSize(f.size)
		if err != nil || v <= 0 {
			return usageError("storage bench: --size %q: want a size such as 256M or 1G", f.size)
		}
		spec.SizeBytes = v
	}
	if f.dur <= 0 {
		return usageError("storage bench: --time must be positive")
	}
	if err := spec.Validate(); err != nil {
		return usageError("storage bench: %s", strings.TrimPrefix(err.Error(), storage.ErrSpec.Error()+": "))
	}
	res, err := storage.Run(e.ctx, spec)
	if errors.Is(err, storage.ErrSpec) {
		return usageError("storage bench: %s", strings.TrimPrefix(err.Error(), storage.ErrSpec.Error()+": "))
	}
	if res != nil {
		if f.asJSON {
			if jerr := report.JSON(e.stdout, res); jerr != nil {
				return jerr
			}
		} else {
			if werr := storage.WriteText(e.stdout, res); werr != nil {
				return fmt.Errorf("storage: write report: %w", werr)
			}
		}
	}
	if err != nil {
		return err
	}
	if res.Interrupted {
		return withCode(ExitUnknown) // as bench and db: the result is partial
	}
	if len(res.LimitedBy) > 0 {
		return withCode(ExitWarning)
	}
	return nil
}
