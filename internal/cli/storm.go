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

func newStormCmd(e *env) *cobra.Command {
	var (
		spec       storm.Spec
		protocol   string
		sources    int
		sourceBase string
		asJSON     bool
	)
	c := &cobra.Command{
		Use:   "storm ADDR --clients N [--sources N] [--protocol tcp|postgres] [flags]",
		Short: "Connection storm: N clients released at once from many source addresses",
		Long: `Release N clients at one instant against ADDR (a database listener, or 'interlink gate'
in front of one), from --sources consecutive source addresses starting at --source-base
(loopback: 127.0.0.0/8 is all local; in a lab, addresses the node owns). Each client
connects and logs on: --protocol tcp sends one line and waits for any reply;
--protocol postgres runs PostgreSQL's startup and authentication (--user, --database,
the password from $PGPASSWORD) until the server is ready for queries; --protocol mysql
reads MySQL's greeting and authenticates (MySQL, MariaDB, a Galera member: --user,
--database, the password from $MYSQL_PWD) until the server's OK. Reports connect
time, time to the first server byte and logon time (percentiles since the release),
errors by kind, a timeline, and Jain's fairness index across sources.

Exit codes: 0 every client logged on, 1 some failed, 3 bad usage.`,
		Args: exactArgs(1, "the target ADDR (host:port)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			spec.Target = args[0]
			spec.Protocol = storm.Protocol(protocol)
			spec.Password = os.Getenv("PGPASSWORD")
			if spec.Protocol == storm.MySQL {
				spec.Password = os.Getenv("MYSQL_PWD")
			}
			if cmd.Flags().Changed("sources") || sourceBase != "" {
				base := sourceBase
				if base == "" {
					base = "127.0.0.1"
				}
				var err error
				if spec.Sources, err = storm.SourceRange(base, sources); err != nil {
					return usageError("storm: %s", strings.TrimPrefix(err.Error(), storm.ErrSpec.Error()+": "))
				}
			}
			if spec.Timeout <= 0 {
				return usageError("storm: --timeout must be positive")
			}
			if err := spec.Validate(); err != nil {
				return usageError("storm: %s", strings.TrimPrefix(err.Error(), storm.ErrSpec.Error()+": "))
			}
			if err := resolveTarget(e.ctx, spec.Target); err != nil {
				return err
			}
			res, err := storm.Run(e.ctx, spec)
			if err != nil {
				return fmt.Errorf("storm: %w", err)
			}
			if asJSON {
				if err := report.JSON(e.stdout, res); err != nil {
					return err
				}
			} else {
				if werr := storm.WriteText(e.stdout, res); werr != nil {
					return fmt.Errorf("storm: write report: %w", werr)
				}
			}
			if res.Failed > 0 {
				return withCode(ExitWarning)
			}
			return nil
		},
	}
	fs := c.Flags()
	fs.IntVar(&spec.Clients, "clients", 100, "clients released at once")
	fs.IntVar(&sources, "sources", 1, "source addresses to spread the clients over")
	fs.StringVar(&sourceBase, "source-base", "", "first source address (default 127.0.0.1 with --sources)")
	fs.StringVar(&protocol, "protocol", "tcp", "tcp, postgres or mysql")
	fs.StringVar(&spec.User, "user", "", "PostgreSQL or MySQL user (password from $PGPASSWORD or $MYSQL_PWD)")
	fs.StringVar(&spec.Database, "database", "", "database (PostgreSQL default: the user's name; MySQL: none)")
	fs.DurationVar(&spec.Timeout, "timeout", time.Minute, "bound on each client from the release to its logon")
	fs.DurationVar(&spec.Hold, "hold", 0, "keep each connection open this long after logon, as a pool would")
	fs.BoolVar(&asJSON, "json", false, "print JSON (schema interlink.storm/v1)")
	return c
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
