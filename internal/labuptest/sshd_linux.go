package labuptest

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/interlink/interlink/internal/lab"
)

// SSHDBinary is OpenSSH's server, which SSHD runs.
const SSHDBinary = "/usr/sbin/sshd"

// NeedSSHD is a check for Main in the packages whose tests run sshd in lab
// nodes: without it they fail at once, with the install command.
func NeedSSHD() error {
	if _, err := os.Stat(SSHDBinary); err != nil {
		return fmt.Errorf("they run OpenSSH's sshd in lab nodes: %v; install it: apt-get install openssh-server", err)
	}
	return nil
}

// NoSSHAgentEnv is this process's environment without SSH_AUTH_SOCK, for
// an interlink cluster under test: it then offers only the keys the test
// names, never those of the ssh-agent of whoever runs the tests.
func NoSSHAgentEnv() []string {
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "SSH_AUTH_SOCK=") {
			env = append(env, e)
		}
	}
	return env
}

// WriteFile writes data to path with mode, failing the test on an error,
// and returns path (to use in the command line it goes into).
func WriteFile(t testing.TB, path, data string, mode os.FileMode) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
	return path
}

// Key is an ed25519 key pair in OpenSSH's file formats.
type Key struct {
	Private []byte // OpenSSH private key file
	Public  ssh.PublicKey
}

// NewKey makes a key pair.
func NewKey(t testing.TB) Key {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	blk, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	sp, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return Key{Private: pem.EncodeToMemory(blk), Public: sp}
}

// Authorized is the key's line in authorized_keys or, after a host name,
// in known_hosts.
func (k Key) Authorized() string {
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(k.Public)))
}

// SSHD runs OpenSSH's sshd in node n, listening on addr:22 with hostKey
// and the authorized keys, its files in a temp dir; it is stopped by PID
// when the test ends. Its sessions get a TMPDIR of their own (returned),
// so what a run leaves there is the test's to find. A machine without
// sshd fails the test with the install command.
func SSHD(t testing.TB, n *lab.Node, addr string, hostKey Key, authorized ...Key) (pid int, tmp string) {
	t.Helper()
	if _, err := os.Stat(SSHDBinary); err != nil {
		t.Fatalf("OpenSSH's sshd runs in the lab nodes: %v; install it: apt-get install openssh-server", err)
	}
	// sshd's privilege-separation directory, removed again if made here.
	if _, err := os.Stat("/run/sshd"); err != nil {
		if err := os.Mkdir("/run/sshd", 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove("/run/sshd") })
	}
	dir := t.TempDir()
	tmp = filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	hk := write("host_key", string(hostKey.Private))
	var ak strings.Builder
	for _, k := range authorized {
		ak.WriteString(k.Authorized() + "\n")
	}
	akf := write("authorized_keys", ak.String())
	conf := write("sshd_config", fmt.Sprintf(`ListenAddress %s:22
HostKey %s
AuthorizedKeysFile %s
PidFile none
UsePAM no
StrictModes no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
AllowTcpForwarding yes
MaxStartups 64
SetEnv TMPDIR=%s
`, addr, hk, akf, tmp))
	_, pid = Daemon(t, n, exec.Command(SSHDBinary, "-D", "-e", "-f", conf), "sshd", "Server listening")
	return pid, tmp
}
