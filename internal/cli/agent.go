package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/spf13/cobra"

	"github.com/interlink/interlink/internal/agent"
	"github.com/interlink/interlink/internal/units"
	"github.com/interlink/interlink/internal/wire"
)

func init() { commands = append(commands, newAgentCmd) }

func newAgentCmd(e *env) *cobra.Command {
	var (
		listen, tokenFile, rate string
		maxSessions             int
		maxDuration             time.Duration
		hsDeadline              time.Duration
		pendingPer, pending     int
		metricsAddr             string
		checkInterval           time.Duration
	)
	c := &cobra.Command{
		Use:   "agent --listen ADDR[:PORT] --token-file FILE",
		Short: "Run the authenticated responder for pmtu, mesh and bench",
		Long: `Run the responder each node needs for 'interlink pmtu', 'interlink mesh' and
'interlink bench'. Clients must prove the shared token (HMAC challenge, the token
never crosses the wire); data endpoints answer only traffic tagged for a live
session and never send more than they received. One log line per session on stderr.

Unauthenticated peers get 3s to finish the handshake (--handshake-timeout), at
most 8 pending handshakes per source address (--max-pending-per-source) and 128 in
all (--max-pending); over a cap they are refused at once with the reason. Lines about them are rate-limited, with a summary by source and reason.

The token file must not be readable by others (chmod 600) and hold at least 16
bytes, e.g.: head -c 32 /dev/urandom | base64 > /etc/interlink/token

--metrics ADDR (off by default) serves this node's own metrics for Prometheus, read-only,
on http://ADDR/metrics: the IP fragmentation and reassembly counters of /proc/net/snmp
(interlink_ip_reassembly_failures_total, ...), the findings of the audit
'interlink check' runs, re-run every --check-interval (interlink_check_findings{rule,severity},
interlink_check_last_run_timestamp_seconds) and the agent's sessions. Path metrics
between nodes come from 'interlink watch'.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if listen == "" {
				return usageError("agent: --listen ADDR[:PORT] is required (e.g. --listen 0.0.0.0 or the interconnect address)")
			}
			if tokenFile == "" {
				return usageError("agent: --token-file FILE is required")
			}
			tok, err := agent.ReadToken(tokenFile)
			if err != nil {
				return usageError("agent: %v", trimToken(err))
			}
			var rateBits int64 // 0: auto, per session (agent.AutoRate)
			rateText := fmt.Sprintf("auto (%d x the speed of the interface a session arrives on, at least %s)",
				agent.RateSpeedMultiple, units.FormatRate(agent.RateFloorBitsPerSec))
			if rate != "auto" {
				rateBits, err = units.ParseRate(rate)
				if err != nil || rateBits <= 0 {
					return usageError("agent: --max-rate %q: want auto or a rate such as 10gbit or 200M", rate)
				}
				rateText = units.FormatRate(float64(rateBits))
			}
			if maxSessions < 1 {
				return usageError("agent: --max-sessions must be at least 1")
			}
			if maxDuration < time.Second {
				return usageError("agent: --max-duration must be at least 1s")
			}
			if hsDeadline < 100*time.Millisecond || hsDeadline > time.Minute {
				return usageError("agent: --handshake-timeout %s: want 100ms to 1m", hsDeadline)
			}
			if pendingPer < 1 || pending < pendingPer || pending > 65536 {
				return usageError("agent: --max-pending-per-source %d and --max-pending %d: want 1 <= per source <= in all <= 65536", pendingPer, pending)
			}
			am, err := checkAgentMetrics(metricsAddr, checkInterval, cmd.Flags().Changed("check-interval"))
			if err != nil {
				return err
			}
			ctx, cancel := context.WithCancel(e.ctx)
			defer cancel()
			if am != nil {
				defer am.ln.Close()
			}
			addr, err := agent.HostPort(listen)
			if err != nil {
				return usageError("agent: --listen %q: %v", listen, err)
			}
			srv, err := agent.NewServer(agent.Config{
				Token:    tok,
				Software: "interlink " + buildVersion().Version,
				Log:      e.stderr,
				Limits: wire.Limits{MaxSessions: maxSessions, MaxDuration: maxDuration,
					MaxRateBitsPerSec: float64(rateBits), MaxEndpoints: agent.DefaultLimits.MaxEndpoints},
				HandshakeDeadline: hsDeadline, MaxPendingPerSource: pendingPer, MaxPending: pending,
			})
			if err != nil {
				return err
			}
			return srv.ListenAndServe(ctx, addr, func(a net.Addr) {
				fmt.Fprintf(e.stderr, "interlink agent listening on %s (protocol %d; limits: %d sessions, %s each, %s per session)\n",
					a, wire.Version, maxSessions, maxDuration, rateText)
				if am != nil {
					am.serve(ctx, srv, e.stderr)
					fmt.Fprintln(e.stderr, am)
				}
			})
		},
	}
	f := c.Flags()
	f.StringVar(&listen, "listen", "", "address to listen on, ADDR[:PORT] (default port 7471)")
	f.StringVar(&tokenFile, "token-file", "", "file holding the shared token (mode 600, at least 16 bytes)")
	f.IntVar(&maxSessions, "max-sessions", agent.DefaultLimits.MaxSessions, "concurrent sessions")
	f.DurationVar(&maxDuration, "max-duration", agent.DefaultLimits.MaxDuration, "longest session")
	f.DurationVar(&hsDeadline, "handshake-timeout", agent.DefaultHandshakeDeadline, "time an unauthenticated peer has to finish the handshake")
	f.IntVar(&pendingPer, "max-pending-per-source", agent.DefaultMaxPendingPerSource, "handshakes in progress per source address (IPv6: per /64)")
	f.IntVar(&pending, "max-pending", agent.DefaultMaxPending, "handshakes in progress in all")
	f.StringVar(&rate, "max-rate", "auto", "most the agent sends per session (auto: an abuse guard above the interface's speed)")
	f.StringVar(&metricsAddr, "metrics", "", "serve this node's Prometheus metrics (IP reassembly counters, check findings, sessions) on HOST:PORT, e.g. :9472")
	f.DurationVar(&checkInterval, "check-interval", 5*time.Minute, "with --metrics: re-run the check audit this often (0: no audit)")
	return c
}

// trimToken drops the sentinel's text from a token error: the line already
// says what is wrong.
func trimToken(err error) string {
	s := err.Error()
	if errors.Is(err, agent.ErrToken) {
		s = s[:len(s)-len(": "+agent.ErrToken.Error())]
	}
	return s
}
