package lab

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/crypto/ssh"
)

// A lab whose VM nodes run sshd keeps, in its directory, the key its
// users log in with (root, in every guest) and the guests' host keys as
// a known_hosts file, so `ssh` and `interlink cluster` check them.

// SSHIdentityFile is the private key that logs in as root to the lab's VM
// nodes with an sshd service.
func SSHIdentityFile(lab string) string { return filepath.Join(labDir(lab), "id_ed25519") }

// SSHKnownHostsFile lists the host keys of the lab's VM nodes, by address.
func SSHKnownHostsFile(lab string) string { return filepath.Join(labDir(lab), "known_hosts") }

// newSSHKey returns an ed25519 key pair: the OpenSSH private key file and
// the public key's authorized_keys line.
func newSSHKey() (private []byte, public string, err error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, "", err
	}
	blk, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		return nil, "", err
	}
	sp, err := ssh.NewPublicKey(pub)
	if err != nil {
		return nil, "", err
	}
	return pem.EncodeToMemory(blk), strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sp))), nil
}

// sshKeys makes the lab's identity (once) and a host key for node, and
// adds the node's addresses with its host key to the known_hosts file. It
// returns the host key file and the identity's authorized_keys line.
func sshKeys(lab string, n *NodeSpec) (hostKey, authorized string, err error) {
	id := SSHIdentityFile(lab)
	if _, serr := os.Stat(id + ".pub"); serr != nil {
		priv, pub, err := newSSHKey()
		if err != nil {
			return "", "", fmt.Errorf("ssh key: %w", err)
		}
		if err := os.WriteFile(id, priv, 0o600); err != nil {
			return "", "", err
		}
		if err := os.WriteFile(id+".pub", []byte(pub+"\n"), 0o644); err != nil {
			return "", "", err
		}
	}
	pub, err := os.ReadFile(id + ".pub")
	if err != nil {
		return "", "", err
	}
	hpriv, hpub, err := newSSHKey()
	if err != nil {
		return "", "", fmt.Errorf("host key: %w", err)
	}
	var hosts []string
	for _, a := range n.Addresses() {
		hosts = append(hosts, a.Addr().String())
	}
	f, err := os.OpenFile(SSHKnownHostsFile(lab), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return "", "", err
	}
	_, err = fmt.Fprintf(f, "%s %s\n", strings.Join(hosts, ","), hpub)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return string(hpriv), strings.TrimSpace(string(pub)), err
}
