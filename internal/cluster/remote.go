package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/netip"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/interlink/interlink/internal/atomicfile"
	"github.com/interlink/interlink/internal/rules"
	"github.com/interlink/interlink/internal/termtext"
)

// platforms maps `uname -sm` to GOOS/GOARCH for the systems interlink
// builds for.
var platforms = map[string]string{
	"Linux x86_64": "linux/amd64", "Linux aarch64": "linux/arm64", "Linux ppc64le": "linux/ppc64le",
	"Linux s390x": "linux/s390x", "Linux i686": "linux/386", "SunOS i86pc": "solaris/amd64",
	"AIX": "aix/ppc64",
}

var safePath = regexp.MustCompile(`^/[A-Za-z0-9._/-]+$`)

// prepare probes the node, makes the run's temp dir, copies the binary
// when the node has no identical one, and writes the run's token (0600).
func (n *node) prepare(ctx context.Context, bin []byte, binSum string, token []byte) error {
	out, err := n.must(ctx, "probe", `uname -sm; p=$(command -v interlink 2>/dev/null) && sha256sum "$p" 2>/dev/null; true`, nil)
	if err != nil {
		return err
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	n.res.Platform = termtext.Clean(lines[0])
	uname := n.res.Platform
	if strings.HasPrefix(uname, "AIX") {
		uname = "AIX"
	}
	want := runtime.GOOS + "/" + runtime.GOARCH
	if got, ok := platforms[uname]; !ok || got != want {
		return &reachError{CausePlatform, fmt.Errorf("node runs %s, this interlink is %s: run interlink cluster from a host of the same platform", n.res.Platform, want)}
	}
	if len(lines) > 1 {
		sum, path, _ := strings.Cut(lines[1], "  ")
		if sum == binSum && safePath.MatchString(path) {
			n.bin = path
			n.res.Binary = "present"
		}
	}
	out, err = n.must(ctx, "make temp dir", `umask 077 && mktemp -d "${TMPDIR:-/tmp}/interlink-cluster.XXXXXXXX"`, nil)
	if err != nil {
		return err
	}
	dir := strings.TrimSpace(string(out))
	if !safePath.MatchString(dir) {
		return &remoteError{step: "make temp dir", msg: fmt.Sprintf("mktemp printed %q, not a plain path", termtext.Clean(dir))}
	}
	n.dir, n.res.TempDir = dir, dir
	if n.bin == "" {
		p := dir + "/interlink"
		out, err := n.must(ctx, "copy binary", "cat > "+shq(p)+" && chmod 700 "+shq(p)+" && sha256sum "+shq(p), bin)
		if err != nil {
			return err
		}
		if got, _, _ := strings.Cut(string(out), " "); got != binSum {
			return &remoteError{step: "copy binary", msg: fmt.Sprintf("sha256 on the node is %.16s..., sent %.16s...", termtext.Clean(got), binSum)}
		}
		n.bin, n.res.Binary = p, "copied"
	}
	n.res.BinaryPath = n.bin
	_, err = n.must(ctx, "write token", "umask 077 && cat > "+shq(dir+"/token"), token)
	return err
}

// agentStart bounds the wait for a started agent to listen (a loaded node
// takes seconds to start a 30 MB binary).
const agentStart = 30 * time.Second

// The agent's PID file and stop mark in the run's temp dir. The process
// that becomes the agent writes its PID first and execs the agent only if
// the mark is absent; the cleanup makes the mark first and reads the PID
// after. Whatever the order on the node, the cleanup then knows the PID
// of an agent that starts, even when the run ended before the start
// command's answer (the PID) came back.
const (
	agentPIDFile  = "agent.pid"
	agentStopMark = "agent.stop"
)

// termGrace is how long the cleanup waits for the agent to end on TERM
// before it sends KILL.
const termGrace = 3 * time.Second

// startAgent starts `interlink agent` in the background, wrapped in
// timeout(1) when the node has it so that an agent outlives a killed run
// by at most lifetime, and waits until it listens.
func (n *node) startAgent(ctx context.Context, listen string, lifetime time.Duration) error {
	d := n.dir
	out, err := n.must(ctx, "start agent", n.startSh(listen, lifetime), nil)
	if err != nil {
		return err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil || pid <= 1 {
		return &remoteError{step: "start agent", msg: fmt.Sprintf("no PID: %q", termtext.Clean(string(out)))}
	}
	n.pid, n.res.AgentPID = pid, pid
	wait := fmt.Sprintf(aliveSh+`end=$(( $(date +%%s) + %[3]d ))
while [ "$(date +%%s)" -le $end ]; do
grep -q 'listening on' %[1]s && exit 0
alive %[2]d || { tail -n 3 %[1]s >&2; exit 1; }
sleep 0.1; done; tail -n 3 %[1]s >&2; exit 2`, shq(d+"/agent.log"), pid, int(agentStart.Seconds()))
	_, stderr, code, err := n.run(ctx, wait, nil)
	switch {
	case err != nil:
		return fmt.Errorf("start agent: %w", err)
	case code == 1:
		n.pid = 0 // it is gone
		return &remoteError{step: "start agent", msg: "agent exited: " + lastLine(stderr)}
	case code != 0:
		return &remoteError{step: "start agent", msg: fmt.Sprintf("agent not listening after %s: %s", agentStart, lastLine(stderr))}
	}
	return nil
}

// startSh is the agent's start command: it prints the PID of the process
// that becomes the agent (see agentPIDFile).
func (n *node) startSh(listen string, lifetime time.Duration) string {
	d := n.dir
	return fmt.Sprintf(`T=; command -v timeout >/dev/null 2>&1 && T="timeout %d"
sh -c 'echo $$ >"$1" && [ ! -e "$2" ] && shift 2 && exec "$@"' sh %s %s $T %s agent --listen %s --token-file %s >%s 2>&1 </dev/null &
echo $!`, int(lifetime.Seconds()), shq(d+"/"+agentPIDFile), shq(d+"/"+agentStopMark),
		shq(n.bin), shq(listen), shq(d+"/token"), shq(d+"/agent.log"))
}

// check runs `interlink check --json` (with --collect into the temp dir
// when bundle is set, with GRID_HOME set when gridHome is: the grid home
// is at the same path on every node of a cluster) and keeps its result.
func (n *node) check(ctx context.Context, bundle bool, gridHome string) error {
	cmd := shq(n.bin) + " check --json"
	if gridHome != "" {
		cmd = "GRID_HOME=" + shq(gridHome) + " " + cmd
	}
	if bundle {
		cmd += " --collect " + shq(n.dir+"/check.tar.gz")
	}
	out, stderr, code, err := n.run(ctx, cmd, nil)
	if err != nil {
		return fmt.Errorf("check: %w", err)
	}
	if code < 0 || code > 2 {
		return &remoteError{"check", code, lastLine(stderr)}
	}
	var r rules.Result
	if err := json.Unmarshal(out, &r); err != nil || r.Schema != "interlink.check/v1" {
		return &remoteError{step: "check", msg: fmt.Sprintf("exit %d without an interlink.check/v1 document: %s", code, lastLine(stderr))}
	}
	n.res.Check = &r
	return nil
}

// fetchBundle copies the node's check bundle to dir/NAME.tar.gz.
func (n *node) fetchBundle(ctx context.Context, dir string) error {
	out, err := n.mustRun(ctx, "fetch bundle", "cat "+shq(n.dir+"/check.tar.gz"), newTransfer("fetch bundle", nil, n.link))
	if err != nil {
		return err
	}
	name := filepath.Join(dir, fileName(n.res.Name)+".tar.gz")
	// 0644 as check --collect writes it (a temporary file's 0600 stayed).
	if err := atomicfile.WriteFile(name, out, atomicfile.Options{Mode: 0o644}); err != nil {
		return fmt.Errorf("fetch bundle: %w", err)
	}
	n.res.Bundle = name
	return nil
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]`)

func fileName(s string) string { return unsafeName.ReplaceAllString(s, "_") }

// aliveSh defines alive PID: the process exists and is not a zombie (an
// orphaned agent is reaped by the node's init, which may take its time;
// kill -0 alone counts a zombie as running).
const aliveSh = `alive() { kill -0 "$1" 2>/dev/null || return 1; s=$(ps -o stat= -p "$1" 2>/dev/null) || return 0; case $s in *Z*) return 1;; esac; return 0; }
`

// upSh defines up ID, where ID is a PID or -PGID (as kill takes it): a
// process that is not a zombie runs with that PID, or in that process
// group. It reads POSIX ps -A -o, which busybox's ps (no -p) has too;
// without ps it counts what kill -0 finds, zombies too.
const upSh = `up() { kill -0 $1 2>/dev/null || return 1; s=$(ps -A -o pid= -o pgid= -o stat= 2>/dev/null) || return 0
echo "$s" | { while read a b c; do case $c in *Z*) continue; esac; [ "$a" = "$1" ] || [ "-$b" = "$1" ] && exit 0; done; exit 1; }; }
`

// cleanup stops the agent (see cleanupSh), removes the temp dir, and
// checks that both are gone.
//
// A link that was cut (a stalled transfer, the run's end) is replaced
// first: a new connection, if the node answers in time, removes what the
// old one copied, as short commands pass where a stalled copy did not.
func (n *node) cleanup(ctx context.Context) {
	if n.link == nil || (n.dir == "" && n.pid == 0) {
		return
	}
	if n.link.cutBy() != nil || n.link.lostBy() != nil {
		l, _, err := n.dial(ctx)
		if err != nil {
			n.res.Cleanup.Error = "reconnect to clean up: " + err.Error()
			return
		}
		n.link.Close()
		n.link, n.res.Cleanup.Reconnected = l, true
	}
	out, err := n.must(ctx, "clean up", n.cleanupSh(), nil)
	n.res.Cleanup.Done = err == nil
	if err != nil {
		n.res.Cleanup.Error = err.Error()
		return
	}
	// The PID it stopped, "-PID" when it stopped the PID's process group.
	s := strings.TrimSpace(string(out))
	if pid, err := strconv.Atoi(strings.TrimPrefix(s, "-")); err == nil && pid > 1 {
		n.res.Cleanup.Stopped = fmt.Sprintf("agent PID %d", pid)
		if strings.HasPrefix(s, "-") {
			n.res.Cleanup.Stopped += " and its process group"
		}
		if n.res.AgentPID == 0 {
			n.res.AgentPID = pid
		}
	}
	n.res.Cleanup.Removed = n.dir
	n.pid, n.dir = 0, ""
}

// cleanupSh is the cleanup's command: it stops the agent (TERM, then
// KILL after termGrace, then waits at most 2 s for it to be gone), prints what
// it stopped when something ran (the PID, or -PID for the PID's process
// group), and removes the temp dir. The PID is n.pid, or, when the
// start's answer never came back (the run ended while the agent was
// starting), the one the agent's PID file holds, read after the stop mark
// is made (see agentPIDFile).
//
// Under GNU timeout(1) the PID is timeout's, which leads its own process
// group (setpgid unless --foreground) with the agent, its child, in it:
// KILL is not passed on, so signalling timeout alone left an agent that
// had not ended on TERM running, orphaned, its port held. The cleanup
// therefore signals and waits for the whole group when a process runs in
// the group the PID would lead: the PID leads it, or the PID is gone and
// its group is not (timeout killed, the agent left: a group's ID is the
// PID of the process that made it, and is not given to a new process while
// the group has members). Before KILL it looks again, as a PID read from
// the PID file may be timeout's just before its setpgid. Otherwise (no timeout(1), or busybox's, which
// execs the agent itself) the PID is the agent's and its group the start
// session's, not the run's to kill: it signals the PID alone. Groups are
// signalled as kill -SIG -PGID, the form dash, bash and busybox sh all
// take (dash's kill takes no "--" after -SIG, busybox's none after -s).
//
// The command stays short (TestCleanupCommandFitsOneSegment): where a
// path MTU blackhole stalled the run, it has to pass in one segment.
func (n *node) cleanupSh() string {
	var b strings.Builder
	b.WriteString(upSh)
	if n.dir != "" {
		fmt.Fprintf(&b, "d=%s\n", shq(n.dir))
	}
	if n.pid > 0 {
		fmt.Fprintf(&b, "p=%d\n", n.pid)
	} else {
		b.WriteString(`p=; if [ -d "$d" ]; then mkdir "$d/` + agentStopMark + `" 2>/dev/null; p=$(cat "$d/` + agentPIDFile + `" 2>/dev/null); fi
