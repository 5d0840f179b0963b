package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/interlink/interlink/internal/agent"
	"github.com/interlink/interlink/internal/pmtu"
	"github.com/interlink/interlink/internal/report"
	"github.com/interlink/interlink/internal/termtext"
	"github.com/interlink/interlink/internal/units"
)

func init() { commands = append(commands, newPMTUCmd) }

// PMTUReport is the result of `interlink pmtu`, owned by package pmtu.
type PMTUReport = pmtu.Report

// probeFlags are the search flags pmtu and mesh share.
type probeFlags struct {
	tokenFile, expect, max string
	tries                  int
	asJSON                 bool
	timeout                time.Duration
	out                    outputFlags
}

// add binds the search flags and those of a command with one result:
// --json, --timeout and the output flags (pmtu, mesh).
func (f *probeFlags) add(c *cobra.Command) {
	fs := c.Flags()
	f.addSearch(fs)
	fs.BoolVar(&f.asJSON, "json", false, "print JSON")
	fs.DurationVar(&f.timeout, "timeout", time.Minute, "give up after this long")
	f.out.add(fs)
}

// addSearch binds the search flags alone (watch: its rounds are bounded
// by --interval and served as metrics, not printed or saved).
func (f *probeFlags) addSearch(fs *pflag.FlagSet) {
	fs.StringVar(&f.tokenFile, "token-file", "", "file holding the agents' shared token")
	fs.StringVar(&f.expect, "expect", "", "expected path MTU (e.g. 9000): exit 2 if a path is below")
	fs.StringVar(&f.max, "max", "", "largest packet to try (default: the sending interface's MTU)")
	fs.IntVar(&f.tries, "tries", 3, "probes, at least, that re-check a size before it counts as failed (random loss; more where more loss is seen)")
}

// parse checks the flags add binds; cmd names the command for messages.
func (f *probeFlags) parse(cmd string, needToken bool) (tok []byte, opt agent.ProbeOptions, err error) {
	if f.timeout <= 0 {
		return nil, opt, usageError("%s: --timeout must be positive", cmd)
	}
	if err := f.out.check(cmd); err != nil {
		return nil, opt, err
	}
	return f.parseSearch(cmd, needToken)
}

// parseSearch checks the flags addSearch binds.
func (f *probeFlags) parseSearch(cmd string, needToken bool) (tok []byte, opt agent.ProbeOptions, err error) {
	if f.expect != "" {
		v, err := units.ParseSize(f.expect)
		if err != nil || v < 68 || v > 65535 {
			return nil, opt, usageError("%s: --expect %q: want an MTU between 68 and 65535, e.g. 9000", cmd, f.expect)
		}
		opt.Expect = int(v)
	}
	if f.max != "" {
		v, err := units.ParseSize(f.max)
		if err != nil || v < 68 || v > 65535 {
			return nil, opt, usageError("%s: --max %q: want a packet size between 68 and 65535", cmd, f.max)
		}
		opt.Max = int(v)
	}
	if opt.Max > 0 && opt.Expect > opt.Max {
		// No path could meet it: every run would end CRITICAL (exit 2)
		// for a typo, paging someone.
		return nil, opt, usageError("%s: --max %d is below --expect %d: no path could meet it", cmd, opt.Max, opt.Expect)
	}
	if f.tries < 1 || f.tries > 10 {
		return nil, opt, usageError("%s: --tries must be 1 to 10", cmd)
	}
	opt.Tries = f.tries
	if needToken {
		if f.tokenFile == "" {
			hint := ""
			if cmd == "pmtu" {
				hint = ", or use --icmp"
			}
			return nil, opt, usageError("%s: --token-file FILE is required (the agents' shared token)%s", cmd, hint)
		}
		if tok, err = agent.ReadToken(f.tokenFile); err != nil {
			return nil, opt, usageError("%s: %v", cmd, trimToken(err))
		}
	}
	return tok, opt, nil
}

// pmtuFlags are pmtu's flags: the search flags it shares with mesh, the
// probe's addresses, --icmp, and the Direct NFS flags of --storage.
type pmtuFlags struct {
	probe          probeFlags
	target, source string
	icmp           bool
	storage        storageFlags
}

