package cli

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/interlink/interlink/internal/report"
	"github.com/interlink/interlink/internal/storm"
)

func init() { commands = append(commands, newStormCmd) }

// stormFlags are storm's flags: the spec's, and those that make its
// sources, protocol and password.
type stormFlags struct {
	spec       storm.Spec
	protocol   string
	sources    int
	sourceBase string
	asJSON     bool
}

const stormLong = `Release N clients at one instant against ADDR (a database listener, or 'interlink gate'
in front of one), from --sources consecutive source addresses starting at --source-base
(loopback: 127.0.0.0/8 is all local; in a lab, addresses the node owns). Each client
connects and logs on: --protocol tcp sends one line and waits for any reply;
--protocol postgres runs PostgreSQL's startup and authentication (--user, --database,
the password from $PGPASSWORD) until the server is ready for queries; --protocol mysql
reads MySQL's greeting and authenticates (MySQL, MariaDB, a Galera member: --user,
--database, the password from $MYSQL_PWD) until the server's OK. Reports connect
time, time to the first server byte and logon time (percentiles since the release),
errors by kind, a timeline, and Jain's fairness index across sources.

Exit codes: 0 every client logged on, 1 some failed, 3 bad usage.`

func newStormCmd(e *env) *cobra.Command {
	var f stormFlags
	c := &cobra.Command{
		Use:   "storm ADDR --clients N [--sources N] [--protocol tcp|postgres|mysql] [flags]",
		Short: "Connection storm: N clients released at once from many source addresses",
		Long:  stormLong,
		Args:  exactArgs(1, "the target ADDR (host:port)"),
		RunE:  func(cmd *cobra.Command, args []string) error { return f.run(e, cmd, args[0]) },
	}
	f.bind(c)
	return c
}

func (f *stormFlags) bind(c *cobra.Command) {
	fs := c.Flags()
	fs.IntVar(&f.spec.Clients, "clients", 100, "clients released at once")
	fs.IntVar(&f.sources, "sources", 1, "source addresses to spread the clients over")
	fs.StringVar(&f.sourceBase, "source-base", "", "first source address (default 127.0.0.1 with --sources)")
	fs.StringVar(&f.protocol, "protocol", "tcp", "tcp, postgres or mysql")
	fs.StringVar(&f.spec.User, "user", "", "PostgreSQL or MySQL user (password from $PGPASSWORD or $MYSQL_PWD)")
	fs.StringVar(&f.spec.Database, "database", "", "database (PostgreSQL default: the user's name; MySQL: none)")
	fs.DurationVar(&f.spec.Timeout, "timeout", time.Minute, "bound on each client from the release to its logon")
	fs.DurationVar(&f.spec.Hold, "hold", 0, "keep each connection open this long after logon, as a pool would")
	fs.BoolVar(&f.asJSON, "json", false, "print JSON (schema interlink.storm/v1)")
}

// parse completes the spec from the flags and the environment and checks
// it, before anything connects.
func (f *stormFlags) parse(e *env, cmd *cobra.Command, target string) (storm.Spec, error) {
	spec := f.spec
	spec.Target = target
	spec.Protocol = storm.Protocol(f.protocol)
	spec.Password = os.Getenv("PGPASSWORD")
	if spec.Protocol == storm.MySQL {
		spec.Password = os.Getenv("MYSQL_PWD")
	}
	if cmd.Flags().Changed("sources") || f.sourceBase != "" {
		base := f.sourceBase
		if base == "" {
			base = "127.0.0.1"
		}
		var err error
		if spec.Sources, err = storm.SourceRange(base, f.sources); err != nil {
			return spec, usageError("storm: %s", strings.TrimPrefix(err.Error(), storm.ErrSpec.Error()+": "))
		}
	}
	if spec.Timeout <= 0 {
		return spec, usageError("storm: --timeout must be positive")
	}
	if err := spec.Validate(); err != nil {
		return spec, usageError("storm: %s", strings.TrimPrefix(err.Error(), storm.ErrSpec.Error()+": "))
	}
	if err := fence(e, "storm", spec.Target); err != nil {
		return spec, err
	}
	return spec, resolveTarget(e.ctx, spec.Target)
}

func (f *stormFlags) run(e *env, cmd *cobra.Command, target string) error {
	spec, err := f.parse(e, cmd, target)
	if err != nil {
		return err
	}
	res, err := storm.Run(e.ctx, spec)
	if err != nil {
		return fmt.Errorf("storm: %w", err)
	}
	if f.asJSON {
		if err := report.JSON(e.stdout, res); err != nil {
			return err
		}
	} else if werr := storm.WriteText(e.stdout, res); werr != nil {
		return fmt.Errorf("storm: write report: %w", werr)
	}
	if res.Failed > 0 {
		return withCode(ExitWarning)
	}
	return nil
}

// resolveTarget looks a target given by name up once before the release:
// a name that does not resolve is bad input, not a storm of clients that
// each fail with "other".
func resolveTarget(ctx context.Context, target string) error {
	host, _, _ := net.SplitHostPort(target) // Validate checked the form
	if _, err := netip.ParseAddr(host); err == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := net.DefaultResolver.LookupHost(ctx, host); err != nil {
		return usageError("storm: target %s: cannot resolve %s: %v", target, host, err)
	}
	return nil
}
