package vm

import (
	"bufio"
	"debug/elf"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
)

// GuestConfig is what a guest is told about itself, in its initramfs as
// /etc/interlink/guest.json: its links (found by MAC address), routes,
// forwarding and the agent it runs.
type GuestConfig struct {
	Lab     string       `json:"lab"`
	Node    string       `json:"node"`
	Links   []GuestLink  `json:"links"`
	Routes  []GuestRoute `json:"routes,omitempty"`
	Forward bool         `json:"forward,omitempty"`
	// AgentPort, when not 0, runs `interlink agent` on every address at
	// that port with AgentToken (the token file's text).
	AgentPort  int    `json:"agent_port,omitempty"`
	AgentToken string `json:"agent_token,omitempty"`
	// SSHD, when not nil, runs OpenSSH's sshd on port 22.
	SSHD *GuestSSHD `json:"sshd,omitempty"`
}

// GuestLink is one of the guest's network interfaces.
type GuestLink struct {
	Name      string         `json:"name"`
	MAC       string         `json:"mac"`
	MTU       int            `json:"mtu"`
	Addresses []netip.Prefix `json:"addresses,omitempty"`
}

// GuestRoute is a static route in the guest.
type GuestRoute struct {
	To  netip.Prefix `json:"to"`
	Via netip.Addr   `json:"via"`
}

// Paths inside the guest.
const (
	guestConfigPath = "/etc/interlink/guest.json"
	guestBinary     = "/bin/interlink"
	// ChannelDevice is the serial port the guest serves commands (and
	// queries) on; ttyS0 is the console.
	ChannelDevice = "/dev/ttyS1"
	// StatusDevice is the serial port the guest serves only queries on,
	// so that lab status is answered while a command holds ChannelDevice.
	StatusDevice = "/dev/ttyS2"
)

// Busybox is the statically linked busybox the initramfs is made of
// (Debian's busybox-static).
var Busybox = "/bin/busybox"

// checkStatic refuses a dynamically linked program: the initramfs has no
// shared libraries.
func checkStatic(path, pkg string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("vm: %s: %w (install %s)", path, err, pkg)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("vm: %s is dynamically linked; the guest needs a static one (install %s)", path, pkg)
		}
	}
	return nil
}

// WriteInitramfs writes the guest's initramfs to path: busybox, the
// interlink binary bin, k's modules, the init script and cfg.
func WriteInitramfs(path string, k *Kernel, bin string, cfg *GuestConfig) error {
	if err := checkStatic(Busybox, "busybox-static"); err != nil {
		return err
	}
	if err := checkStatic(bin, "a CGO_ENABLED=0 build of interlink"); err != nil {
		return err
	}
	conf, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return fmt.Errorf("vm: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("vm: initramfs: %w", err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	c := &cpioWriter{w: bw}
	for _, d := range []string{"bin", "sbin", "usr", "usr/bin", "usr/sbin", "lib", "lib/modules",
		"etc", "etc/interlink", "proc", "sys", "dev", "tmp", "run", "root", "var", "var/tmp"} {
		c.entry(d, modeDir|0o755, nil)
	}
	var mods []string
	for _, m := range k.Modules {
		name := modName(filepath.Base(m)) + ".ko"
		data, err := readModule(m)
		if err != nil {
			f.Close()
			return fmt.Errorf("vm: initramfs: %w", err)
		}
		c.entry("lib/modules/"+name, modeFile|0o644, data)
		mods = append(mods, "/lib/modules/"+name)
	}
	if err := c.file("bin/busybox", Busybox, 0o755); err != nil {
		f.Close()
		return err
	}
	if err := c.file(strings.TrimPrefix(guestBinary, "/"), bin, 0o755); err != nil {
		f.Close()
		return err
	}
	if cfg.SSHD != nil {
		if err := c.writeSSHD(cfg.SSHD); err != nil {
			f.Close()
			return err
		}
	}
	c.entry("bin/sh", modeLink|0o777, []byte("busybox"))
	c.entry("init", modeFile|0o755, []byte(initScript(mods)))
	c.entry(strings.TrimPrefix(guestConfigPath, "/"), modeFile|0o644, conf)
	c.entry("etc/hostname", modeFile|0o644, []byte(cfg.Node+"\n"))
	err = c.close()
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("vm: initramfs %s: %w", path, err)
	}
	return nil
}

func (c *cpioWriter) file(name, from string, mode int) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return fmt.Errorf("vm: initramfs: %w", err)
	}
	c.entry(name, modeFile|mode, data)
	return nil
}

// initScript is the guest's /init: mounts, modules in order, then the
// guest side of interlink; the guest powers off when that ends.
func initScript(modules []string) string {
	var b strings.Builder
	b.WriteString(`#!/bin/busybox sh
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin HOME=/root
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
hostname -F /etc/hostname
echo "interlink-guest: init at $(cut -d' ' -f1 /proc/uptime) s"
`)
	for _, m := range modules {
		fmt.Fprintf(&b, "insmod %s || echo 'interlink-guest: insmod %s failed'\n", m, filepath.Base(m))
	}
	b.WriteString("echo \"interlink-guest: modules loaded at $(cut -d' ' -f1 /proc/uptime) s\"\n")
	fmt.Fprintf(&b, "cd /root\n%s lab guest %s\necho \"interlink-guest: exit $?\"\npoweroff -f\n", guestBinary, guestConfigPath)
	return b.String()
}
