//go:build linux

package labtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/interlink/interlink/internal/labuptest"
)

// SSH is the SSH a page's cluster runs: OpenSSH's sshd on each node, the
// page's account on it, made in the test's /etc, and on the reader's side
// a key (~/.ssh/id_ed25519) and known_hosts (~/.ssh/known_hosts) in a home
// of the test's own.
type SSH struct {
	User  string            // the account the page logs in as (an inventory's ansible_user)
	Nodes map[string]string // node -> the address its sshd listens on
}

// sshUID is the page account's user and group id in the test's /etc
// (Oracle's usual oracle:oinstall).
const sshUID = 54321

// upSSH makes the account, the keys and known_hosts, and starts sshd on
// the nodes (stopped by PID when the test ends, and by lab down).
func (r *runner) upSSH(t *testing.T) {
	s := r.cluster.SSH
	if _, err := os.Stat(labuptest.SSHDBinary); err != nil {
		t.Fatalf("the cluster's nodes run OpenSSH's sshd: %v; install it: apt-get install openssh-server", err)
	}
	// sshd's privilege separation directory (the one openssh-server's
	// unit makes), left in place: tests that run at once share it, and
	// sshd needs it for every connection
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
		t.Fatal(err)
	}
	// the account's home, its authorized_keys and its sessions' TMPDIR,
	// where it can reach them (the test's directory is root's alone)
	user, err := os.MkdirTemp("", "td-"+s.User+"-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(user) })
	hostKey, key := labuptest.NewKey(t), labuptest.NewKey(t)
	r.home = filepath.Join(r.dir, ".home")
	var known strings.Builder
	for _, addr := range s.Nodes {
		known.WriteString(addr + " " + hostKey.Authorized() + "\n")
	}
	files := []struct {
		path, data string
		mode       os.FileMode
	}{
		{filepath.Join(r.home, ".ssh/id_ed25519"), string(key.Private), 0o600},
		{filepath.Join(r.home, ".ssh/known_hosts"), known.String(), 0o644},
		{filepath.Join(r.dir, ".sshd/host_key"), string(hostKey.Private), 0o600},
		{filepath.Join(user, "authorized_keys"), key.Authorized() + "\n", 0o644},
	}
	for _, f := range files {
		if err := os.MkdirAll(filepath.Dir(f.path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f.path, []byte(f.data), f.mode); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{user, filepath.Join(user, "tmp")} {
		os.MkdirAll(d, 0o755)
		if err := os.Chown(d, sshUID, sshUID); err != nil {
			t.Fatal(err)
		}
	}
	add := fmt.Sprintf("echo '%s:x:%d:%d:%s:%s:/bin/sh' >> /etc/passwd && echo 'oinstall:x:%d:' >> /etc/group",
		s.User, sshUID, sshUID, s.User, user, sshUID)
	if out, err := exec.Command("nsenter", fmt.Sprintf("--mount=/proc/%d/ns/mnt", r.holder), "--", "sh", "-c", add).CombinedOutput(); err != nil {
		t.Fatalf("the account %s in the test's /etc: %v %s", s.User, err, out)
	}
	for node, addr := range s.Nodes {
		conf := filepath.Join(r.dir, ".sshd", node+".conf")
		text := fmt.Sprintf("ListenAddress %s:22\nHostKey %s\nAuthorizedKeysFile %s\nPidFile none\nUsePAM no\nStrictModes no\n"+
			"PasswordAuthentication no\nKbdInteractiveAuthentication no\nMaxStartups 64\nSetEnv TMPDIR=%s\n",
			addr, filepath.Join(r.dir, ".sshd/host_key"), filepath.Join(user, "authorized_keys"), filepath.Join(user, "tmp"))
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		log := filepath.Join(r.dir, ".sshd", node+".log")
		r.daemon(t, node, fmt.Sprintf("exec %s -D -e -f %s >%s 2>&1\n", labuptest.SSHDBinary, conf, log))
		waitFor(t, log, "Server listening")
	}
}

// daemon starts script in node, in the test's /etc, stopped by PID when
// the test ends (and with what runs in the node by lab down).
func (r *runner) daemon(t *testing.T, node, script string) {
	cmd := exec.Command("sh", "-c", r.onNode(node, r.script(t, script)))
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(r.bin)+":"+os.Getenv("PATH"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
}
