package guest

import (
	"fmt"
	"net/netip"
	"strings"
)

// Config is what a guest is told about itself, in its initramfs as
// ConfigPath: its links (found by MAC address), routes, forwarding and
// the services it runs, and the nonce its kernel's command line must
// carry.
type Config struct {
	Lab  string `json:"lab"`
	Node string `json:"node"`
	// Nonce is the per-boot secret the host put on the guest kernel's
	// command line (NonceParam=Nonce) and recorded here: Run refuses to
	// start where /proc/cmdline does not carry it (on a host).
	Nonce   string  `json:"nonce"`
	Links   []Link  `json:"links"`
	Routes  []Route `json:"routes,omitempty"`
	Forward bool    `json:"forward,omitempty"`
	// AgentPort, when not 0, runs `interlink agent` on every address at
	// that port with AgentToken (the token file's text).
	AgentPort  int    `json:"agent_port,omitempty"`
	AgentToken string `json:"agent_token,omitempty"`
	// SSHD, when not nil, runs OpenSSH's sshd on port 22.
	SSHD *SSHD `json:"sshd,omitempty"`
}

// Link is one of the guest's network interfaces.
type Link struct {
	Name      string         `json:"name"`
	MAC       string         `json:"mac"`
	MTU       int            `json:"mtu"`
	Addresses []netip.Prefix `json:"addresses,omitempty"`
}

// Route is a static route in the guest.
type Route struct {
	To  netip.Prefix `json:"to"`
	Via netip.Addr   `json:"via"`
}

// SSHD is the sshd a guest runs on port 22: its host key (an OpenSSH
// private key file) and the authorized_keys lines for root. Files is the
// directory cache.DebianSSHD keeps sshd and what it needs in (host side
// only), copied into the initramfs at the same paths.
type SSHD struct {
	HostKey    string `json:"host_key"`
	Authorized string `json:"authorized"`
	Files      string `json:"-"`
}

// Paths inside the guest.
const (
	ConfigPath = "/etc/interlink/guest.json"
	Binary     = "/bin/interlink"
	// ChannelDevice is the serial port the guest serves commands (and
	// queries) on; ttyS0 is the console.
	ChannelDevice = "/dev/ttyS1"
	// StatusDevice is the serial port the guest serves only queries on,
	// so that lab status is answered while a command holds ChannelDevice.
	StatusDevice = "/dev/ttyS2"
	// SSHDPath is OpenSSH's server, where the tree cache.DebianSSHD keeps
	// (a Debian tree) has it.
	SSHDPath = "/usr/sbin/sshd"
)

// ReadyLine is what the guest prints on its console when its links are
// configured, its agent answers and it serves commands.
const ReadyLine = "interlink-guest: ready"

// StatusLine is what the guest prints on its console, before ReadyLine,
// when it serves status queries on StatusDevice. A guest that cannot open
// it (its kernel has fewer serial ports) says why instead, and serves
// queries on ChannelDevice only, as it always does.
const StatusLine = "interlink-guest: status queries on " + StatusDevice

// NonceParam is the kernel command-line parameter that carries the boot's
// nonce (NonceParam=HEX).
const NonceParam = "interlink.guest"

// ErrNotGuest is what Run returns where it is not a VM node's guest: the
// kernel's command line lacks the nonce its configuration names.
var ErrNotGuest = fmt.Errorf("lab guest: not a VM node's guest (no matching %s= nonce on the kernel command line): it runs only as the guest side of the VMs lab up boots, and changed nothing", NonceParam)

// CheckNonce reports whether the kernel command line cmdline carries
// NonceParam=nonce as one of its words; an empty nonce never matches.
func CheckNonce(cmdline, nonce string) error {
	if nonce == "" {
		return ErrNotGuest
	}
	for _, w := range strings.Fields(cmdline) {
		if w == NonceParam+"="+nonce {
			return nil
		}
	}
	return ErrNotGuest
}