const pmtuLong = `Prove the path MTU between this host and PEER, to the byte, in both directions:
this host probes PEER's agent, then the agent probes back. Probes carry DF and
ignore the kernel's cached path MTU; ICMP "fragmentation needed" / "packet too big"
is read from the socket error queue; each failed size is retried.

Verdicts: ok, local-limit (the sending interface is the limit), icmp (a hop
reported its MTU), blackhole (larger packets vanish silently), unreachable.

Without an agent on PEER, --icmp probes with ICMP echo (forward direction only;
the echo reply is as large as the request). Exit 1 when a direction has a problem
verdict (local-limit, icmp, blackhole), 2 when --expect is not met, 3 when the peer
is unreachable.

--storage proves Oracle Direct NFS paths instead of one peer: every local: ->
path: pair of the oranfstab files Direct NFS reads here (each Oracle home's
dbs/oranfstab from oratab and --oracle-home, then /etc/oranfstab), or of
--oranfstab FILE, probed with ICMP echo from the local address (with
dontroute: out of that address's interface, as dNFS sends), one table per server.`

func newPMTUCmd(e *env) *cobra.Command {
	var f pmtuFlags
	c := &cobra.Command{
		Use:   "pmtu PEER[:PORT]",
		Short: "Prove the path MTU to a peer, both directions (blackhole, ICMP or local limit)",
		Long:  pmtuLong,
		Example: `  interlink pmtu 198.18.10.2 --token-file /etc/interlink/token --expect 9000
  interlink pmtu --icmp filer1-stor --expect 9000
  interlink pmtu --storage --expect 9000
  interlink pmtu --storage --oranfstab /u01/app/oracle/product/19.0.0/dbhome_1/dbs/oranfstab`,
		Args: func(cmd *cobra.Command, args []string) error {
			if f.storage.on {
				if len(args) > 0 {
					return usageError("pmtu: --storage takes no PEER (the paths come from oranfstab)")
				}
				return nil
			}
			return exactArgs(1, "a PEER (agent address)")(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error { return runPMTU(e, &f, args) },
	}
	f.bind(c)
	return c
}

func (f *pmtuFlags) bind(c *cobra.Command) {
	f.probe.add(c)
	c.Flags().StringVar(&f.target, "target", "", "address to probe on the peer (default: PEER's address; e.g. its interconnect address)")
	c.Flags().StringVar(&f.source, "source", "", "local address to probe from (default: chosen by routing)")
	c.Flags().BoolVar(&f.icmp, "icmp", false, "probe with ICMP echo, no agent needed (forward direction only)")
	c.Flags().BoolVar(&f.storage.on, "storage", false, "prove every Direct NFS path (local: -> path:) of oranfstab instead of one PEER")
	c.Flags().StringArrayVar(&f.storage.oranfstabs, "oranfstab", nil, "with --storage: the oranfstab to prove (default: those of oratab's homes and /etc/oranfstab); repeatable")
	c.Flags().StringArrayVar(&f.storage.oracleHomes, "oracle-home", nil, "with --storage: an Oracle home whose dbs/oranfstab to prove besides oratab's; repeatable")
}

// runPMTU checks the flags, proves the path to the peer (or the Direct
// NFS paths of --storage), prints the report and maps it to the exit.
func runPMTU(e *env, f *pmtuFlags, args []string) error {
	sf := f.storage
	if !sf.on && (len(sf.oranfstabs) > 0 || len(sf.oracleHomes) > 0) {
		return usageError("pmtu: --oranfstab and --oracle-home go with --storage")
	}
	if sf.on && (f.icmp || f.target != "" || f.source != "" || f.probe.tokenFile != "") {
		return usageError("pmtu: --storage probes with ICMP from each oranfstab local: address; --icmp, --target, --source and --token-file do not apply")
	}
	if f.icmp && f.probe.tokenFile != "" {
		// As with --storage: the token was read and ignored, so a
		// reader of the command line took the probes for the agent's.
		return usageError("pmtu: --token-file does nothing with --icmp (ICMP echo needs no agent)")
	}
	tok, opt, err := f.probe.parse("pmtu", !f.icmp && !sf.on)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(e.ctx, f.probe.timeout)
	defer cancel()
	if sf.on {
		return runPMTUStorage(ctx, e, sf, opt, f.probe.asJSON)
	}
	// A malformed PEER is bad input in both modes, not a host name to
	// look up ("[::1" was probed as ::1 with --icmp).
	if _, err := agent.HostPort(args[0]); err != nil {
		return usageError("pmtu: PEER %q: %v", termtext.Clean(args[0]), err)
	}
	if err := fence(e, "pmtu", args[0], f.target); err != nil {
		return err
	}
	rep := &PMTUReport{Schema: pmtu.ReportSchema, Peer: args[0], Expect: opt.Expect, Method: "udp"}
	results, err := f.prove(ctx, rep, tok, opt)
	if len(results) > 0 {
		rep.Target = results[0].To
	}
	if err != nil {
		rep.Error = err.Error()
		if len(results) == 0 {
			if errors.Is(err, ErrUsage) {
				return err // already "pmtu: ..."
			}
			// Named like every other pmtu error ("interlink: agent ..."
			// did not say which command failed).
			return fmt.Errorf("pmtu: %w", err)
		}
	}
	rep.Evaluate(results)
	code := statusCode(rep.Status)
	if f.probe.asJSON {
		if jerr := report.JSON(e.stdout, rep); jerr != nil {
			return jerr
		}
	} else {
		if werr := rep.WriteText(e.stdout); werr != nil {
			return fmt.Errorf("pmtu: write report: %w", werr)
		}
	}
	if herr := f.probe.out.emit(e, "pmtu", "interlink pmtu "+rep.Peer, rep); herr != nil {
		return herr
	}
	if err != nil {
		return err
	}
	return withCode(code)
}

// prove parses --target and --source and probes rep.Peer: with ICMP echo
// (--icmp), or through its agent, both directions. It sets rep's method
// and, through an agent, the peer's address as dialled.
func (f *pmtuFlags) prove(ctx context.Context, rep *PMTUReport, tok []byte, opt agent.ProbeOptions) ([]pmtu.Result, error) {
	var tgt, src netip.Addr
	var err error
	if f.target != "" {
		if tgt, err = netip.ParseAddr(f.target); err != nil {
			return nil, usageError("pmtu: --target %q: not an IP address", f.target)
		}
	}
	if f.source != "" {
		if src, err = netip.ParseAddr(f.source); err != nil {
			return nil, usageError("pmtu: --source %q: not an IP address", f.source)
		}
	}
	if f.icmp {
		rep.Method = "icmp"
		if !tgt.IsValid() {
			if tgt, err = resolveHost(ctx, rep.Peer); err != nil {
				return nil, usageError("pmtu: %v", err)
			}
		}
		return icmpPMTU(ctx, src, tgt, opt)
	}
	c, err := agent.Dial(ctx, rep.Peer, tok, agent.DialOptions{Software: "interlink " + buildVersion().Version, Local: src})
	if err != nil {
		return nil, err // refused (wrong token, version): one line, exit 3, no probe sent
	}
	defer c.Close()
	rep.Peer = c.Addr
	return c.PMTU(ctx, agent.PMTUOptions{Target: tgt, Source: src, Probe: opt})
}

func icmpPMTU(ctx context.Context, src, dst netip.Addr, opt agent.ProbeOptions) ([]pmtu.Result, error) {
	p, err := pmtu.NewICMPProber(src, dst)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	r, err := pmtu.Run(ctx, p, pmtu.Options{Tries: opt.Tries, Max: opt.Max, Expect: opt.Expect})
	r.Direction = pmtu.Forward
	return []pmtu.Result{r}, err
}

func resolveHost(ctx context.Context, hostport string) (netip.Addr, error) {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if a, err := netip.ParseAddr(host); err == nil {
		return a, nil
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return netip.Addr{}, fmt.Errorf("cannot resolve %q: %v", host, err)
	}
	return addrs[0].Unmap(), nil
}

// statusCode maps a judged status to the exit code (README: Conventions).
func statusCode(status string) int {
	switch status {
	case pmtu.StatusWarning:
		return ExitWarning
	case pmtu.StatusCritical:
		return ExitCritical
	case pmtu.StatusUnknown:
		return ExitUnknown
	}
	return ExitOK
}
