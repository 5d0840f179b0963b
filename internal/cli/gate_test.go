package cli

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/bintest"
	"github.com/interlink/interlink/internal/labuptest"
)

func TestGateBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o600)
		return p
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"gate"}, "gate: --listen ADDR is required (or --config FILE)"},
		{[]string{"gate", "--listen", "127.0.0.1:0"}, "gate: --upstream ADDR is required"},
		// A route without a name or listen is not named "route : ...".
		{[]string{"gate", "--config", write("nolisten.yaml", "routes:\n  - upstream: 127.0.0.1:1\n    rate: 5\n    burst: 1\n")}, "route without a name: listen is required"},
		{[]string{"gate", "--config", write("empty-file.yaml", "")}, "empty file, want routes:"},
		// Zero is not "the default"; an upstream that can never be
		// dialled, or the gate itself, is refused before listening.
		{[]string{"gate", "--listen", "127.0.0.1:0", "--upstream", "127.0.0.1:1", "--rate", "5", "--burst", "1", "--queue", "0"}, "--queue 0: want more than 0"},
		{[]string{"gate", "--listen", "127.0.0.1:0", "--upstream", "127.0.0.1:1", "--rate", "5", "--burst", "1", "--per-source", "0"}, "--per-source 0"},
		{[]string{"gate", "--listen", "127.0.0.1:0", "--upstream", "127.0.0.1:1", "--rate", "5", "--burst", "1", "--dial-timeout", "0s"}, "--dial-timeout 0s"},
		{[]string{"gate", "--listen", "127.0.0.1:0", "--upstream", "127.0.0.1", "--rate", "5", "--burst", "1"}, `upstream "127.0.0.1": want HOST:PORT`},
		{[]string{"gate", "--listen", "127.0.0.1:0", "--upstream", "127.0.0.1:1:x", "--rate", "5", "--burst", "1"}, `upstream "127.0.0.1:1:x"`},
		{[]string{"gate", "--listen", "127.0.0.1:0", "--upstream", "127.0.0.1:0", "--rate", "5", "--burst", "1"}, `port "0": want 1 to 65535`},
		{[]string{"gate", "--listen", "127.0.0.1:17491", "--upstream", "127.0.0.1:17491", "--rate", "5", "--burst", "1"}, "gate's own listen address (a loop)"},
		{[]string{"gate", "--listen", "127.0.0.1:0", "--upstream", "127.0.0.1:1", "--burst", "1"}, "rate 0"},
		{[]string{"gate", "--listen", "127.0.0.1:0", "--upstream", "127.0.0.1:1", "--rate", "5", "--burst", "1", "--queue", "4", "--per-source", "9"}, "per-source queue 9"},
		{[]string{"gate", "--config", filepath.Join(dir, "missing.yaml")}, "no such file"},
		{[]string{"gate", "--config", write("bad.yaml", "routes:\n  - listen: x\n    colour: red\n")}, "field colour not found"},
		{[]string{"gate", "--config", write("empty.yaml", "metrics: 127.0.0.1:0\n")}, "no routes"},
		{[]string{"gate", "--config", write("ok.yaml", "routes: []\n"), "--listen", "127.0.0.1:0"}, "not both"},
		{[]string{"gate", "--listen", "256.0.0.1:1", "--upstream", "127.0.0.1:1", "--rate", "5", "--burst", "1"}, "gate: route 256.0.0.1:1: listen tcp"},
	} {
		o, e, code := run(t, tc.args...)
		if code != ExitUnknown || !strings.Contains(e, tc.want) || strings.Count(e, "\n") != 1 || o != "" {
			t.Errorf("%v: exit %d, stderr %q; want one line with %q", tc.args, code, e, tc.want)
		}
	}
}

// TestGateProcess runs the gate as operators do: a config file, metrics,
// a client through it, a SIGHUP reload, SIGTERM.
func TestGateProcess(t *testing.T) {
	labuptest.SkipShort(t)
	bin, cleanup, err := bintest.Build("interlink-gate-bin-")
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	up, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	go func() {
		for {
			c, err := up.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); io.Copy(c, c) }()
		}
	}()
	cfg := filepath.Join(t.TempDir(), "gate.yaml")
	conf := func(rate string) {
		os.WriteFile(cfg, []byte("metrics: 127.0.0.1:0\nroutes:\n  - name: pg\n    listen: 127.0.0.1:0\n    upstream: "+up.Addr().String()+
			"\n    rate: "+rate+"\n    burst: 5\n    queue_timeout: 30s\n"), 0o600)
	}
	conf("100")
	cmd := exec.Command(bin, "gate", "--config", cfg)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	want := func(re string) []string {
		t.Helper()
		rx := regexp.MustCompile(re)
		deadline := time.After(10 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("gate ended before logging %q", re)
				}
				if m := rx.FindStringSubmatch(l); m != nil {
					return m
				}
			case <-deadline:
				t.Fatalf("no log line matching %q", re)
			}
		}
	}
	metrics := want(`msg=metrics addr=(\S+)`)[1]
	listen := want(`msg=gate route=pg listen=(\S+)`)[1]
	c, err := net.Dial("tcp", listen)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(5 * time.Second))
	c.Write([]byte("hello"))
	buf := make([]byte, 5)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "hello" {
		t.Fatalf("through the gate: %q %v", buf, err)
	}
	c.Close()
	resp, err := http.Get("http://" + metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, m := range []string{`interlink_gate_admitted_total{route="pg"} 1`, `interlink_gate_accepted_total{route="pg"} 1`, "interlink_gate_kernel_listen_overflows_total", "interlink_gate_queue_wait_seconds_bucket"} {
		if !strings.Contains(string(body), m) {
			t.Errorf("metrics lack %q", m)
		}
	}
	conf("7")
	cmd.Process.Signal(syscall.SIGHUP)
	want(`msg="limits reloaded" route=pg rate=7`)
	conf("not-a-number")
	cmd.Process.Signal(syscall.SIGHUP)
	want(`reload refused; the running limits stay`)
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Errorf("gate exit after SIGTERM: %v", err)
	}
}
