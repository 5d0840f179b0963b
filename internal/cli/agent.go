package cli

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/interlink/interlink/internal/agent"
	"github.com/interlink/interlink/internal/units"
	"github.com/interlink/interlink/internal/wire"
)

func init() { commands = append(commands, newAgentCmd) }

// agentFlags are agent's flags.
type agentFlags struct {
	listen, tokenFile, rate string
	maxSessions             int
	maxDuration             time.Duration
	hsDeadline              time.Duration
	pendingPer, pending     int
	metricsAddr             string
	checkInterval           time.Duration
	allowCPULatency         bool
}

const agentLong = `Run the responder each node needs for 'interlink pmtu', 'interlink mesh' and
'interlink bench'. Clients must prove the shared token (HMAC challenge, the token
never crosses the wire); data endpoints answer only traffic tagged for a live
session and never send more than they received. One log line per session on stderr.

--allow-cpu-latency lets a client's 'bench --cpu-latency US' hold a PM QoS CPU latency
request on this host (/dev/cpu_dma_latency) for its session only: it ends with the
session, when the agent stops, and when the agent dies. Without it such a request is
refused and the bench goes on without it, saying so.

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
between nodes come from 'interlink watch'.`

func newAgentCmd(e *env) *cobra.Command {
	var f agentFlags
	c := &cobra.Command{
		Use:   "agent --listen ADDR[:PORT] --token-file FILE",
		Short: "Run the authenticated responder for pmtu, mesh and bench",
		Long:  agentLong,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runAgent(e, &f, cmd.Flags().Changed("check-interval"))
		},
	}
	f.bind(c.Flags())
	return c
}

func (a *agentFlags) bind(f *pflag.FlagSet) {
	f.StringVar(&a.listen, "listen", "", "address to listen on, ADDR[:PORT] (default port 7471)")
	f.StringVar(&a.tokenFile, "token-file", "", "file holding the shared token (mode 600, at least 16 bytes)")
	f.IntVar(&a.maxSessions, "max-sessions", agent.DefaultLimits.MaxSessions, "concurrent sessions")
	f.DurationVar(&a.maxDuration, "max-duration", agent.DefaultLimits.MaxDuration, "longest session")
	f.DurationVar(&a.hsDeadline, "handshake-timeout", agent.DefaultHandshakeDeadline, "time an unauthenticated peer has to finish the handshake")
	f.IntVar(&a.pendingPer, "max-pending-per-source", agent.DefaultMaxPendingPerSource, "handshakes in progress per source address (IPv6: per /64)")
	f.IntVar(&a.pending, "max-pending", agent.DefaultMaxPending, "handshakes in progress in all")
	f.StringVar(&a.rate, "max-rate", "auto", "most the agent sends per session (auto: an abuse guard above the interface's speed)")
	f.StringVar(&a.metricsAddr, "metrics", "", "serve this node's Prometheus metrics (IP reassembly counters, check findings, sessions) on HOST:PORT, e.g. :9472")
	f.BoolVar(&a.allowCPULatency, "allow-cpu-latency", false, "let 'bench --cpu-latency' hold a PM QoS CPU latency request on this host for a session's length (/dev/cpu_dma_latency; released when the session ends or the agent dies)")
	f.DurationVar(&a.checkInterval, "check-interval", 5*time.Minute, "with --metrics: re-run the check audit this often (0: no audit)")
}

// limits checks the token file, the send rate (its bits per second, 0
// for auto, and how the start line names it) and the session limits.
func (a *agentFlags) limits() (tok []byte, rateBits int64, rateText string, err error) {
	if a.listen == "" {
		return nil, 0, "", usageError("agent: --listen ADDR[:PORT] is required (e.g. --listen 0.0.0.0 or the interconnect address)")
	}
	if a.tokenFile == "" {
		return nil, 0, "", usageError("agent: --token-file FILE is required")
	}
	tok, err = agent.ReadToken(a.tokenFile)
	if err != nil {
		return nil, 0, "", usageError("agent: %v", trimToken(err))
	}
	// rateBits 0: auto, per session (agent.AutoRate)
	rateText = fmt.Sprintf("auto (%d x the speed of the interface a session arrives on, at least %s)",
		agent.RateSpeedMultiple, units.FormatRate(agent.RateFloorBitsPerSec))
	if a.rate != "auto" {
		rateBits, err = units.ParseRate(a.rate)
		if err != nil || rateBits <= 0 {
			return nil, 0, "", usageError("agent: --max-rate %q: want auto or a rate such as 10gbit or 200M", a.rate)
		}
		rateText = units.FormatRate(float64(rateBits))
	}
	if a.maxSessions < 1 {
		return nil, 0, "", usageError("agent: --max-sessions must be at least 1")
	}
	if a.maxDuration < time.Second {
		return nil, 0, "", usageError("agent: --max-duration must be at least 1s")
	}
	if a.hsDeadline < 100*time.Millisecond || a.hsDeadline > time.Minute {
		return nil, 0, "", usageError("agent: --handshake-timeout %s: want 100ms to 1m", a.hsDeadline)
	}
	if a.pendingPer < 1 || a.pending < a.pendingPer || a.pending > 65536 {
		return nil, 0, "", usageError("agent: --max-pending-per-source %d and --max-pending %d: want 1 <= per source <= in all <= 65536", a.pendingPer, a.pending)
	}
	return tok, rateBits, rateText, nil
}

// runAgent checks the flags, then serves until the context ends, with
// the metrics endpoint when --metrics asks for it.
func runAgent(e *env, f *agentFlags, intervalSet bool) error {
	tok, rateBits, rateText, err := f.limits()
	if err != nil {
		return err
	}
	am, err := checkAgentMetrics(f.metricsAddr, f.checkInterval, intervalSet)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	if am != nil {
		defer am.ln.Close()
	}
	addr, err := agent.HostPort(f.listen)
	if err != nil {
		return usageError("agent: --listen %q: %v", f.listen, err)
	}
	srv, err := agent.NewServer(agent.Config{
		Token:    tok,
		Software: "interlink " + buildVersion().Version,
		Log:      e.stderr,
		Limits: wire.Limits{MaxSessions: f.maxSessions, MaxDuration: f.maxDuration,
			MaxRateBitsPerSec: float64(rateBits), MaxEndpoints: agent.DefaultLimits.MaxEndpoints},
		HandshakeDeadline: f.hsDeadline, MaxPendingPerSource: f.pendingPer, MaxPending: f.pending,
		AllowCPULatency: f.allowCPULatency,
	})
	if err != nil {
		return err
	}
	return srv.ListenAndServe(ctx, addr, func(a net.Addr) {
		fmt.Fprintf(e.stderr, "interlink agent listening on %s (protocol %d; limits: %d sessions, %s each, %s per session)\n",
			a, wire.Version, f.maxSessions, f.maxDuration, rateText)
		if am != nil {
			am.serve(ctx, srv, e.stderr)
			fmt.Fprintln(e.stderr, am)
		}
	})
}

// trimToken drops the sentinel's text from a token error: the line already
// says what is wrong. It is not always last (a fix follows it: "...: bad
// token file; run: chmod 600 FILE"); cutting it off the end left "; r".
func trimToken(err error) string {
	return strings.Replace(err.Error(), ": "+agent.ErrToken.Error(), "", 1)
}
