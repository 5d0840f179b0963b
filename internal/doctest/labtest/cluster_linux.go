//go:build linux

package labtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A Cluster is the real cluster a page's commands were written for,
// played by a lab: nodes of the page's names and addresses, a /etc of the
// test's own, the files the page's working directory holds. A block
// marked <!-- doctest: lab: on NODE --> runs in lab node NODE, as a
// reader runs it logged in there, and sees that /etc (an overlay on the
// host's /etc whose writes go to the test's directory: /etc/interlink and
// /etc/default written by the page stay the test's, and every node sees
// them, as if copied to each). The zero Cluster is no cluster.
type Cluster struct {
	Lab      string            // the test's name for the lab
	Topology string            // the lab's topology (YAML), its nodes named and addressed as on the page
	Files    map[string]string // files of the page's working directory (an inventory, a nodes file), by name
	// Token: /etc/interlink/token exists before the first block (the
	// page assumes it was made as the README's table says).
	Token bool
	// Agents are the nodes that run 'interlink agent --token-file
	// /etc/interlink/token' as the packaged unit does, started before the
	// first "on NODE" block that does not start an agent itself, once the
	// token exists.
	Agents []string
	// Setup are commands run on the host before the first block, in the
	// page's lab names, for what the page assumes done before it (the lab
	// demo kept up); each must exit 0.
	Setup []string
	// SSH, when set, runs sshd on the nodes for the page's account.
	SSH *SSH
}

// onRE reads a lab marker's argument: "on NODE", "stopped after 2s",
// or both ("on rac1, stopped after 2s").
var onRE = regexp.MustCompile(`^(?:on ([\w.-]+))?(?:,?\s*stopped after ([0-9]+s))?$`)

// placement reads a lab block's marker argument: the node it runs on
// ("" for the host) and how long its last command runs before it is
// stopped (0: it ends by itself).
func placement(reason string) (node string, stop time.Duration, err error) {
	m := onRE.FindStringSubmatch(reason)
	if m == nil {
		return "", 0, fmt.Errorf("lab marker %q: want 'on NODE', 'stopped after Ns', or both", reason)
	}
	if m[2] != "" {
		stop, _ = time.ParseDuration(m[2])
	}
	return m[1], stop, nil
}

// upCluster brings the cluster's lab up, writes the page's files and
// makes the test's /etc: a process that holds a mount namespace of its
// own where /etc is an overlay whose upper directory is the test's.
// Blocks, agents and sshd join that namespace (nsenter), so they share one
// /etc. Then sshd and the setup commands.
func (r *runner) upCluster(t *testing.T) {
	c := r.cluster
	topo := filepath.Join(r.dir, ".cluster.yaml")
	if err := os.WriteFile(topo, []byte(c.Topology), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(r.bin, "lab", "up", topo, "--name", c.Lab).CombinedOutput(); err != nil {
		t.Fatalf("lab up %s: %v\n%s", c.Lab, err, out)
	}
	t.Cleanup(func() { exec.Command(r.bin, "lab", "down", c.Lab).Run() })
	for name, text := range c.Files {
		f := filepath.Join(r.dir, name)
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	etc := t.TempDir()
	upper, work := filepath.Join(etc, "upper"), filepath.Join(etc, "work")
	for _, d := range []string{upper, work} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r.upper = upper
	if c.Token {
		if err := os.Mkdir(filepath.Join(upper, "interlink"), 0o700); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("sh", "-c", "head -c 32 /dev/urandom | base64 > "+filepath.Join(upper, "interlink/token")+" && chmod 600 "+filepath.Join(upper, "interlink/token")).CombinedOutput(); err != nil {
			t.Fatalf("token: %v %s", err, out)
		}
	}
	hold := exec.Command("unshare", "--mount", "--propagation", "private", "sh", "-c",
		fmt.Sprintf("mount -t overlay overlay -o lowerdir=/etc,upperdir=%s,workdir=%s /etc && echo up && exec sleep 100000", upper, work))
	hold.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	pipe, _ := hold.StdoutPipe()
	if err := hold.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hold.Process.Kill(); hold.Wait() })
	buf := make([]byte, 3)
	if n, _ := pipe.Read(buf); string(buf[:n]) != "up\n" {
		t.Fatalf("the test's /etc: the overlay did not mount")
	}
	r.holder = hold.Process.Pid
	if c.SSH != nil {
		r.upSSH(t)
	}
	for _, cmd := range c.Setup {
		if out, code := bash(t, r.bin, r.dir, r.rename(cmd)); code != 0 {
			t.Fatalf("setup %s: exit %d\n%s", cmd, code, out)
		}
	}
}

// onNode returns the command line that runs file (a script in the test's
// directory) in node of the cluster's lab, in the test's /etc.
func (r *runner) onNode(node, file string) string {
	env := ""
	if r.home != "" {
		env = "HOME=" + r.home + " "
	}
	return fmt.Sprintf(env+"XDG_DATA_HOME=%s/.data nsenter --mount=/proc/%d/ns/mnt -- sh -c 'cd %s && exec %s lab exec %s %s -- bash %s'",
		r.dir, r.holder, r.dir, r.bin, r.cluster.Lab, node, file)
}

// startAgents starts the cluster's agents, as the packaged unit would,
// once the page's token exists; they stop with the test (lab down stops
// what runs in the nodes; their PIDs are killed first).
func (r *runner) startAgents(t *testing.T) {
	if r.agentsUp || len(r.cluster.Agents) == 0 {
		return
	}
	if _, err := os.Stat(filepath.Join(r.upper, "interlink/token")); err != nil {
		return
	}
	r.agentsUp = true
	var logs []string
	for _, node := range r.cluster.Agents {
		log := filepath.Join(r.dir, ".agent-"+node+".log")
		logs = append(logs, log)
		r.daemon(t, node, "exec interlink agent --listen 0.0.0.0 --token-file /etc/interlink/token >"+log+" 2>&1\n")
	}
	for _, log := range logs {
		waitFor(t, log, "listening on")
	}
}

// waitFor waits until the daemon whose output goes to log says ready.
func waitFor(t *testing.T, log, ready string) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(log)
		switch {
		case strings.Contains(string(b), ready):
			return
		case time.Now().After(deadline):
			t.Fatalf("the cluster's daemon (%s) did not say %q within 30s:\n%s", log, ready, b)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
