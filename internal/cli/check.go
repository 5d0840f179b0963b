package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/interlink/interlink/internal/atomicfile"
	"github.com/interlink/interlink/internal/inventory"
	"github.com/interlink/interlink/internal/report"
	"github.com/interlink/interlink/internal/rules"
	"github.com/interlink/interlink/internal/shellq"
	"github.com/interlink/interlink/internal/termtext"
)

func init() { commands = append(commands, newCheckCmd) }

// checkNow is the clock of check; golden tests replace it.
var checkNow = time.Now

// maxCheckInterval bounds --interval: check is an audit, not a monitor.
const maxCheckInterval = 10 * time.Minute

type checkFlags struct {
	root         string
	asJSON       bool
	interval     time.Duration
	interconnect []string
	mountRoles   []string
	platform     string
	collect      string
	listRules    bool
	oracleHomes  []string
	storageMTU   int
	out          outputFlags
}

func newCheckCmd(e *env) *cobra.Command {
	var f checkFlags
	c := &cobra.Command{
		Use:   "check",
		Short: "Read-only audit of this node's interconnect, network configuration, sysctls, counters and NFS mounts",
		Long: `check reads this node's interfaces, bonds and bridges, the network configuration
that comes back after a reboot, sysctls, kernel counters and NFS mounts, and how the
host wakes for an arriving block (CPU idle states, guest halt polling, tuned, cpufreq,
steal time, the NICs' interrupt coalescing and IRQs), and judges them with rules that
each carry an id, a severity, the evidence, a fix and a source.
It changes nothing and runs as root or as an ordinary user (what it cannot read is
shown as a section status).

Direct NFS: the Oracle homes in oratab and --oracle-home are read for their
dbs/oranfstab and whether dNFS is linked in; /etc/oranfstab too.

The interconnect is taken from --interconnect, else from Oracle Clusterware's GPnP
profile when it is readable; without either, interconnect rules stay silent.

Exit codes: 0 no finding above info, 1 warning, 2 critical, 3 could not run.`,
		Example: `  interlink check
  interlink check --interconnect bond1 --interval 5s
  interlink check --mount-role /u02/oradata=datafiles --json
  interlink check --oracle-home /u01/app/oracle/product/19.0.0/dbhome_1 --storage-mtu 9000
  interlink check --collect /tmp/node1.tar.gz      # audit and write a support bundle
  interlink check --root /tmp/node1.tar.gz         # repeat that audit elsewhere`,
		RunE: func(cmd *cobra.Command, args []string) error { return runCheck(e, f) },
	}
	fl := c.Flags()
	fl.StringVar(&f.root, "root", "/", "audit the tree under DIR, or a bundle written by --collect")
	fl.BoolVar(&f.asJSON, "json", false, "print JSON (schema interlink.check/v1)")
	fl.DurationVar(&f.interval, "interval", 0, "sample the kernel counters twice this far apart and judge their rates (e.g. 5s)")
	fl.Var((*commaList)(&f.interconnect), "interconnect", "the private interconnect interfaces, IF[,IF] (default: from the GPnP profile)")
	fl.StringArrayVar(&f.mountRoles, "mount-role", nil, "what an NFS mount holds, PATH=ROLE (datafiles, redo, crs, home, backup, other); repeatable")
	fl.StringVar(&f.platform, "platform", "linux", "platform row of the NFS option table: linux, solaris, aix, hpux")
	fl.StringVar(&f.collect, "collect", "", "also write the files read to FILE.tar.gz (a bundle --root accepts)")
	fl.StringArrayVar(&f.oracleHomes, "oracle-home", nil, "an Oracle home to audit for Direct NFS (its dbs/oranfstab and ODM library) besides those in oratab; repeatable")
	fl.IntVar(&f.storageMTU, "storage-mtu", 0, "the MTU expected on Direct NFS storage interfaces (0: only compare them with each other)")
	f.out.add(fl)
	fl.BoolVar(&f.listRules, "rules", false, "list the rules (id, severity, what each detects, source) and exit")
	return c
}

// checkConfig validates the flags into a rules.Config.
func checkConfig(f checkFlags) (rules.Config, error) {
	cfg := rules.Config{MountRoles: map[string]rules.Role{}}
	p, err := rules.ParsePlatform(f.platform)
	if err != nil {
		return cfg, usageError("check: --platform: %v", err)
	}
	cfg.Platform = p
	for _, ic := range f.interconnect {
		ic = strings.TrimSpace(ic)
		// The kernel refuses '/' and white space in a name; a control
		// character is a pasted line break or escape, not a name.
		if ic == "" || len(ic) > 15 || strings.ContainsFunc(ic, func(r rune) bool { return r == '/' || unicode.IsSpace(r) || unicode.IsControl(r) }) {
			return cfg, usageError("check: --interconnect: %q is not an interface name", ic)
		}
		cfg.Interconnect = append(cfg.Interconnect, ic)
	}
	for _, mr := range f.mountRoles {
		mp, role, ok := strings.Cut(mr, "=")
		if !ok || !strings.HasPrefix(mp, "/") {
			return cfg, usageError("check: --mount-role: want PATH=ROLE with an absolute PATH, got %q", mr)
		}
		r, err := rules.ParseRole(role)
		if err != nil {
			return cfg, usageError("check: --mount-role %s: %v", mr, err)
		}
		cfg.MountRoles[filepath.Clean(mp)] = r
	}
	for _, h := range f.oracleHomes {
		if !strings.HasPrefix(h, "/") || strings.ContainsAny(h, "\n\x00") {
			return cfg, usageError("check: --oracle-home %q: want an absolute directory", h)
		}
	}
	if f.storageMTU != 0 && (f.storageMTU < 576 || f.storageMTU > 65535) {
		return cfg, usageError("check: --storage-mtu %d: want 576 to 65535 (9000 for jumbo frames)", f.storageMTU)
	}
	cfg.StorageMTU = f.storageMTU
	if f.interval < 0 || f.interval > maxCheckInterval {
		return cfg, usageError("check: --interval %s: want a duration between 0 and %s", f.interval, maxCheckInterval)
	}
	if err := f.out.check("check"); err != nil {
		return cfg, err
	}
	if err := notInput("check", "--html", f.out.html, []string{f.root}); err != nil {
		return cfg, err
	}
	if f.collect != "" && !strings.HasSuffix(f.collect, ".tar.gz") && !strings.HasSuffix(f.collect, ".tgz") {
		return cfg, usageError("check: --collect %s: the bundle name must end in .tar.gz", f.collect)
	}
	return cfg, nil
}

