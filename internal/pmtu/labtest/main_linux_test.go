//go:build linux

// Package labtest runs interlink agent, pmtu and mesh end to end in
// network-namespace labs: the interlink binary is built once, agents run as
// real processes inside lab nodes, and clients run as processes in nodes
// (or in-process inside Node.Do for the security probes).
package labtest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/lab"
	"github.com/interlink/interlink/internal/labuptest"
)

// Every lab these tests create is named t4-...
const prefix = "t4"

var (
	bin   string // the interlink binary under test
	token = "t4-lab-token-0123456789abcdef"
)

func TestMain(m *testing.M) {
	labuptest.Main(m, "pmtu lab tests", &bin, "t4-interlink-")
}

// tokenFile writes a token file with mode 600 and returns its path.
func tokenFile(t testing.TB, name, tok string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(tok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// up brings up a topology (built-in name or YAML) as lab t4-<suffix> and
// removes it when the test ends, pass or fail.
func up(t testing.TB, builtin, yaml, suffix string) *lab.Lab {
	t.Helper()
	var topo *lab.Topology
	var err error
	if yaml != "" {
		topo, err = lab.Parse(suffix+".yaml", []byte(yaml))
	} else {
		topo, err = lab.Load(builtin)
	}
	if err != nil {
		t.Fatal(err)
	}
	topo.Name = prefix + "-" + suffix
	return labuptest.Up(t, topo)
}

func node(t testing.TB, l *lab.Lab, name string) *lab.Node { return labuptest.Node(t, l, name) }

type syncBuf = labuptest.Log

// agent runs `interlink agent` in node n and returns its log. It is stopped
// by PID when the test ends.
func agent(t testing.TB, n *lab.Node, listen, tokFile string) *syncBuf {
	t.Helper()
	log, _ := labuptest.Daemon(t, n, exec.Command(bin, "agent", "--listen", listen, "--token-file", tokFile), "agent", "listening on")
	return log
}

// waitLog waits up to 5 s for the agent log to contain s (the agent logs
// a session when it ends, which may be after the client has exited).
func waitLog(log *syncBuf, s string) bool {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if strings.Contains(log.String(), s) {
			return true
		}
	}
	return false
}

// run runs interlink with args as a process in node n and returns its
// stdout, stderr and exit code.
func run(t *testing.T, n *lab.Node, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	return labuptest.Exec(t, n, cmd, 2*time.Minute)
}

// pmtuJSON is the part of interlink.pmtu/v1 the tests check.
type pmtuJSON struct {
	Schema     string `json:"schema"`
	Status     string `json:"status"`
	Directions []struct {
		Direction      string `json:"direction"`
		From, To       string
		Verdict        string `json:"verdict"`
		PathMTU        int    `json:"path_mtu"`
		PayloadPassed  int    `json:"payload_passed"`
		SmallestFailed int    `json:"smallest_failed"`
		LocalMTU       int    `json:"local_mtu"`
		PeerMTU        int    `json:"peer_mtu"`
		ICMPFrom       string `json:"icmp_from"`
		ICMPMTU        int    `json:"icmp_mtu"`
		ElapsedNS      int64  `json:"elapsed_ns"`
		MeetsExpect    *bool  `json:"meets_expect"`
	} `json:"directions"`
}

func decodePMTU(t *testing.T, out string) pmtuJSON {
	t.Helper()
	var r pmtuJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("pmtu --json output: %v\n%s", err, out)
	}
	if r.Schema != "interlink.pmtu/v1" {
		t.Fatalf("schema %q", r.Schema)
	}
	return r
}

// want is the expected outcome of one direction.
type want struct {
	verdict string
	mtu     int
	failed  int // smallest failed size; 0: none
}

func checkDirections(t *testing.T, r pmtuJSON, wants ...want) {
	t.Helper()
	if len(r.Directions) != len(wants) {
		t.Fatalf("%d directions, want %d: %+v", len(r.Directions), len(wants), r.Directions)
	}
	for i, w := range wants {
		d := r.Directions[i]
		if d.Verdict != w.verdict || d.PathMTU != w.mtu || d.SmallestFailed != w.failed {
			t.Errorf("%s %s -> %s: %s path MTU %d (smallest failed %d), want %s %d (smallest failed %d)",
				d.Direction, d.From, d.To, d.Verdict, d.PathMTU, d.SmallestFailed, w.verdict, w.mtu, w.failed)
		}
	}
}
