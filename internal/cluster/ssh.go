package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/interlink/interlink/internal/readfile"
	"github.com/kevinburke/ssh_config"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/crypto/ssh/knownhosts"
)

// Target is a Host resolved for SSH: where to connect, as whom, with which
// keys, checked against which known_hosts files.
type Target struct {
	Host
	HostName   string   `json:"hostname"` // what is dialed and looked up in known_hosts
	KnownHosts []string `json:"-"`
	Identities []string `json:"-"`
}

// Addr is HostName:Port.
func (t Target) Addr() string { return net.JoinHostPort(t.HostName, strconv.Itoa(t.Port)) }

// SSHConfig is the part of an ssh_config(5) file interlink uses (HostName,
// User, Port, IdentityFile, UserKnownHostsFile). The zero value is an empty
// configuration.
type SSHConfig struct{ cfg *ssh_config.Config }

// LoadSSHConfig reads an ssh_config(5) file; path "" reads ~/.ssh/config
// when it exists, "none" reads nothing (as ssh -F none).
func LoadSSHConfig(path string) (SSHConfig, error) {
	explicit := path != ""
	if path == "none" {
		return SSHConfig{}, nil
	}
	if path == "" {
		path = filepath.Join(home(), ".ssh", "config")
	}
	f, err := readfile.Open(path) // never blocks on a FIFO
	if err != nil {
		if !explicit && errors.Is(err, os.ErrNotExist) {
			return SSHConfig{}, nil
		}
		return SSHConfig{}, fmt.Errorf("ssh config: %w", err)
	}
	defer f.Close()
	c, err := ssh_config.Decode(f)
	if err != nil {
		return SSHConfig{}, fmt.Errorf("ssh config %s: %v", path, err)
	}
	return SSHConfig{c}, nil
}

func (s SSHConfig) get(alias, key string) string {
	if s.cfg == nil {
		return ""
	}
	v, _ := s.cfg.Get(alias, key)
	return v
}

func (s SSHConfig) getAll(alias, key string) []string {
	if s.cfg == nil {
		return nil
	}
	v, _ := s.cfg.GetAll(alias, key)
	return v
}

func home() string {
	if h, err := os.UserHomeDir(); err == nil {
		return h
	}
	return "/"
}

// Resolve fills in a host's SSH settings. Precedence, most specific first:
// the inventory's host variables, then the flags (opt.User, opt.Identities,
// opt.KnownHosts), then ~/.ssh/config for the host, then ssh's defaults
// (port 22, the local user, ~/.ssh/id_{ed25519,ecdsa,rsa}, ~/.ssh/known_hosts
// and /etc/ssh/ssh_known_hosts). As ssh does with Ansible's ansible_host,
// the config is looked up by the address when the inventory gives one.
func Resolve(h Host, cfg SSHConfig, opt Options) Target {
	alias := h.Address
	if alias == "" {
		alias = h.Name
	}
	t := Target{Host: h, HostName: alias}
	if hn := cfg.get(alias, "HostName"); hn != "" {
		t.HostName = strings.ReplaceAll(hn, "%h", alias)
	}
	if t.User == "" {
		t.User = opt.User
	}
	if t.User == "" {
		t.User = cfg.get(alias, "User")
	}
	if t.User == "" {
		if u, err := user.Current(); err == nil {
			t.User = u.Username
		}
	}
	if t.Port == 0 {
		if p, err := strconv.Atoi(cfg.get(alias, "Port")); err == nil && p > 0 && p < 65536 {
			t.Port = p
		}
	}
	if t.Port == 0 {
		t.Port = 22
	}
	expand := func(p string) string {
		p = strings.NewReplacer("%d", home(), "%u", localUser(), "%h", t.HostName, "%r", t.User, "%%", "%").Replace(p)
		if rest, ok := strings.CutPrefix(p, "~/"); ok {
			p = filepath.Join(home(), rest)
		}
		return p
	}
	switch {
	case h.Identity != "":
		t.Identities = []string{expand(h.Identity)}
	case len(opt.Identities) > 0:
		t.Identities = opt.Identities
	default:
		for _, p := range cfg.getAll(alias, "IdentityFile") {
			t.Identities = append(t.Identities, expand(p))
		}
		if len(t.Identities) == 0 {
			for _, k := range []string{"id_ed25519", "id_ecdsa", "id_rsa"} {
				t.Identities = append(t.Identities, filepath.Join(home(), ".ssh", k))
			}
		}
	}
	switch {
	case len(opt.KnownHosts) > 0:
		t.KnownHosts = opt.KnownHosts
	default:
		for _, f := range strings.Fields(cfg.get(alias, "UserKnownHostsFile")) {
			t.KnownHosts = append(t.KnownHosts, expand(f))
		}
		if len(t.KnownHosts) == 0 {
			t.KnownHosts = []string{filepath.Join(home(), ".ssh", "known_hosts")}
		}
		t.KnownHosts = append(t.KnownHosts, "/etc/ssh/ssh_known_hosts")
	}
	return t
}