case $p in ""|*[!0-9]*) p=;; esac
`)
	}
	grace := n.grace
	if grace <= 0 {
		grace = termGrace
	}
	k := int(grace / (100 * time.Millisecond)) // in the loop's 0.1 s steps
	fmt.Fprintf(&b, "k=%d\n", k)
	b.WriteString(`if [ -n "$p" ] && [ "$p" -gt 1 ]; then t=$p m="PID $p"; g() { t=-$p m="process group $p"; }
up -$p && g
if up $t; then kill -TERM $t 2>/dev/null; i=0
while up $t && [ $i -lt $((k+20)) ]; do [ $i = $k ] && { up -$p && g; kill -KILL $t 2>/dev/null; }; sleep 0.1; i=$((i+1)); done
if up $t || up -$p; then echo "agent $m still running after KILL" >&2; exit 1; fi
echo $t; fi; fi
`)
	if n.dir != "" {
		b.WriteString(`rm -rf "$d"; if [ -e "$d" ]; then echo "$d not removed" >&2; exit 1; fi
`)
	}
	return b.String()
}

// agentAddr is the address the node's agent is reached at: the address
// SSH reached, on the agent port.
func (n *node) agentAddr(port int) (netip.AddrPort, error) {
	a, err := remoteIP(n.link)
	if err != nil {
		return netip.AddrPort{}, err
	}
	return netip.AddrPortFrom(a, uint16(port)), nil
}

// sha256Hex is the hex SHA-256 of b.
func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