// commaList is a flag of comma-separated values, repeatable. Unlike
// pflag's string slice it is not read as CSV, whose reader keeps only
// the first line: "bond1<newline>bond2" (a file pasted with $(cat ...))
// lost bond2 without a word. Here the line break stays in the value and
// is refused as no interface name.
type commaList []string

func (l *commaList) String() string { return strings.Join(*l, ",") }
func (l *commaList) Type() string   { return "strings" }
func (l *commaList) Set(v string) error {
	if v != "" { // as pflag's: an empty value adds nothing
		*l = append(*l, strings.Split(v, ",")...)
	}
	return nil
}

func cleanHomes(homes []string) []string {
	var out []string
	for _, h := range homes {
		out = append(out, filepath.Clean(h))
	}
	return out
}

func runCheck(e *env, f checkFlags) error {
	if f.listRules {
		return listRules(e, f.asJSON)
	}
	cfg, err := checkConfig(f)
	if err != nil {
		return err
	}
	src, err := inventory.OpenContext(e.ctx, f.root)
	if err != nil {
		if e.ctx.Err() != nil {
			return fmt.Errorf("check: --root %s: interrupted while unpacking the bundle", termtext.Clean(f.root))
		}
		// The error quotes the bundle's entries: a hostile bundle must not
		// reach the terminal raw.
		return usageError("check: --root %s: %s", termtext.Clean(f.root), termtext.Clean(err.Error()))
	}
	defer src.Close()
	if f.interval > 0 && src.Origin() != src.Root() {
		return usageError("check: --interval needs a live tree; %s is a captured bundle whose counters do not move", f.root)
	}
	if f.interval > 0 && showProgress(e, f.asJSON) {
		fmt.Fprintf(e.stderr, "interlink: sampling counters for %s (Ctrl-C reports totals only)\n", f.interval)
	}
	inv, err := gather(e.ctx, src, inventory.Options{CounterInterval: f.interval, Now: checkNow, OracleHomes: cleanHomes(f.oracleHomes)})
	switch {
	case errors.Is(err, inventory.ErrNothingRead):
		// Not an OK node: there was nothing to judge.
		return usageError("check: %s", termtext.Clean(err.Error()))
	case err != nil:
		return fmt.Errorf("check: %s; nothing judged", termtext.Clean(err.Error()))
	}
	res := rules.Check(inv, cfg)
	if f.collect != "" {
		if err := writeBundle(src, f.collect); err != nil {
			return err
		}
	}
	if f.asJSON {
		err = report.JSON(e.stdout, res)
	} else {
		err = report.CheckText(e.stdout, res)
	}
	if err != nil {
		return fmt.Errorf("check: write report: %w", err)
	}
	if err := f.out.emit(e, "check", "interlink check "+res.Node.Hostname, res); err != nil {
		return err
	}
	if f.collect != "" && !f.asJSON {
		fmt.Fprintf(e.stderr, "interlink: bundle %s (%d files; audit it elsewhere with: %s)\n",
			termtext.Clean(f.collect), len(src.Files()), shellq.Join("interlink", "check", "--root", f.collect))
	}
	return withCode(res.Summary.ExitCode)
}

// stopGrace is how long check waits, after SIGINT or SIGTERM, for a read
// of the tree to return before it gives up on it and exits.
const stopGrace = time.Second

// gather runs inventory.Gather, which stops reading once ctx ends. Every
// file is opened without blocking, but a read of a live tree on a hung
// file system can still block in the kernel: then check does not wait for
// it longer than stopGrace after ctx ends.
func gather(ctx context.Context, src *inventory.Source, opts inventory.Options) (*inventory.Inventory, error) {
	type result struct {
		inv *inventory.Inventory
		err error
	}
	done := make(chan result, 1)
	go func() {
		inv, err := inventory.Gather(ctx, src, opts)
		done <- result{inv, err}
	}()
	select {
	case r := <-done:
		return r.inv, r.err
	case <-ctx.Done():
	}
	t := time.NewTimer(stopGrace)
	defer t.Stop()
	select {
	case r := <-done:
		return r.inv, r.err
	case <-t.C:
		return nil, fmt.Errorf("stopped: a read of the tree did not return within %s (%w)", stopGrace, ctx.Err())
	}
}

// writeBundle writes the collected files next to name and renames the
// result into place, so a failure leaves no half-written bundle.
func writeBundle(src *inventory.Source, name string) error {
	if err := writableDir(name); err != nil {
		return usageError("check: --collect %s: %v", name, err)
	}
	if err := atomicfile.Write(name, atomicfile.Options{}, func(w io.Writer) error { return src.Collect(w, checkNow()) }); err != nil {
		return fmt.Errorf("check: --collect %s: %w", name, err)
	}
	return nil
}

func listRules(e *env, asJSON bool) error {
	if asJSON {
		return report.JSON(e.stdout, rules.List())
	}
	return rules.WriteListing(e.stdout)
}
