package vm

import (
	"bufio"
	"debug/elf"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/interlink/interlink/internal/vm/cache"
	"github.com/interlink/interlink/internal/vm/guest"
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
func WriteInitramfs(path string, k *cache.Kernel, bin string, cfg *guest.Config) error {
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
		name := cache.ModName(filepath.Base(m)) + ".ko"
		data, err := cache.ReadModule(m)
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
	if err := c.file(strings.TrimPrefix(guest.Binary, "/"), bin, 0o755); err != nil {
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
	c.entry(strings.TrimPrefix(guest.ConfigPath, "/"), modeFile|0o644, conf)
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
	fmt.Fprintf(&b, "cd /root\n%s lab guest %s\necho \"interlink-guest: exit $?\"\npoweroff -f\n", guest.Binary, guest.ConfigPath)
	return b.String()
}