func localUser() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return ""
}

// Causes of a node that could not be reached or did not get through
// (NodeResult.Cause).
const (
	CauseRefused  = "refused"  // nothing listens on the SSH port
	CauseTimeout  = "timeout"  // no answer in time
	CauseAuth     = "auth"     // no key was accepted
	CauseHostKey  = "host key" // unknown or changed host key: refused by us
	CauseResolve  = "resolve"  // the name does not resolve
	CauseNetwork  = "network"  // no route, network unreachable, reset
	CausePlatform = "platform" // the node runs another OS or architecture
	CauseRemote   = "remote"   // a step on the node failed
	// CauseStall: a transfer to or from the node stood still (Options.Stall)
	// and the node was cut off; NodeResult.Stall has the evidence.
	CauseStall = "stall"
)

// hostKeyError is a host key this side refused.
type hostKeyError struct{ msg string }

func (e *hostKeyError) Error() string { return e.msg }

// reachError is a node that could not be reached, with its class.
type reachError struct {
	cause string
	err   error
}

func (e *reachError) Error() string { return e.err.Error() }
func (e *reachError) Unwrap() error { return e.err }

// classify names the class of an error connecting to a node.
func classify(err error) string {
	var hk *hostKeyError
	var dns *net.DNSError
	var ne net.Error
	msg := err.Error()
	switch {
	case errors.As(err, &hk):
		return CauseHostKey
	case errors.As(err, &dns):
		return CauseResolve
	case strings.Contains(msg, "no common algorithm for host key"):
		// The node offers none of the key types known_hosts holds for it.
		return CauseHostKey
	case strings.Contains(msg, "connection refused"):
		return CauseRefused
	case errors.As(err, &ne) && ne.Timeout(), errors.Is(err, context.DeadlineExceeded):
		return CauseTimeout
	case strings.Contains(msg, "unable to authenticate"), strings.Contains(msg, "no supported methods remain"):
		return CauseAuth
	}
	return CauseNetwork
}

// hostKeyCallback checks host keys against the known_hosts files and
// returns the key algorithms those files hold for addr, so that the server
// is asked for a key type we can check (otherwise a host known by its
// ecdsa key that offers ed25519 first would look like a changed key).
func hostKeyCallback(files []string, addr string) (ssh.HostKeyCallback, []string, error) {
	var exist []string
	for _, f := range files {
		if _, err := os.Stat(f); err == nil {
			exist = append(exist, f)
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, nil, fmt.Errorf("known_hosts %s: %v", f, err)
		}
	}
	var db ssh.HostKeyCallback
	if len(exist) > 0 {
		var err error
		if db, err = knownhosts.New(exist...); err != nil {
			return nil, nil, fmt.Errorf("known_hosts: %v", err)
		}
	}
	where := strings.Join(files, ", ")
	if len(exist) == 0 {
		where += " (none exists)"
	}
	cb := func(hostname string, remote net.Addr, key ssh.PublicKey) error {
		fp := key.Type() + " " + ssh.FingerprintSHA256(key)
		if db == nil {
			return &hostKeyError{fmt.Sprintf("host key %s is not in known_hosts (%s): refused; check it against the node's /etc/ssh/ssh_host_*_key.pub and add it (e.g. log in once with ssh)", fp, where)}
		}
		err := db(hostname, remote, key)
		var ke *knownhosts.KeyError
		var re *knownhosts.RevokedError
		switch {
		case err == nil:
			return nil
		case errors.As(err, &re):
			return &hostKeyError{fmt.Sprintf("host key %s is marked revoked in %s:%d: refused", fp, re.Revoked.Filename, re.Revoked.Line)}
		case errors.As(err, &ke) && len(ke.Want) == 0:
			return &hostKeyError{fmt.Sprintf("host key %s is not in known_hosts (%s): refused; check it against the node's /etc/ssh/ssh_host_*_key.pub and add it (e.g. log in once with ssh)", fp, where)}
		case errors.As(err, &ke):
			w := ke.Want[0]
			return &hostKeyError{fmt.Sprintf("host key CHANGED: the node offered %s, %s:%d holds %s %s: refused (reinstalled node, or someone in between; fix known_hosts only after checking)",
				fp, w.Filename, w.Line, w.Key.Type(), ssh.FingerprintSHA256(w.Key))}
		}
		return &hostKeyError{fmt.Sprintf("host key %s: %v", fp, err)}
	}
	return cb, keyAlgorithms(db, addr), nil
}

