package labuptest

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// TestNoSSHAgentEnv: the environment for interlink cluster under test
// keeps everything but the ssh-agent's socket.
func TestNoSSHAgentEnv(t *testing.T) {
	t.Setenv("SSH_AUTH_SOCK", "/tmp/agent.sock")
	t.Setenv("INTERLINK_TEST_KEEP", "1")
	env := NoSSHAgentEnv()
	for _, e := range env {
		if strings.HasPrefix(e, "SSH_AUTH_SOCK=") {
			t.Errorf("%s left in", e)
		}
	}
	if !slices.Contains(env, "INTERLINK_TEST_KEEP=1") || len(env) != len(os.Environ())-1 {
		t.Errorf("%d of %d variables kept, want all but SSH_AUTH_SOCK", len(env), len(os.Environ()))
	}
}

// TestNeedSSHD fails exactly when sshd is not installed, naming the
// install command.
func TestNeedSSHD(t *testing.T) {
	_, statErr := os.Stat(SSHDBinary)
	err := NeedSSHD()
	if (err == nil) != (statErr == nil) {
		t.Errorf("NeedSSHD = %v, stat of %s: %v", err, SSHDBinary, statErr)
	}
	if err != nil && !strings.Contains(err.Error(), "apt-get install openssh-server") {
		t.Errorf("%v does not say how to install it", err)
	}
}