// keyAlgorithms asks the known_hosts database which key types it holds for
// addr, by checking a key that cannot be there.
func keyAlgorithms(db ssh.HostKeyCallback, addr string) []string {
	if db == nil {
		return nil
	}
	err := db(addr, &net.TCPAddr{IP: net.IPv4zero}, probeKey{})
	var ke *knownhosts.KeyError
	if !errors.As(err, &ke) {
		return nil
	}
	var algs []string
	seen := map[string]bool{}
	for _, k := range ke.Want {
		t := k.Key.Type()
		if seen[t] {
			continue
		}
		seen[t] = true
		if t == ssh.KeyAlgoRSA {
			algs = append(algs, ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA)
			continue
		}
		algs = append(algs, t)
	}
	return algs
}

// probeKey is a public key of a type no known_hosts line holds.
type probeKey struct{}

func (probeKey) Type() string                        { return "interlink-probe" }
func (probeKey) Marshal() []byte                     { return []byte("interlink-probe") }
func (probeKey) Verify([]byte, *ssh.Signature) error { return errors.New("probe key") }

// signers returns the keys to offer: the identity files that exist and are
// not encrypted, then the ssh-agent's. Notes say what was skipped and why.
func signers(ids []string) (out []ssh.Signer, notes []string, closeAgent func()) {
	closeAgent = func() {}
	for _, p := range ids {
		b, err := os.ReadFile(p)
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				notes = append(notes, fmt.Sprintf("identity %s: %v", p, err))
			}
			continue
		}
		s, err := ssh.ParsePrivateKey(b)
		var pm *ssh.PassphraseMissingError
		switch {
		case errors.As(err, &pm):
			notes = append(notes, fmt.Sprintf("identity %s is encrypted: add it to ssh-agent (ssh-add %s)", p, p))
			continue
		case err != nil:
			notes = append(notes, fmt.Sprintf("identity %s: %v", p, err))
			continue
		}
		out = append(out, s)
	}
	if sock := os.Getenv("SSH_AUTH_SOCK"); sock != "" {
		if c, err := net.DialTimeout("unix", sock, 2*time.Second); err == nil {
			c.SetDeadline(time.Now().Add(2 * time.Second)) // an agent that hangs
			if ss, err := agent.NewClient(c).Signers(); err == nil {
				out = append(out, ss...)
			}
			c.SetDeadline(time.Time{})
			closeAgent = func() { c.Close() }
		} else {
			notes = append(notes, fmt.Sprintf("ssh-agent %s: %v", sock, err))
		}
	}
	return out, notes, closeAgent
}

// dialSSH connects and authenticates to t, on a TCP connection with
// keepalives and a TCP user timeout longer than stall (see link). Errors
// are *reachError.
func dialSSH(ctx context.Context, t Target, keys []ssh.Signer, timeout, stall time.Duration) (*link, error) {
	addr := t.Addr()
	cb, algs, err := hostKeyCallback(t.KnownHosts, addr)
	if err != nil {
		return nil, &reachError{CauseHostKey, err}
	}
	cfg := &ssh.ClientConfig{
		User:              t.User,
		Auth:              []ssh.AuthMethod{ssh.PublicKeys(keys...)},
		HostKeyCallback:   cb,
		HostKeyAlgorithms: algs,
		Timeout:           timeout,
	}
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := dialer(stall).DialContext(dctx, "tcp", addr)
	if err != nil {
		return nil, &reachError{classify(err), err}
	}
	tcp := conn.(*net.TCPConn)
	// The handshake obeys the same deadline.
	stop := context.AfterFunc(dctx, func() { conn.SetDeadline(time.Now()) })
	l, err := newLink(tcp, addr, cfg)
	stop()
	if err != nil {
		conn.Close()
		if dctx.Err() != nil && ctx.Err() == nil {
			err = fmt.Errorf("ssh handshake: no answer within %s", timeout)
			return nil, &reachError{CauseTimeout, err}
		}
		cause := classify(err)
		if cause == CauseAuth && len(keys) == 0 {
			err = fmt.Errorf("%w: no key to offer (no ssh-agent in SSH_AUTH_SOCK, no readable identity file; see --identity)", err)
		}
		return nil, &reachError{cause, err}
	}
	conn.SetDeadline(time.Time{})
	return l, nil
}
